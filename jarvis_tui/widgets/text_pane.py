"""A pane of text lines that scrolls by itself and never asks the screen for a layout.

The side panels change many times a second on a busy fleet. `Static.update` and `RichLog.write`
each make the whole screen lay itself out again (a new text may change a widget's size; a log's
``virtual_size`` is a layout reactive), which cost about 30 ms a time at 160×48 with 10,000
runs. This pane fills whatever space the layout gives it: new content repaints only its own
lines, scrolling is an offset it keeps itself, and a one-column bar on the right shows where the
view is when there is more than fits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import MouseScrollDown, MouseScrollUp, Resize
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

#: Lines moved by one turn of a mouse wheel.
WHEEL_LINES = 3


def _same(a: Text | None, b: Text | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.plain == b.plain and a.spans == b.spans and a.style == b.style


def scroll_bar(y: int, height: int, total: int, top: int, base: Style) -> Segment:
    """Row ``y`` of a one-column scroll bar for ``total`` rows seen ``height`` at a time from
    ``top``: a thumb (┃) where the view is, a dim track (│) elsewhere, blank when all fits."""
    if total <= height or height <= 0:
        return Segment(" ", base)
    size = max(1, height * height // total)
    start = (height - size) * top // max(1, total - height)
    if start <= y < start + size:
        return Segment("┃", base)
    return Segment("│", base + Style(dim=True))


class LinePane(Widget):
    """A line-API widget that works out its own style and size once per paint, not per line."""

    _pass_style: Style | None = None
    _pass_size: Size | None = None

    @property
    def base_style(self) -> Style:
        """The widget's Rich style; `rich_style` walks every ancestor, so a paint caches it."""
        return self._pass_style or self.rich_style

    @property
    def pane_size(self) -> Size:
        """The widget's content size; `size` recomputes the content region on every call
        (5% of the console's main thread while keys were held), so a paint caches it."""
        return self._pass_size or self.size

    def render_lines(self, crop: Region) -> list[Strip]:
        self._pass_style = self.rich_style
        self._pass_size = self.size
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None
            self._pass_size = None


