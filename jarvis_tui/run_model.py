"""What the current view is, and the window of it the console holds.

A fleet's table lives in the store; the console holds a window of it: the rows of the view
around what is on screen (`core.service.window`), where they sit in the view, the mark to read
the same place again from, and whether more lies before and after. The store sorts and
filters; nothing here does. Plain Python (no widgets), so the window's rules are tested on
their own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.lifecycle import RunState
from core.service.stages import needs_attention
from core.service.window import Mark, RunsView, WindowRows
from jarvis_tui.widgets.run_table import SORTS

Row = dict[str, Any]

#: Number key → state filter (0 shows every state), in the lifecycle's order.
STATE_KEYS: dict[str, RunState | None] = {
    "0": None,
    **{str(n): state for n, state in enumerate(RunState, 1)},
}
#: Rows read at a time, and the most the window holds (trimmed at its far end beyond that).
PAGE = 100
MOST = 400


@dataclass
class View:
    """What the operator asked to see."""

    text: str = ""
    """Case-insensitive substring of run id, lane, task type, state or last progress."""
    state: RunState | None = None
    """Only runs in this state."""
    attention: bool = False
    """Only runs that need a human, the longest-waiting first (overrides the sort)."""
    sort: str = "age"
    """A key of `SORTS`."""
    reverse: bool = True
    """Descending: newest first for ``age``."""

    def describe(self) -> str:
        """The view in words, for the table's title."""
        parts = ["needs a human, oldest first" if self.attention else "all runs"]
        if self.state:
            parts.append(f"state {self.state}")
        if self.text:
            parts.append(f"matching “{self.text}”")
        if not self.attention:
            label = SORTS[self.sort][0]
            parts.append(f"by {label} {'↓' if self.reverse else '↑'}")
        return " · ".join(parts)

    def runs_view(self) -> RunsView:
        """The view as the store reads it."""
        return RunsView(
            text=self.text,
            state=self.state.value if self.state else None,
            attention=self.attention,
            sort=self.sort,
            descending=self.reverse,
        )


@dataclass(frozen=True)
class WindowAsk:
    """What a read of the window asks for: the view, from where, how many, and the runs
    outside it whose rows are wanted too (the run on show)."""

    view: RunsView
    anchor: Mark | None
    offset: int | None
    size: int
    generation: int
    """The view's generation when asked: a read for an older view is not shown."""
    version: int
    """The window's version when asked: a read that an extension overtook is not laid over it."""
    loaded: frozenset[str]
    keep: tuple[str, ...] = ()


