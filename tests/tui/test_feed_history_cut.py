"""A console whose position is below the journal's horizon is told, and reads its window again
instead of going on from the entries that are left (which would skip the removed ones)."""

from __future__ import annotations

from pathlib import Path

from core.lifecycle import RunState
from core.store.api import RunStore
from jarvis_tui.feed import StoreFeed
from jarvis_tui.run_model import RunModel
from tests.backends import StepClock
from tests.core.store_helpers import make_run
from tests.store.test_retention import DAY_S, DONE

ASK = RunModel().ask()


def test_a_reader_from_below_the_horizon_is_told_and_reads_its_window_again(
    any_store: RunStore, clock: StepClock, tmp_path: Path
) -> None:
    location = any_store.path if any_store.path is not None else any_store.url  # type: ignore[attr-defined]
    feed = StoreFeed(tmp_path / "jarvis.db", store_at=location)
    try:
        make_run(any_store, "early", RunState.RUNNING)
        first = feed.read(None, ASK)
        assert first is not None
        behind = first.last_seq  # a console that read then, and was away since
        make_run(any_store, "old-done", RunState.DONE)
        clock.advance(10 * DAY_S)
        make_run(any_store, "new", RunState.QUEUED)
        ahead = any_store.last_seq()
        with any_store.transaction() as tx:
            assert tx.remove_history("journal", DONE, 7).removed > 0
        # The console that was away: told, its window read again, no entries handed on.
        read = feed.read(behind, ASK)
        assert read is not None and read.cut == any_store.journal_horizon() > behind + 1
        assert read.page is not None and read.journal == []
        assert {"early", "old-done", "new"} <= {r["run_id"] for r in read.page.rows}
        # A console that had seen past the removed entries goes on as before.
        make_run(any_store, "newer", RunState.QUEUED)
        later = feed.read(ahead, ASK)
        assert later is not None and later.cut is None
        assert {e["run_id"] for e in later.journal} == {"newer"}
    finally:
        feed.close()
