"""A front end's window through the front door (`core.service.window`): pages of a view as
table rows, where each sits in the view, what lies before and after it, the place to read it
again from, and a page around one run."""

from __future__ import annotations

from pathlib import Path

from core.lifecycle import RunState
from core.service.fleet import Fleet
from core.service.window import RunsView
from core.store.api import RunStore
from tests.core.store_helpers import make_run

RUNS = 30


def _fleet(store: RunStore, root: Path) -> Fleet:
    for n in range(RUNS):
        state = RunState.FAILED if n % 3 == 0 else RunState.DONE
        make_run(store, f"r{n:02}", state, lane=f"lane-{n % 2}")
    return Fleet(store, root)


def ids(rows: list[dict[str, object]]) -> list[str]:
    return [str(row["run_id"]) for row in rows]


def test_pages_say_where_they_are_and_read_again_from_their_anchor(
    any_store: RunStore, tmp_path: Path
) -> None:
    fleet = _fleet(any_store, tmp_path)
    view = RunsView(sort="run", descending=False)
    first = fleet.window(view, limit=10)
    assert ids(first.rows) == [f"r{n:02}" for n in range(10)]
    assert (first.offset, first.anchor, first.more_before, first.more_after) == (
        0,
        None,
        False,
        True,
    )
    assert (first.total, first.exact) == (RUNS, True)
    assert first.attention == 10  # the failed runs: every third
    # Every row is a table row: its steers, gates and spending are there.
    assert {"steers", "gates", "usage", "state"} <= set(first.rows[0])

    second = fleet.window(view, limit=10, after=first.marks[-1], offset=10)
    assert ids(second.rows) == [f"r{n:02}" for n in range(10, 20)]
    assert (second.offset, second.anchor, second.more_before) == (10, first.marks[-1], True)
    again = fleet.window(view, limit=10, after=second.anchor, offset=second.offset)
    assert ids(again.rows) == ids(second.rows)

    last = fleet.window(view, limit=10, from_end=True)
    assert ids(last.rows) == [f"r{n:02}" for n in range(20, 30)]
    assert (last.offset, last.more_before, last.more_after) == (20, True, False)
    assert last.anchor == second.marks[-1]  # the run before the last page
    before = fleet.window(view, limit=5, before=last.marks[0], offset=20)
    assert ids(before.rows) == [f"r{n:02}" for n in range(15, 20)]
    assert (before.offset, before.more_before, before.more_after) == (15, True, True)


def test_a_page_around_a_run_holds_it_with_what_comes_before_and_after(
    any_store: RunStore, tmp_path: Path
) -> None:
    fleet = _fleet(any_store, tmp_path)
    view = RunsView(sort="run", descending=True, state="done")
    done = [f"r{n:02}" for n in reversed(range(RUNS)) if n % 3]
    page = fleet.window(view, limit=7, around="r14")
    at = done.index("r14")
    assert ids(page.rows) == done[at - 3 : at + 4]
    assert page.offset == at - 3 and page.total == len(done)
    assert page.more_before and page.more_after
    assert ids(fleet.window(view, limit=7, after=page.anchor).rows) == ids(page.rows)
    # The view's first run: nothing before it.
    top = fleet.window(view, limit=7, around=done[0])
    assert ids(top.rows) == done[:7] and top.offset == 0 and not top.more_before
    # A run the view does not hold: the view from its start.
    other = fleet.window(view, limit=7, around="r03")
    assert ids(other.rows) == done[:7] and other.offset == 0


def test_a_text_view_says_what_it_found_and_needs_a_human_filters_in_the_store(
    any_store: RunStore, tmp_path: Path
) -> None:
    fleet = _fleet(any_store, tmp_path)
    text = RunsView(text="LANE-1", sort="run", descending=False)
    page = fleet.window(text, limit=100)
    assert ids(page.rows) == [f"r{n:02}" for n in range(RUNS) if n % 2]
    # Matches are not counted (a rare text would walk every run): what was found, at least.
    assert (page.total, page.exact) == (RUNS // 2, True)  # the last page: all of them
    first = fleet.window(text, limit=5)
    assert (first.total, first.exact, first.more_after) == (6, False, True)
    waiting = fleet.window(RunsView(attention=True), limit=100)
    assert set(ids(waiting.rows)) == {f"r{n:02}" for n in range(0, RUNS, 3)}
    assert waiting.total == waiting.attention == 10


def test_a_page_around_a_run_under_a_text_holds_it_without_counting_its_place(
    any_store: RunStore, tmp_path: Path
) -> None:
    fleet = _fleet(any_store, tmp_path)
    view = RunsView(text="lane-0", sort="run", descending=False)
    page = fleet.window(view, limit=5, around="r14")
    assert ids(page.rows) == ["r10", "r12", "r14", "r16", "r18"]
    assert page.offset is None and page.more_before and page.more_after
    # Not held: the view from its start.
    assert ids(fleet.window(view, limit=2, around="r13").rows) == ["r00", "r02"]
    # The whole view in the page: its place and its size are known.
    alone = fleet.window(RunsView(text="r14"), limit=5, around="r14")
    assert ids(alone.rows) == ["r14"] and (alone.offset, alone.total, alone.exact) == (0, 1, True)
