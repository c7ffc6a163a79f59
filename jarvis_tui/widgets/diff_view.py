"""A run's diff on screen: its files at the top, then the patch, drawn a line at a time from
pages read as they come into view.

The patch is never held whole. The view keeps at most `MAX_PAGES` pages of `PAGE_LINES` lines,
the least recently drawn dropped first; a line whose page is not here is drawn as "loading…" and
its page is asked for (`wanted`, handed to the screen's ``read_page``, which reads it on a
worker thread and gives it back through `add_page`). How long the patch is comes from the first
page (whether more follows) and, once the screen has counted it, from its index (`set_total`).

Lines are the patch's own text, masked by the engine; each is made inert here (`shown_line`)
and put in a `Text` whose colour comes from its kind (`line_kind`) through this widget's
component classes, so a theme decides the colours and nothing in a line is read as markup.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.strip import Strip

from core.service.diffs import LineKind, line_kind, shown_line
from jarvis_tui.widgets.text_pane import SidewaysPane, scroll_bar

#: Lines in a page: one read of git, and the unit the view keeps.
PAGE_LINES = 200
#: Pages kept at most (the screen shows at most two at a time).
MAX_PAGES = 24
#: How far right the view goes: a line is at most `MAX_LINE_CHARS` and its cut marker.
MAX_LEFT = 1100

LOADING = "loading…"


class DiffView(SidewaysPane, can_focus=True):
    """The file list and the patch, scrolled by keys and the wheel."""

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        overflow: hidden;
    }
    DiffView > .diff-view--file { color: $text-accent; text-style: bold; }
    DiffView > .diff-view--meta { color: $text-muted; }
    DiffView > .diff-view--hunk { color: $text-secondary; }
    DiffView > .diff-view--added { color: $text-success; }
    DiffView > .diff-view--removed { color: $text-error; }
    DiffView > .diff-view--note { color: $text-muted; text-style: italic; }
    DiffView > .diff-view--loading { color: $text-muted; text-style: italic; }
    DiffView > .diff-view--finding { color: $text-warning; text-style: bold; }
    DiffView > .diff-view--match { background: $warning 50%; }
    DiffView > .diff-view--current { background: $primary 40%; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--file",
        "diff-view--meta",
        "diff-view--hunk",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--note",
        "diff-view--loading",
        "diff-view--finding",
        "diff-view--match",
        "diff-view--current",
    }

    max_left = MAX_LEFT

    def __init__(
        self,
        *,
        read_page: Callable[[int], None] | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        super().__init__(id=id)
        self.read_page = read_page
        """Asked for each page that comes into view and is not here (None: none is read)."""
        self.head: list[Text] = []
        """The lines above the patch (the file list), held whole."""
        self.pages: OrderedDict[int, list[str]] = OrderedDict()
        """Pages of the patch by number, least recently drawn first."""
        self.total: int | None = None
        """The patch's length in lines, once counted."""
        self.known_end = 0
        """Lines of the patch known to exist (the end of the furthest page read)."""
        self.more = False
        """Lines follow ``known_end`` (before the patch is counted)."""
        self.patch = False
        """A patch is shown under the head (False: the head is all there is)."""
        self.wanted: set[int] = set()
        """Pages asked for and not here yet."""
        self.top = 0
        """The first row on screen."""
        self.left = 0
        """The first column on screen."""
        self.needle = ""
        """Text highlighted wherever it shows (the search)."""
        self.current: int | None = None
        """The row marked as the one gone to (a match, a finding's hunk)."""
        self.pages_read = 0
        """Pages added since the patch was set, for tests to count the reading."""

    # -- content --------------------------------------------------------------------------------

    def set_head(self, lines: list[Text]) -> None:
        """Show ``lines`` above the patch (the file list, or a sentence saying why none)."""
        self.head = lines
        self.refresh()

    def start_patch(self) -> None:
        """Forget every page: a patch follows the head, to be read page by page."""
        self.pages.clear()
        self.wanted.clear()
        self.total = None
        self.known_end = 0
        self.more = True
        self.patch = True
        self.pages_read = 0
        self.refresh()

    def add_page(self, number: int, lines: list[str], more: bool) -> None:
        """Keep page ``number`` (and drop the least recently drawn past `MAX_PAGES`)."""
        self.wanted.discard(number)
        self.pages[number] = lines
        self.pages.move_to_end(number)
        self.pages_read += 1
        while len(self.pages) > MAX_PAGES:
            self.pages.popitem(last=False)
        end = number * PAGE_LINES + len(lines)
        if end >= self.known_end:
            self.known_end = end
            self.more = more
        self.refresh()

    def set_total(self, lines: int) -> None:
        """The patch was counted: it is ``lines`` long."""
        self.total = lines
        self.known_end = lines
        self.more = False
        self.top = min(self.top, self.max_top)
        self.refresh()

    @property
    def patch_rows(self) -> int:
        """The patch's rows as far as known: its length, or what was read and a loading row."""
        if not self.patch:
            return 0
        if self.total is not None:
            return self.total
        return self.known_end + (1 if self.more else 0)

    @property
    def row_count(self) -> int:
        return len(self.head) + self.patch_rows

    def patch_line(self, line: int) -> str | None:
        """Line ``line`` of the patch if its page is here (None: not read, or past the end)."""
        page = self.pages.get(line // PAGE_LINES)
        if page is None:
            return None
        offset = line % PAGE_LINES
        return page[offset] if offset < len(page) else None

    def row_of(self, line: int) -> int:
        """The row patch line ``line`` is drawn on."""
        return len(self.head) + line

    # -- geometry and scrolling -----------------------------------------------------------------

    @property
    def max_top(self) -> int:
        return max(0, self.row_count - self.size.height)

    def on_resize(self, event: Resize) -> None:
        self.top = min(self.top, self.max_top)
        self.refresh()

    def go_to_row(self, row: int, *, above: int = 2) -> None:
        """Mark ``row`` as the one gone to and bring it into view, ``above`` rows below the top."""
        self.current = row
        # The row may lie past what is known yet (a match found by a full pass): let the view
        # reach it, and its page is read when drawn.
        if row >= self.row_count and self.total is None:
            self.known_end = max(self.known_end, row - len(self.head) + 1)
        self.top = max(0, min(row - above, self.max_top))
        self.refresh()

    # -- drawing --------------------------------------------------------------------------------

    def _want(self, page: int) -> None:
        if page in self.wanted or self.read_page is None:
            return
        self.wanted.add(page)
        # Asked after this paint: a paint only draws.
        self.call_later(self.read_page, page)

    def _row_text(self, row: int) -> Text:
        if row < len(self.head):
            return self.head[row]
        line = row - len(self.head)
        if line >= self.patch_rows:
            return Text()
        page = line // PAGE_LINES
        if page in self.pages:
            self.pages.move_to_end(page)
        text = self.patch_line(line)
        if text is None:
            self._want(page)
            return Text.assemble((LOADING, self.line_style("loading")), end="")
        kind: LineKind = line_kind(text)
        shown = Text(shown_line(text), end="", no_wrap=True)
        if kind != "context":
            shown.stylize(self.line_style(kind))
        if self.needle:
            shown.highlight_words(
                [self.needle],
                self.get_component_rich_style("diff-view--match"),
                case_sensitive=False,
            )
        return shown

    def line_style(self, kind: str) -> Style:
        """The colour and emphasis of a kind of line (``diff-view--KIND``), without the
        widget's background, so a marked row's own background shows through."""
        style = self.get_component_rich_style(f"diff-view--{kind}")
        return Style(
            color=style.color,
            bold=style.bold,
            italic=style.italic,
            dim=style.dim,
            underline=style.underline,
        )

    def render_line(self, y: int) -> Strip:
        base = self.base_style
        size = self.pane_size
        width = max(0, size.width - 1)
        row = self.top + y
        bar = scroll_bar(y, size.height, self.row_count, self.top, base)
        if row >= self.row_count:
            return Strip([*Strip.blank(width, base), bar], width + 1)
        line_style = base
        if row == self.current:
            line_style = base + self.get_component_rich_style("diff-view--current")
        text = self._row_text(row)
        # A `Text`'s own style is its caller's to apply (rendering gives only its spans').
        if text.style:
            line_style += self.app.console.get_style(text.style)
        strip = Strip(text.render(self.app.console, end="")).apply_style(line_style)
        strip = strip.crop_extend(self.left, self.left + width, line_style)
        return Strip([*strip, bar], width + 1)
