"""A console's window on the runs, through the front door: pages of a view as table rows.

The store reads a page of a view by keyset (`core.store.window`); here a front end's view (its
text, state, attention and order) becomes the store's, and a page's runs become table rows
(`core.run_views.table_rows`: their steers, gates and spending, a fixed number of reads per
page). A page says where it sits in the view when that is known (``offset``), and whether
more runs lie before and after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.run_views import SUMMARY_FIELDS, attention_stages, table_rows
from core.store.window import SORT_KEYS, Mark
from core.store.window import View as StoreView

if TYPE_CHECKING:
    from core.store.api import RunStore

__all__ = ["SORT_KEYS", "Mark", "RunsView", "WindowRows", "read_window", "run_ids_from"]

#: How many runs a text's walk takes for one page before it answers with what it found: about
#: 20 ms of the store's time (a run's fields are read from its row, a few microseconds each), so
#: a filter key is answered in about that whatever the store's size; a console reads on, a walk
#: at a time, until its page is full.
SCAN_LIMIT = 4_000
#: A count of the runs needing a human (a few stages read one by one) stops here.
COUNT_CAP = 100_000


@dataclass(frozen=True)
class RunsView:
    """Which runs a front end shows, and in which order."""

    text: str = ""
    """Case-insensitive substring of run id, lane, task type, state (and sub-state), last
    progress or the state's reason."""
    state: str | None = None
    attention: bool = False
    """Only runs needing a human, the longest wait first (the order is then ignored)."""
    sort: str = "age"
    descending: bool = True

    def store_view(self) -> StoreView:
        return StoreView(
            sort=self.sort,
            descending=self.descending,
            state=self.state,
            attention=attention_stages() if self.attention else None,
            text=self.text.strip(),
        )


@dataclass
class WindowRows:
    """A page of a view: table rows in the view's order, each with its mark."""

    rows: list[dict[str, Any]]
    marks: list[Mark]
    more_before: bool
    more_after: bool
    offset: int | None
    """Where the first row stands in the view (None: not known, after a text's walk)."""
    anchor: Mark | None
    """The mark of the run just before the first row (None: the rows start the view): the
    page read again ``after`` it is the same place in the view."""
    total: int
    """How many runs the view holds; under a text, at least: those up to the page's end, and
    one more when more may follow (matches are not counted)."""
    exact: bool = True
    walked_to: Mark | None = None
    """Where a text's walk stopped without filling the page: read on from here."""
    attention: int = 0
    """How many runs need a human (the header's count)."""


def read_window(
    store: RunStore,
    view: RunsView,
    *,
    limit: int,
    after: Mark | None = None,
    before: Mark | None = None,
    from_end: bool = False,
    around: str | None = None,
    offset: int | None = None,
) -> WindowRows:
    """A page of ``view``: its first ``limit`` runs, those after or before a mark, its last, or
    those around the run ``around`` (half before it, itself and the rest after; from the top
    when the view does not hold it). ``offset`` is where a page read after a mark starts, when
    the caller knows it."""
    counts = store.state_counts()
    wanted = view.store_view()
    # A text's matches are not counted: a rare one would walk every run. The page says what
    # it found, and whether more may follow.
    total, exact = (0, False) if wanted.text else store.window_count(
        wanted, cap=COUNT_CAP, counts=counts
    )  # fmt: skip
    attention, _ = store.window_count(
        RunsView(attention=True).store_view(), cap=COUNT_CAP, counts=counts
    )
    if around is not None:
        # Under a text, where the run stands is not counted (that would walk every run before
        # it): the page holds it, and its place in the view is not known.
        if wanted.text:
            held, rank = store.window_holds(wanted, around), None
        else:
            rank = store.window_rank(wanted, around)
            held = rank is not None
        if held:
            found = _around(store, wanted, around, rank, limit, counts)
            return _finished(store, found, total, exact, attention)
    page = store.window(
        wanted, SUMMARY_FIELDS, after=after, before=before, from_end=from_end, limit=limit,
        counts=counts, scan_limit=SCAN_LIMIT,
    )  # fmt: skip
    backwards = before is not None or from_end
    if from_end:
        start = total - len(page.rows) if exact else None
    elif before is not None:
        start = None if offset is None else max(0, offset - len(page.rows))
    else:
        start = 0 if after is None else offset
    found = WindowRows(
        rows=page.rows,
        marks=page.marks,
        more_before=page.more if backwards else after is not None,
        more_after=(before is not None) if backwards else page.more,
        offset=start,
        anchor=page.beyond if backwards else after,
        total=total,
        exact=exact,
        walked_to=page.resume if page.walked_out else None,
    )
    return _finished(store, found, total, exact, attention)


def _around(
    store: RunStore,
    wanted: StoreView,
    run_id: str,
    rank: int | None,
    limit: int,
    counts: dict[str, int],
) -> WindowRows:
    own = store.window_mark(wanted, run_id)
    before = store.window(
        wanted, SUMMARY_FIELDS, before=own, limit=max(0, (limit - 1) // 2), counts=counts
    )
    # Read on from the run just before those (which that read found too), or the view's start:
    # them, itself and what follows.
    after = before.beyond
    rest = store.window(wanted, SUMMARY_FIELDS, after=after, limit=limit, counts=counts)
    return WindowRows(
        rows=rest.rows,
        marks=rest.marks,
        more_before=before.more,
        more_after=rest.more,
        offset=None if rank is None else rank - len(before.rows),
        anchor=after,
        total=0,
    )


def _finished(
    store: RunStore,
    found: WindowRows,
    total: int,
    exact: bool,
    attention: int,
) -> WindowRows:
    decorated = {r["run_id"]: r for r in table_rows(store, [r["run_id"] for r in found.rows])}
    # A run deleted between the two reads (by hand: runs are never deleted) is left out.
    kept = [(row, mark) for row, mark in zip(found.rows, found.marks, strict=True)
            if row["run_id"] in decorated]  # fmt: skip
    found.rows = [decorated[row["run_id"]] for row, _mark in kept]
    found.marks = [mark for _row, mark in kept]
    if not found.more_before and found.offset is None:
        found.offset = 0  # the page starts the view: its place is known after all
    if not exact and not total:  # a text: at least what lies up to the page's end
        total = (found.offset or 0) + len(found.rows) + (1 if found.more_after else 0)
        exact = found.offset is not None and not found.more_after
    found.total, found.exact = total, exact
    found.attention = attention
    return found


def run_ids_from(store: RunStore, prefix: str, *, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` runs whose id starts with ``prefix``, by id (``run_id`` and ``state``):
    the run named exactly first, then an indexed walk of the ids after it, a page of
    ``limit`` rows at most, whatever the store's size (a console's completion, per key)."""
    if not prefix or limit <= 0:
        return []
    exact = store.get_run(prefix)
    found = [{"run_id": exact["run_id"], "state": exact["state"]}] if exact else []
    page = store.window(
        StoreView(sort="run", descending=False), ["state"], after=(prefix, prefix), limit=limit
    )
    found += [
        {"run_id": row["run_id"], "state": row["state"]}
        for row in page.rows
        if str(row["run_id"]).startswith(prefix)
    ]
    return found[:limit]
