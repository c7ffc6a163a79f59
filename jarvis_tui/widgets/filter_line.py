"""The `/` filter: one line of text typed to narrow the run table.

Not Textual's `Input`: an Input's value change resizes its ``virtual_size`` (a layout reactive),
so each keystroke laid the whole screen out again on top of rebuilding the table, about 25 ms
at 160×48. A filter needs little editing — type, erase a letter, erase a word, clear — and this
line does just that, repainting itself in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget


class FilterLine(Widget, can_focus=True):
    """``/ text▏`` — printable keys type, backspace erases, ctrl+w a word, ctrl+u all."""

    DEFAULT_CSS = """
    FilterLine {
        height: 1;
    }
    """

    @dataclass
    class Submitted(Message):
        filter_line: FilterLine
        value: str

        @property
        def control(self) -> FilterLine:
            """For `@on(..., "#filter")`."""
            return self.filter_line

    def __init__(
        self,
        *,
        on_change: Callable[[str], None],
        placeholder: str = "",
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(id=id)
        self.placeholder = placeholder
        self.on_change = on_change
        """Called with the new text at once, in the keystroke's own handling: the table is
        rebuilt for the same frame as the text, rather than after a message's trip up the DOM
        (each hop waits its turn behind whatever else the loop is doing)."""
        self._value = ""

    @property
    def value(self) -> str:
        return self._value

    @value.setter
    def value(self, value: str) -> None:
        if value != self._value:
            self._value = value
            self.refresh()
            self.on_change(value)

    def render(self) -> Text:
        line = Text("/ ", style="bold", no_wrap=True, overflow="crop", end="")
        if self._value:
            # Keep the end in view: what was typed last is what the operator looks at.
            room = max(1, self.size.width - 4)
            line.append(self._value[-room:])
        if self.has_focus:
            line.append("▏", style="bold")
        if not self._value:
            line.append(self.placeholder, style="dim")
        return line

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_key(self, event: events.Key) -> None:
        handled = True
        if event.key == "backspace":
            self.value = self._value[:-1]
        elif event.key == "ctrl+w":
            self.value = self._value.rstrip().rpartition(" ")[0] + (
                " " if " " in self._value.rstrip() else ""
            )
        elif event.key == "ctrl+u":
            self.value = ""
        elif event.key == "enter":
            self.post_message(self.Submitted(self, self._value))
        elif event.is_printable and event.character:
            self.value = self._value + event.character
        else:
            handled = False
        if handled:
            # Typed text is text: `r` in a filter must never retry a run.
            event.stop()
            event.prevent_default()
