"""A worker's log on screen: its last lines, kept within a bound, new ones added as they come.

The view holds at most `MAX_LINES` lines; as more arrive the oldest are dropped and counted
(`dropped`), so a worker printing for hours costs the console a fixed amount of memory (the
whole log stays on disk: ``jarvis logs``). Lines are numbered from the first the view was given,
so a search's matches and the line gone to keep their place as lines are dropped in front.

Each line is made inert as it is added (`core.worker_logs.shown_line`: the engine has masked
its secrets already) and drawn as plain `Text`, so nothing in a line is read as markup. While
the view is at its end it follows: new lines scroll into view; scrolling up stops that until
the end is reached again; going to a search's match stops it too (`go_to`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.strip import Strip

from core.service.logs import MAX_LINE_CHARS, LogLine, shown_line
from jarvis_tui.widgets.text_pane import SidewaysPane, scroll_bar

#: Lines the view keeps at most; older ones are dropped (and counted) as new ones arrive.
MAX_LINES = 10_000
#: How far right the view goes: a line is at most `MAX_LINE_CHARS` and its cut marker, every
#: character of which may show as a four-character escape.
MAX_LEFT = 4 * MAX_LINE_CHARS + 40


class LogView(SidewaysPane, can_focus=True):
    """The lines of a log, scrolled by keys and the wheel, following its end."""

    DEFAULT_CSS = """
    LogView {
        height: 1fr;
        overflow: hidden;
    }
    LogView > .log-view--note { color: $text-warning; text-style: italic; }
    LogView > .log-view--match { background: $warning 50%; }
    LogView > .log-view--current { background: $primary 40%; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "log-view--note",
        "log-view--match",
        "log-view--current",
    }

    max_left = MAX_LEFT

    def __init__(
        self,
        *,
        max_lines: int = MAX_LINES,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(id=id)
        self.max_lines = max_lines
        """Lines kept at most."""
        self.lines: deque[tuple[str, bool]] = deque()
        """(shown text, is a note of ours) of each line kept, oldest first."""
        self.dropped = 0
        """Lines dropped from the front to stay within ``max_lines``: the number of the first
        line kept."""
        self.top = 0
        """The first row on screen (an index into ``lines``)."""
        self.left = 0
        """The first column on screen."""
        self.following = True
        """New lines scroll into view (the view is at its end)."""
        self.needle = ""
        """Text highlighted wherever it shows (the search)."""
        self.current: int | None = None
        """The number of the line gone to (a match), or None."""
        self.message: list[Text] = []
        """Shown instead of lines when there are none (why there is no log)."""

    # -- content --------------------------------------------------------------------------------

    def clear(self) -> None:
        """Forget every line (another stream is about to be shown)."""
        self.lines.clear()
        self.dropped = 0
        self.top = 0
        self.left = 0
        self.following = True
        self.current = None
        self.message = []
        self.refresh()

    def show_message(self, lines: list[Text]) -> None:
        """Show ``lines`` (ours, not the log's) while there are no log lines."""
        self.message = lines
        self.refresh()

    def add_lines(self, lines: Iterable[LogLine]) -> None:
        """Add lines at the end, dropping the oldest beyond ``max_lines``."""
        added = 0
        for line in lines:
            self.lines.append((shown_line(line.text), line.note))
            added += 1
        if not added:
            return
        over = len(self.lines) - self.max_lines
        for _ in range(max(0, over)):
            self.lines.popleft()
        if over > 0:
            self.dropped += over
            self.top = max(0, self.top - over)
        if self.following:
            self.top = self.max_top
        self.refresh()

    @property
    def total(self) -> int:
        """Lines seen: those kept and those dropped."""
        return self.dropped + len(self.lines)

    def text_of(self, number: int) -> str | None:
        """The shown text of line ``number`` (None when dropped, or not seen yet)."""
        index = number - self.dropped
        return self.lines[index][0] if 0 <= index < len(self.lines) else None

    def matches(self, needle: str) -> list[int]:
        """The numbers of the lines kept whose shown text holds ``needle``, ignoring case.

        A search of what is shown: a masked secret cannot be found by its value."""
        wanted = needle.casefold()
        if not wanted:
            return []
        return [
            self.dropped + index
            for index, (text, _note) in enumerate(self.lines)
            if wanted in text.casefold()
        ]

    # -- geometry and scrolling -----------------------------------------------------------------

    @property
    def max_top(self) -> int:
        return max(0, len(self.lines) - self.pane_size.height)

    def on_resize(self, event: Resize) -> None:
        self.top = self.max_top if self.following else min(self.top, self.max_top)
        self.refresh()

    def scroll_to_row(self, top: int) -> None:
        top = max(0, min(top, self.max_top))
        self.following = top >= self.max_top
        if top != self.top:
            self.top = top
            self.refresh()

    def go_to(self, number: int, *, above: int = 3) -> None:
        """Mark line ``number`` as the one gone to and bring it into view, holding the view
        there: a match on the last screen, where the view followed, was moved away by the next
        lines the worker wrote. The bottom (G, end) follows again."""
        self.current = number
        self.scroll_to_row(number - self.dropped - above)
        self.following = False
        self.refresh()

    # -- drawing --------------------------------------------------------------------------------

    def _row_text(self, index: int) -> Text:
        text, note = self.lines[index]
        shown = Text(text, end="", no_wrap=True)
        if note:
            shown.stylize(self._style("log-view--note"))
        if self.needle:
            shown.highlight_words(
                [self.needle],
                self.get_component_rich_style("log-view--match"),
                case_sensitive=False,
            )
        return shown

    def _style(self, component: str) -> Style:
        """A component's colour and emphasis without its background."""
        style = self.get_component_rich_style(component)
        return Style(color=style.color, bold=style.bold, italic=style.italic, dim=style.dim)

    def render_line(self, y: int) -> Strip:
        base = self.base_style
        size = self.pane_size
        width = max(0, size.width - 1)
        if not self.lines:
            text = self.message[y] if y < len(self.message) else Text()
            strip = Strip(text.render(self.app.console, end="")).apply_style(base)
            return Strip([*strip.crop_extend(0, width, base), scroll_bar(0, 1, 0, 0, base)])
        index = self.top + y
        bar = scroll_bar(y, size.height, len(self.lines), self.top, base)
        if index >= len(self.lines):
            return Strip([*Strip.blank(width, base), bar], width + 1)
        line_style = base
        if self.current is not None and index == self.current - self.dropped:
            line_style = base + self.get_component_rich_style("log-view--current")
        strip = Strip(self._row_text(index).render(self.app.console, end="")).apply_style(
            line_style
        )
        strip = strip.crop_extend(self.left, self.left + width, line_style)
        return Strip([*strip, bar], width + 1)