class RunModel:
    """The view, and the window of it: rows by run id, and the window's order."""

    def __init__(self) -> None:
        self.view = View()
        self.rows: dict[str, Row] = {}
        """The window's rows, and the rows kept beside it (the run on show)."""
        self.order: list[str] = []
        """The window's run ids, in the view's order."""
        self.marks: list[Mark] = []
        self.offset: int | None = 0
        """Where ``order[0]`` sits in the view (None: not known, after a text's walk)."""
        self.anchor: Mark | None = None
        """The mark of the run just before the window (None: the window starts the view)."""
        self.more_before = False
        self.more_after = False
        self.total = 0
        self.exact = True
        self.attention_total = 0
        self.generation = 0
        """Bumped by each change of view."""
        self.version = 0
        """Bumped by each change of the window."""
        self.read_once = False
        """A window has been read (the first read is in)."""
        self.view_pending = False
        """The view changed and its first page is not in yet (the lines are the old view's)."""
        self.walked_to: Mark | None = None
        """Where a text's walk stopped short of a full page: the next page is read from here,
        not from the last match (which would walk the same runs again)."""
        self._waiting: set[str] = set()
        """Runs last seen needing a human (the toasts ask, for runs outside the window too)."""
        self._shown: set[str] = set()
        """``order`` as a set."""

    # -- asking -----------------------------------------------------------------------------------

    def changed_view(self) -> None:
        """The operator changed the view: reads for the old one are worthless now."""
        self.generation += 1
        self.view_pending = True

    def ask(self, *, keep: Iterable[str] = ()) -> WindowAsk:
        """A read of the window where it is (the same place, its size or a page at least)."""
        kept = tuple(keep)  # read beside the window when the window does not hold them
        return WindowAsk(
            view=self.view.runs_view(),
            anchor=self.anchor,
            offset=self.offset,
            size=max(PAGE, len(self.order)),
            generation=self.generation,
            version=self.version,
            loaded=frozenset(self.order),
            keep=kept,
        )

    # -- what was read ------------------------------------------------------------------------

    def take(self, page: WindowRows, *, keep: str | None = None) -> None:
        """Replace the window with ``page`` (a read of the view where it stands, or anew)."""
        kept = self.rows.get(keep) if keep is not None else None
        self.rows = {row["run_id"]: row for row in page.rows}
        if kept is not None and keep is not None and keep not in self.rows:
            self.rows[keep] = kept
        self.order = [row["run_id"] for row in page.rows]
        self.marks = list(page.marks)
        self.offset, self.anchor = page.offset, page.anchor
        self.more_before, self.more_after = page.more_before, page.more_after
        self.walked_to = page.walked_to
        self._shown = set(self.order)
        self._counted(page)
        self.version += 1
        self.read_once = True
        for row in page.rows:
            self._note(row)

    def extend(self, page: WindowRows, *, after: bool, keep: str | None = None) -> int:
        """Add ``page`` at the window's end (``after``) or its start, trimming the far end
        beyond `MOST` rows. Returns how many rows the window's start moved down by (rows
        added before minus rows trimmed before): the table keeps its lines where they were."""
        fresh = [(row, mark) for row, mark in zip(page.rows, page.marks, strict=True)
                 if row["run_id"] not in self._shown]  # fmt: skip
        new = [row for row, _mark in fresh]
        marks = [mark for _row, mark in fresh]
        for row in new:
            self.rows[row["run_id"]] = row
            self._note(row)
        shift = 0
        if after:
            self.order += [row["run_id"] for row in new]
            self.marks += marks
            self.more_after = page.more_after
            self.walked_to = page.walked_to
            extra = len(self.order) - MOST
            if extra > 0:
                self.anchor = self.marks[extra - 1]
                self._drop(self.order[:extra], keep)
                self.order, self.marks = self.order[extra:], self.marks[extra:]
                self.offset = None if self.offset is None else self.offset + extra
                self.more_before = True
                shift = -extra
        else:
            self.order = [row["run_id"] for row in new] + self.order
            self.marks = marks + self.marks
            self.anchor = page.anchor
            self.more_before = page.more_before
            self.offset = page.offset if page.offset is not None else (
                None if self.offset is None else max(0, self.offset - len(new))
            )  # fmt: skip
            shift = len(new)
            extra = len(self.order) - MOST
            if extra > 0:
                self._drop(self.order[-extra:], keep)
                self.order, self.marks = self.order[:-extra], self.marks[:-extra]
                self.more_after = True
        self._shown = set(self.order)
        self._counted(page)
        self.version += 1
        return shift

    def update(self, rows: Iterable[Row]) -> None:
        """Bring rows up to date in place (the window's order stays until it is read again)."""
        for row in rows:
            self.rows[row["run_id"]] = row
            self._note(row)

    def _drop(self, run_ids: Iterable[str], keep: str | None) -> None:
        for run_id in run_ids:
            if run_id != keep:
                self.rows.pop(run_id, None)

    def _counted(self, page: WindowRows) -> None:
        self.total, self.exact = page.total, page.exact
        self.attention_total = page.attention

    def _note(self, row: Row) -> None:
        if needs_attention(row):
            self._waiting.add(row["run_id"])
        else:
            self._waiting.discard(row["run_id"])

    def moved(self, run_id: str, waits: bool) -> None:
        """The journal says ``run_id`` moved into (or out of) a stage needing a human."""
        if waits:
            self._waiting.add(run_id)
        else:
            self._waiting.discard(run_id)

    def read_on_from(self) -> Mark | None:
        """Where the page after the window starts (None: the view's start)."""
        if self.walked_to is not None:
            return self.walked_to
        return self.marks[-1] if self.marks else self.anchor

    # -- what it says -----------------------------------------------------------------------------

    def visible(self) -> list[Row]:
        """The window's rows, in the view's order."""
        return [self.rows[run_id] for run_id in self.order]

    def shows(self, run_id: str) -> bool:
        """Whether the window holds ``run_id``."""
        return run_id in self._shown

    def needs_human(self, run_id: str) -> bool:
        """Whether ``run_id`` was last seen waiting on an operator."""
        return run_id in self._waiting

    def attention_count(self) -> int:
        return self.attention_total
