"""The run table: one line per run, keyed by run id, drawn only where it is on screen.

It holds a window of the view, not the view (`jarvis_tui.run_model`): the lines it has, where
they sit in the view (``first_at``) and how many runs the view holds (``total``, for the scroll
bar), and whether more lie before or after. A cursor key that reaches (or nears) an end with
more beyond it asks for them (`NeedRows`); the screen reads them and extends the lines, which
stay where they were on screen.

A line-API widget (`ScrollView.render_line`), not a `DataTable`: DataTable measures every cell of
every row it is given (about 0.3 ms a row), which made a change of view over 10,000 runs take
seconds. Here a change of view is a re-ordered list of run ids, and a run's cells are built only
when its line is drawn, then cached until the run changes. Live changes redraw only the lines of
the runs that changed, and only if they are on screen.

The cursor belongs to a run, not to a line (`RunTable.current`): the run the operator chose, which
the console's panels show and its keys act on. It changes only when the operator moves the cursor
or goes to a run. When the view stops showing that run (it changed state under a state filter,
or the filter changed), no line is under the cursor and the run stays current; the next cursor
key chooses a run from where it was. Putting the neighbour under the cursor instead made `a a`
approve two runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Click, MouseScrollDown, MouseScrollUp, Resize
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from jarvis_tui.widgets.run_cells import (
    COLUMNS,
    SORT_CYCLE,
    SORTS,
    Column,
    Row,
    cells,
    fit_columns,
    gates_text,
    header_text,
    line_of,
    run_text,
)
from jarvis_tui.widgets.text_pane import WHEEL_LINES, LinePane, scroll_bar

__all__ = ["SORTS", "SORT_CYCLE", "RunTable", "RunTableHeader", "gates_text", "run_text"]


class RunTableHeader(Widget):
    """The column labels above the table (the table itself scrolls under them), for the
    columns the table's width holds."""

    DEFAULT_CSS = """
    RunTableHeader {
        height: 1;
    }
    """

    spend = False
    """Whether the spend column is drawn, width permitting (as `RunTable.spend`)."""

    def show_spend(self, shown: bool) -> None:
        if shown != self.spend:
            self.spend = shown
            self.refresh()

    def render(self) -> Text:
        # The same width as the table's text: the table keeps its last column for a scroll bar.
        return header_text(fit_columns(max(0, self.size.width - 1), spend=self.spend))


