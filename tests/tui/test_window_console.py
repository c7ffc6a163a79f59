"""The console holds a window of the view, never the whole table: a page at first, more as the
cursor nears an end, the view's last page on End, a filter or a go-to answered by the store
from every run, and never more rows than the window's bound however far the operator goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.intake import submit_dispatch
from core.service import window as window_service
from core.store.sqlite_store import SqliteStore
from jarvis_tui.feed import StoreFeed
from jarvis_tui.run_model import MOST, PAGE
from tests.core.store_helpers import dispatch_doc
from tests.tui.helpers import make_app, settle, table, wait_for, wait_for_palette_hit

RUNS = 3 * MOST // 2 + 7  # more than the window holds, and not a whole number of pages


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("many") / "jarvis.db"
    store = SqliteStore(db)
    try:
        for n in range(RUNS):
            submit_dispatch(store, dispatch_doc(f"run-{n:04d}"), source_lane="main",
                            target_lane=f"jarvis-worker-{n % 3 + 1}", actor="test")  # fmt: skip
        with store.transaction() as tx:  # distinct creation times: the last run is the newest
            for n in range(RUNS):
                stamp = f"2026-01-02T{n // 60:02d}:{n % 60:02d}:00.000Z"
                tx.execute("UPDATE runs SET created_at = ? WHERE run_id = ?",
                           [stamp, f"run-{n:04d}"])  # fmt: skip
    finally:
        store.close()
    return db


def newest(n: int) -> str:
    """The run ``n`` places from the top of the default view (newest first)."""
    return f"run-{RUNS - 1 - n:04d}"


async def test_the_first_read_is_a_page_and_the_header_counts_every_run(many: Path) -> None:
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        runs = table(app)
        assert runs.row_count == PAGE and runs.run_ids[0] == newest(0)
        assert len(app.main.model.rows) == PAGE
        assert runs.total == RUNS and runs.more_after and not runs.more_before
        line = str(app.main.query_one("#view-line").render())
        assert f"{RUNS:,} of {RUNS:,}" in line


async def test_going_down_reads_on_and_the_window_stays_bounded(many: Path) -> None:
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        runs = table(app)
        presses = 0
        while runs.current != newest(RUNS - 1) and presses < RUNS:  # to the end of the view
            await pilot.press("pagedown")
            await settle(pilot)
            presses += 1
            assert len(app.main.model.rows) <= MOST + 1
            assert runs.row_count <= MOST
        # A page a press: the lines read on ahead of the cursor, it never waited at an end.
        assert presses == -(-(RUNS - 1) // max(1, runs.size.height - 1))
        assert runs.current == newest(RUNS - 1)  # the view's last run, reached page by page
        assert not runs.more_after and runs.more_before
        # Every run was passed through once, in order: the window's offset says where it is.
        assert runs.first_at == RUNS - runs.row_count
        await pilot.press("up")
        assert runs.current == newest(RUNS - 2)


async def test_end_and_home_read_the_views_ends(many: Path) -> None:
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        runs = table(app)
        await pilot.press("end")
        await wait_for(pilot, lambda: runs.current == newest(RUNS - 1))
        assert runs.first_at == RUNS - runs.row_count and not runs.more_after
        await pilot.press("home")
        await wait_for(pilot, lambda: runs.current == newest(0))
        assert runs.first_at == 0 and not runs.more_before


async def test_a_filter_finds_runs_the_window_never_held(many: Path) -> None:
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        oldest = f"run-{0:04d}"
        assert oldest not in table(app).run_ids
        await pilot.press("slash", *oldest, "enter")
        await settle(pilot)
        assert table(app).run_ids == [oldest] and table(app).current == oldest
        line = str(app.main.query_one("#view-line").render())
        assert f"1 of {RUNS:,}" in line


async def test_going_to_a_run_far_outside_the_window_reads_around_it(many: Path) -> None:
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        far = newest(RUNS - 40)
        assert far not in table(app).run_ids
        await pilot.press("ctrl+p", *f"go to run {far}")
        await wait_for_palette_hit(pilot, far)
        await pilot.press("enter")
        await settle(pilot)
        runs = table(app)
        assert runs.current == far and far in runs.run_ids
        # Around it: the runs before it too, and where it sits in the view.
        assert runs.first_at is not None
        assert runs.first_at + runs.run_ids.index(far) == RUNS - 40
        await pilot.press("down")
        assert runs.current == newest(RUNS - 39)


async def test_a_rare_texts_matches_stream_in_a_walk_at_a_time(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each read walks 50 runs: the 100 oldest runs, the matches, lie 500 runs down the view.
    monkeypatch.setattr(window_service, "SCAN_LIMIT", 50)
    walks: list[object] = []
    read = StoreFeed.window

    def counted(self: StoreFeed, *args: object, **kwargs: object) -> object:
        walks.append(kwargs.get("after"))
        return read(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(StoreFeed, "window", counted)
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        walks.clear()
        await pilot.press("slash", *"run-00")
        expected = [f"run-{n:04d}" for n in reversed(range(100))]
        await wait_for(pilot, lambda: table(app).run_ids == expected)
        assert app.main.model.walked_to is None and not table(app).more_after
        # Each walk went on from where the last stopped: no stretch of runs walked twice.
        marks = [mark for mark in walks if mark is not None]
        assert len(marks) == len(set(marks)) and len(marks) <= RUNS // 50 + 1