def scroll_bindings(*, page_down: str = "pagedown", end: str = "end,G") -> list[BindingType]:
    """The keys every scrolled pane answers to (`ScrollPane`'s actions): the cursor and page
    keys, and less's and vim's (j k, g G, ctrl+d ctrl+u for half a page). Each has an id, so a
    keymap can change it (``pane.…``)."""
    return [
        Binding("up,k", "scroll_by(-1)", "Up", show=False, id="pane.up"),
        Binding("down,j", "scroll_by(1)", "Down", show=False, id="pane.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="pane.page_up"),
        Binding(page_down, "page(1)", "Page down", show=False, id="pane.page_down"),
        Binding("ctrl+u", "half_page(-1)", "Half a page up", show=False, id="pane.half_up"),
        Binding("ctrl+d", "half_page(1)", "Half a page down", show=False, id="pane.half_down"),
        Binding("home,g", "scroll_home", "Top", show=False, id="pane.top"),
        Binding(end, "scroll_end", "Bottom", show=False, id="pane.bottom"),
    ]


class ScrollPane(LinePane):
    """Rows scrolled by keys and the wheel: a subclass gives `max_top` and may refine
    `scroll_to_row`; the actions and the wheel mean the same in every pane."""

    top = 0
    """The index of the first row on screen."""

    @property
    def max_top(self) -> int:
        raise NotImplementedError  # how many rows the subclass has, less a screenful

    def scroll_to_row(self, top: int) -> None:
        top = max(0, min(top, self.max_top))
        if top != self.top:
            self.top = top
            self.refresh()

    def action_scroll_by(self, rows: int) -> None:
        self.scroll_to_row(self.top + rows)

    def action_page(self, direction: int) -> None:
        self.scroll_to_row(self.top + direction * max(1, self.size.height - 1))

    def action_half_page(self, direction: int) -> None:
        self.scroll_to_row(self.top + direction * max(1, self.size.height // 2))

    def action_scroll_home(self) -> None:
        self.scroll_to_row(0)

    def action_scroll_end(self) -> None:
        self.scroll_to_row(self.max_top)

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        self.scroll_to_row(self.top + WHEEL_LINES)

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        self.scroll_to_row(self.top - WHEEL_LINES)


class SidewaysPane(ScrollPane):
    """A `ScrollPane` whose lines are cut, not wrapped: left and right move along them.

    The keys of the diff and the log views, said once: up, down, the page keys (space pages
    down), home, end, left and right.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *scroll_bindings(page_down="pagedown,space"),
        Binding("left", "side(-1)", "Left", show=False, id="pane.left"),
        Binding("right", "side(1)", "Right", show=False, id="pane.right"),
    ]

    left = 0
    """The first column on screen."""
    #: Columns a left or right key moves.
    side_step = 8
    #: The furthest a pane moves right (a subclass sets it from its longest line).
    max_left = 1000

    def action_side(self, direction: int) -> None:
        left = max(0, min(self.max_left, self.left + direction * self.side_step))
        if left != self.left:
            self.left = left
            self.refresh()


class TextPane(ScrollPane, can_focus=True):
    """Lines of Rich text, wrapped to the width (or cut, with ``wrap=False``), with an offset."""

    DEFAULT_CSS = """
    TextPane {
        height: 1fr;
        overflow: hidden;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = scroll_bindings()

    def __init__(
        self,
        *,
        wrap: bool = True,
        max_lines: int | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.wrap = wrap
        self.max_lines = max_lines
        """Oldest lines are dropped beyond this many (None: no bound)."""
        self.lines: list[Text] = []
        """The content, one entry per logical line (before wrapping)."""
        self.top = 0
        """The index of the first row on screen."""
        self._rows: list[Text] | None = None
        self._rows_width = -1
        self._strips: dict[int, tuple[Style, Strip]] = {}
        """Rows drawn (without the bar's cell) by index, with the style they were drawn with."""

    # -- content --------------------------------------------------------------------------------

    @property
    def text(self) -> Text:
        """The content as one text (its ``plain`` is what an operator reads)."""
        return Text("\n").join(self.lines)

    def set_text(self, text: Text) -> bool:
        """Show ``text`` (split at newlines). False, and nothing redrawn, when it is unchanged."""
        lines: list[Text] = list(text.split("\n", allow_blank=True)) if text.plain else []
        if len(lines) == len(self.lines) and all(
            _same(new, old) for new, old in zip(lines, self.lines, strict=True)
        ):
            return False
        self.set_lines(lines)
        return True

    def set_lines(self, lines: Iterable[Text]) -> None:
        """Replace the content, keeping the offset where it still fits."""
        drawn = self._on_screen() if self._rows is not None and self.is_mounted else None
        self.lines = list(lines)
        self._trim()
        self._invalidate()
        self.top = min(self.top, self.max_top)
        if drawn is None:
            self.refresh()
            return
        # Only the rows that now read differently are drawn again: the next run's panel
        # often shares its blank tail, headings and layout with the last one's.
        now = self._on_screen()
        width = self.size.width
        for y, (old, new) in enumerate(zip(drawn[0], now[0], strict=True)):
            if not _same(old, new):
                self.refresh(Region(0, y, width, 1))
        if drawn[1] != now[1]:
            self.refresh(Region(width - 1, 0, 1, self.size.height))  # the bar moved

    def _on_screen(self) -> tuple[list[Text | None], tuple[int, int]]:
        """The rows on screen (None past the end), and what the bar is drawn from."""
        rows = self.rows
        shown = [
            rows[index] if index < len(rows) else None
            for index in range(self.top, self.top + self.size.height)
        ]
        return shown, (len(rows), self.top)

    def append_lines(self, lines: Iterable[Text]) -> int:
        """Add lines at the end; returns how many old lines were dropped to stay bounded."""
        added = list(lines)
        if not added:
            return 0
        self.lines.extend(added)
        dropped = self._trim()
        if self.wrap or self._rows is None:
            self._invalidate()
        else:
            # Not wrapped: a row is a line, so the rows drawn so far stay valid, each one
            # `dropped` rows up (a full stream drops as many as it adds: without this, every
            # row on screen was drawn again on every append).
            del self._rows[:dropped]
            self._rows.extend(added)
            if dropped:
                self._strips = {
                    index - dropped: strip
                    for index, strip in self._strips.items()
                    if index >= dropped
                }
        self.top = max(0, self.top - dropped)
        self.refresh()
        return dropped

    def clear(self) -> None:
        self.lines = []
        self.top = 0
        self._invalidate()
        self.refresh()

    def _trim(self) -> int:
        if self.max_lines is None or len(self.lines) <= self.max_lines:
            return 0
        dropped = len(self.lines) - self.max_lines
        del self.lines[:dropped]
        return dropped

    def _invalidate(self) -> None:
        self._rows = None
        self._strips.clear()

    # -- geometry -------------------------------------------------------------------------------

    @property
    def rows(self) -> list[Text]:
        """The content as drawn: wrapped to the width (or one row per line)."""
        width = self._text_width
        if self._rows is None or (self.wrap and width != self._rows_width):
            self._strips.clear()
            self._rows_width = width
            if self.wrap and width > 0:
                console = self.app.console
                self._rows = [row for line in self.lines for row in line.wrap(console, width)]
            else:
                self._rows = list(self.lines)
        return self._rows

    @property
    def _text_width(self) -> int:
        # One column is kept for the scroll bar, so wrapping does not depend on whether it shows.
        return max(0, self.pane_size.width - 1)

    @property
    def max_top(self) -> int:
        return max(0, len(self.rows) - self.size.height)

    @property
    def at_bottom(self) -> bool:
        return self.top >= self.max_top

    def on_resize(self, event: Resize) -> None:
        self._strips.clear()
        self.top = min(self.top, self.max_top)
        self.refresh()

    # -- scrolling ------------------------------------------------------------------------------

    def scroll_to_row(self, top: int) -> None:
        super().scroll_to_row(top)
        self.scrolled()

    def scrolled(self) -> None:
        """Called after every scroll by the operator (subclasses follow or pause here)."""

    # -- drawing --------------------------------------------------------------------------------

    def row_text(self, index: int) -> Text:
        """Row ``index`` as drawn (a subclass highlights in it; drawn rows are cached)."""
        return self.rows[index]

    def redraw(self) -> None:
        """Draw every row again (what `row_text` gives changed)."""
        self._strips.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        base = self.base_style
        rows = self.rows
        index = self.top + y
        width = self._text_width
        bar = scroll_bar(y, self.pane_size.height, len(rows), self.top, base)
        if index >= len(rows):
            return Strip([*Strip.blank(width, base), bar], width + 1)
        cached = self._strips.get(index)
        if cached is None or cached[0] != base:
            segments = self.row_text(index).render(self.app.console, end="")
            cached = (base, Strip(segments).apply_style(base).crop_extend(0, width, base))
            self._strips[index] = cached
        # The bar's cell is added on each draw: a row that moves up keeps its drawn text.
        return Strip([*cached[1], bar], width + 1)