class RunTable(LinePane, can_focus=True):
    """The runs of the current view, in order, with a row cursor.

    It scrolls by an offset it keeps itself, with a drawn one-column bar, rather than as a
    `ScrollView`: a view's ``virtual_size`` is a layout reactive, so every filter keystroke or
    new run would lay the whole screen out again (about 25 ms at 160×48).
    """

    # Priority (in force only while the table has the focus): the cursor moves as the App
    # routes the key, so an action key typed right behind it, in the same read, acts on the run
    # moved to. Queued behind the action key's priority binding, `down a` approved the run the
    # cursor was leaving.
    BINDINGS: ClassVar[list[BindingType]] = [
        # Each with an id (``table.…``), so a keymap can change it; less's and vim's keys too.
        Binding("up,k", "cursor(-1)", "Up", show=False, priority=True, id="table.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, priority=True, id="table.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True, id="table.page_up"),
        Binding(
            "pagedown", "page(1)", "Page down", show=False, priority=True, id="table.page_down"
        ),  # fmt: skip
        Binding(
            "ctrl+u",
            "half_page(-1)",
            "Half a page up",
            show=False,
            priority=True,
            id="table.half_up",
        ),  # fmt: skip
        Binding(
            "ctrl+d",
            "half_page(1)",
            "Half a page down",
            show=False,
            priority=True,
            id="table.half_down",
        ),  # fmt: skip
        Binding("home,g", "jump(0)", "First", show=False, priority=True, id="table.top"),
        Binding("end,G", "jump(-1)", "Last", show=False, priority=True, id="table.bottom"),
        Binding("enter", "select", "Details", show=False, id="table.select"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "run-table--cursor", "run-table--even-row", "run-table--marked",
    }  # fmt: skip

    @dataclass
    class Highlighted(Message):
        """``run_id`` became the current run (the operator chose it, or it is the first run
        shown while none was chosen)."""

        table: RunTable
        run_id: str

    @dataclass
    class NeedRows(Message):
        """The cursor reached or neared an end of the lines with more runs beyond: ``where``
        is ``after`` or ``before`` (the next page), or ``first`` or ``last`` (the view's)."""

        table: RunTable
        where: str

    @dataclass
    class Selected(Message):
        """The operator pressed enter on ``run_id``."""

        table: RunTable
        run_id: str

    cursor_row: reactive[int] = reactive(0, init=False, always_update=False, repaint=False)
    """The index of the highlighted line, -1 when the current run is not shown. Not a repaint
    of the table: `watch_cursor_row` redraws just the two rows that changed (a whole table for
    every key cost ~3 ms more a frame)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._order: list[str] = []
        self._index: dict[str, int] = {}
        self._rows: dict[str, Row] = {}
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._segments: dict[str, list[Segment]] = {}
        """Each drawn run's cells as segments, before the row's style: the cursor arriving on
        a row or leaving it restyles these instead of laying out the cells again."""
        self._strips: dict[str, tuple[tuple[object, ...], Strip]] = {}
        """Each drawn run's finished line with what it was drawn for (style, width, bar):
        a cursor move or a scroll redraws lines whose runs did not change."""
        self._now = datetime.now(UTC)
        self.top = 0
        """The index of the first line on screen."""
        self.current: str | None = None
        """The run the cursor belongs to: the one the operator chose (or the first shown, until
        they choose). It stays current when the view no longer shows it."""
        self._gap = 0
        """Where the current run would be, while it is not shown: the next cursor key moves
        from there (down: the run that followed it; up: the one before)."""
        self.spend = False
        """Whether the spend column is drawn (width permitting): once the workspace's agents
        have reported any spending (`show_spend`)."""
        self.columns: tuple[Column, ...] = fit_columns(80)
        """The columns drawn, for the table's width (set again on every resize)."""
        self.first_at: int | None = 0
        """Where the first line sits in the view (None: not known)."""
        self.total = 0
        """How many runs the view holds (the scroll bar's length)."""
        self.more_before = False
        self.more_after = False
        self._asked: set[str] = set()
        """Pages asked for and not yet shown (each asked once)."""
        self.marked: dict[str, None] = {}
        """Runs the operator marked, in the order marked (shown or not): a ``+`` before the
        run id, and the row's own colour (`set_marked`)."""

    # -- what is shown --------------------------------------------------------------------------

    @property
    def run_ids(self) -> list[str]:
        """The run ids shown, top to bottom."""
        return list(self._order)

    @property
    def row_count(self) -> int:
        return len(self._order)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._index

    @property
    def selected_run_id(self) -> str | None:
        """The run under the cursor: the current run when it is shown, else None."""
        return self.current if self.current in self._index else None

    @property
    def current_shown(self) -> bool:
        """Whether the current run has a line in this view."""
        return self.current in self._index

    def get_row(self, run_id: str) -> tuple[Text, ...]:
        """The cells of ``run_id``'s line (built if it was never drawn)."""
        if run_id not in self._cells:
            self._cells[run_id] = cells(self._rows[run_id], self._now)
        return self._cells[run_id]

    def get_cell(self, run_id: str, column: str) -> Text:
        keys = [key for key, _label, _width in COLUMNS]
        return self.get_row(run_id)[keys.index(column)]

    # -- changing it ------------------------------------------------------------------------------

    def set_window(
        self, *, first_at: int | None, total: int, more_before: bool, more_after: bool
    ) -> None:
        """Where the lines sit in the view, and what lies beyond them (after `replace_rows`)."""
        self.first_at, self.total = first_at, total
        self.more_before, self.more_after = more_before, more_after
        self._asked.clear()
        self.refresh()

    def replace_rows(
        self, rows: Iterable[Row], now: datetime, *, gap: int | None = None, shift: int = 0
    ) -> None:
        """Show exactly ``rows`` in order (a change of view), the cursor staying on the current
        run; ``gap`` is where that run would be among ``rows`` when they do not include it
        (None: where it was);
        ``shift``: lines added (or, negative, taken) before the old first line, so the lines on
        screen stay where they were."""
        self._now = now
        self.top = max(0, self.top + shift)
        self._gap = max(0, self._gap + shift)
        rows = list(rows)
        self._order = [row["run_id"] for row in rows]
        for row in rows:
            run_id = row["run_id"]
            if self._rows.get(run_id) != row:
                # Changed (or read again changed): its line is laid out again. A run read again
                # as it was keeps its line: a window read after every change redraws only what
                # changed.
                self._forget(run_id)
            self._rows[run_id] = row
        self._reindex()
        self._settle_cursor(gap)

    def upsert(self, row: Row, now: datetime) -> None:
        """Bring a shown run's line up to date (which runs are shown is `replace_rows`')."""
        run_id = row["run_id"]
        index = self._index.get(run_id)
        if index is None:
            return
        self._now = now
        old = self._rows.get(run_id)
        self._rows[run_id] = row
        if old != row:
            self._forget(run_id)
            self._refresh_row(index)

    def drop(self, run_id: str) -> None:
        """Take ``run_id``'s line away; if it is the current run, it stays current, unshown."""
        index = self._index.get(run_id)
        if index is None:
            return
        self._order.pop(index)
        self._reindex()
        if run_id == self.current:
            self._settle_cursor(index)
        elif self.cursor_row < 0 and index < self._gap:
            self._settle_cursor(self._gap - 1)  # a line before the gap went: it moves up one
        else:
            self._settle_cursor()

    def set_now(self, now: datetime) -> None:
        """Ages are relative to ``now``: rebuild the cells that are drawn again."""
        self._now = now
        self._cells.clear()
        self._segments.clear()
        self._strips.clear()
        self.refresh()

    def show_spend(self, shown: bool) -> None:
        """Draw the spend column (when the width has room for it) or leave it out."""
        if shown != self.spend:
            self.spend = shown
            self._fit()
            self.refresh()

    def move_to(self, run_id: str | None) -> None:
        """Make ``run_id`` current when it is shown (else leave the cursor where it is)."""
        if run_id is not None and run_id in self._index:
            self._choose(self._index[run_id])

    def set_marked(self, run_ids: list[str]) -> None:
        """Mark exactly ``run_ids``: the lines whose mark changed are drawn again."""
        changed = set(run_ids) ^ set(self.marked)
        self.marked = dict.fromkeys(run_ids)
        for run_id in changed:
            self._forget(run_id)
            if run_id in self._index:
                self._refresh_row(self._index[run_id])

    def _forget(self, run_id: str) -> None:
        self._cells.pop(run_id, None)
        self._segments.pop(run_id, None)
        self._strips.pop(run_id, None)

    def _reindex(self) -> None:
        self._index = {run_id: i for i, run_id in enumerate(self._order)}
        self.top = max(0, min(self.top, len(self._order) - self.size.height))
        self.refresh()

    def _refresh_row(self, index: int) -> None:
        if self.top <= index < self.top + self.size.height:
            self.refresh(Region(0, index - self.top, self.size.width, 1))

    def _settle_cursor(self, gap: int | None = None) -> None:
        """After the lines changed: the cursor on the current run's line, or on none when the
        view does not show it (``gap``, if given, is where it would be). Only while no run was
        ever current does the cursor land on a run by itself: the first."""
        if self.current is None:
            if self._order:
                self._choose(0)
            return
        index = self._index.get(self.current)
        if index is not None:
            self.cursor_row = index
            self._scroll_to_cursor()
            return
        self.cursor_row = -1
        if gap is not None:
            self._gap = gap
        self._gap = max(0, min(self._gap, len(self._order)))

    def _choose(self, row: int) -> None:
        """Make the run on line ``row`` current (the operator's choice)."""
        run_id = self._order[row]
        self.cursor_row = row
        self._scroll_to_cursor()
        if run_id != self.current:
            self.current = run_id
            self.post_message(self.Highlighted(self, run_id))

    # -- the cursor -------------------------------------------------------------------------------

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._refresh_row(old)
        self._refresh_row(new)

    def _move(self, row: int) -> None:
        if not self._order:
            return
        last = len(self._order) - 1
        if row > last and self.more_after:
            self._ask("after")
        elif row < 0 and self.more_before:
            self._ask("before")
        self._choose(max(0, min(row, last)))
        # Near an end with more beyond: the next page is read before the cursor gets there.
        edge = max(1, self.size.height)
        if self.more_after and self.cursor_row >= last - edge:
            self._ask("after")
        if self.more_before and 0 <= self.cursor_row <= edge:
            self._ask("before")

    def _ask(self, where: str) -> None:
        if where not in self._asked:
            self._asked.add(where)
            self.post_message(self.NeedRows(self, where))

    def _step(self, delta: int) -> None:
        """Move by ``delta`` lines; from an unshown current run, from where it would be."""
        if self.cursor_row >= 0:
            self._move(self.cursor_row + delta)
        else:
            # The gap sits between two lines: down reaches the line after it, up the one before.
            self._move(self._gap + delta - (1 if delta > 0 else 0))

    def jump_to_end(self, last: bool) -> None:
        """The cursor on the first line (or the last), once the view's end is in the lines."""
        if self._order:
            self._choose(len(self._order) - 1 if last else 0)

    def _scroll_to_cursor(self) -> None:
        if self.cursor_row < 0:
            return
        height = max(1, self.size.height)
        top = self.top
        if self.cursor_row < top:
            top = self.cursor_row
        elif self.cursor_row >= top + height:
            top = self.cursor_row - height + 1
        if top != self.top:
            self.top = top
            self.refresh()

    def _fit(self) -> None:
        """The columns for the table's width; lines already laid out for others are dropped."""
        columns = fit_columns(max(0, self.size.width - 1), spend=self.spend)
        if columns != self.columns:
            self.columns = columns
            self._segments.clear()
        self._strips.clear()

    def on_resize(self, event: Resize) -> None:
        self._fit()
        self.top = max(0, min(self.top, len(self._order) - self.size.height))
        self._scroll_to_cursor()
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        self._step(delta)

    def action_page(self, direction: int) -> None:
        self._step(direction * max(1, self.size.height - 1))

    def action_half_page(self, direction: int) -> None:
        self._step(direction * max(1, self.size.height // 2))

    def action_jump(self, row: int) -> None:
        if row >= 0 and self.more_before:
            self._ask("first")
        elif row < 0 and self.more_after:
            self._ask("last")
        else:
            self._move(row if row >= 0 else len(self._order) - 1)

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current))

    def on_click(self, event: Click) -> None:
        row = event.y + self.top
        if 0 <= row < len(self._order):
            if row == self.cursor_row and event.chain > 1:
                self.action_select()
            self._move(row)

    # -- drawing ----------------------------------------------------------------------------------

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        self._step(WHEEL_LINES)

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        self._step(-WHEEL_LINES)

    def render_line(self, y: int) -> Strip:
        row = y + self.top
        base = self.base_style
        size = self.pane_size
        # The bar is the view's, not the lines': a window of a million runs is a thin thumb.
        start = self.first_at or 0
        total = max(self.total, start + len(self._order))
        bar = scroll_bar(y, size.height, total, start + self.top, base)
        width = max(0, size.width - 1)  # the last column is the scroll bar's
        if row >= len(self._order):
            return Strip([*Strip.blank(width, base), bar], width + 1)
        run_id = self._order[row]
        marked = run_id in self.marked
        if row == self.cursor_row:
            style = base + self.get_component_rich_style("run-table--cursor")
        elif marked:
            style = base + self.get_component_rich_style("run-table--marked")
        elif (row + (self.first_at or 0)) % 2 == 0:
            style = base + self.get_component_rich_style("run-table--even-row")
        else:
            style = base
        drawn_for = (style, width, bar)
        cached = self._strips.get(run_id)
        if cached is not None and cached[0] == drawn_for:
            return cached[1]
        segments = self._segments.get(run_id)
        if segments is None:
            values = self.get_row(run_id)
            if marked:  # seen without colour too: a + before the id
                values = (Text.assemble(("+", "bold"), values[0]), *values[1:])
            segments = list(line_of(values, self.columns).render(self.app.console))
            self._segments[run_id] = segments
        strip = Strip(segments).apply_style(style).crop_extend(0, width, style)
        strip = Strip([*strip, bar], width + 1)
        self._strips[run_id] = (drawn_for, strip)
        return strip
