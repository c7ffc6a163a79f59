"""The line of keys at the bottom: what can be pressed now, dimmed when it cannot act.

Textual's `Footer` rebuilds one widget per key whenever the bindings change, which lays out the
whole screen (about 30 ms at 160×48); on a run table every cursor move can change which actions
are possible. This bar is one line of text drawn again in place: the same keys from the same
`Screen.active_bindings`, the same dimming for a binding the screen reports as disabled.

It is drawn for the width it has: keys that do not fit are left out whole (never cut in the
middle), and help and quit always stay, at the end, where an operator finds every other key.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.events import Click
from textual.screen import Screen
from textual.widget import Widget


class KeyBar(Widget):
    """Shown keys of the focused chain; a click presses one."""

    DEFAULT_CSS = """
    KeyBar {
        height: 1;
        width: 1fr;
        dock: bottom;
        background: $footer-background;
        color: $footer-description-foreground;
    }
    KeyBar > .key-bar--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    KeyBar > .key-bar--disabled {
        color: $text-disabled;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-bar--key", "key-bar--disabled"}

    #: Binding ids always shown, last: help lists every key the bar has no room for.
    PINNED: ClassVar[tuple[str, ...]] = ("help", "quit")

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._spans: list[tuple[int, int, str]] = []
        """(start column, end column, key) of each key drawn: what a click presses."""
        self.keys: dict[str, tuple[str, bool]] = {}
        """Key → (description, enabled), as last drawn."""

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        if screen is self.screen:
            self.refresh()  # one line, same size: a repaint, never a layout

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-bar--key")
        disabled_style = self.get_component_rich_style("key-bar--disabled")
        entries: list[tuple[Text, str, str, bool]] = []
        pinned: list[tuple[Text, str, str, bool]] = []
        seen: set[str] = set()
        for _node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            # One entry per action: `?` and F1 both open help, shown once.
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            entry = Text.assemble(
                (
                    f" {self.app.get_key_display(binding)} ",
                    key_style if enabled else disabled_style,
                ),
                (f"{binding.description} ", "" if enabled else disabled_style),
            )
            (pinned if binding.id in self.PINNED else entries).append(
                (entry, binding.key, binding.description, enabled)
            )
        room = self.size.width - sum(entry.cell_len for entry, *_rest in pinned)
        fitting = []
        for item in entries:
            if item[0].cell_len > room:
                break  # the rest in order, or a later, shorter key would look like the next
            fitting.append(item)
            room -= item[0].cell_len
        line = Text(no_wrap=True, overflow="crop", end="")
        spans: list[tuple[int, int, str]] = []
        keys: dict[str, tuple[str, bool]] = {}
        for entry, key, description, enabled in (*fitting, *pinned):
            start = line.cell_len
            line.append_text(entry)
            spans.append((start, line.cell_len, key))
            keys[key] = (description, enabled)
        self._spans, self.keys = spans, keys
        return line

    def on_click(self, event: Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                self.app.simulate_key(key.split(",")[0])
                return
