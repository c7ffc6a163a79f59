"""The header says what the fleet's agents have spent, when any reported it; the feed reads it."""

from __future__ import annotations

from pathlib import Path

from core.ipc.payloads import Usage
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from jarvis_tui.feed import StoreFeed
from jarvis_tui.run_model import RunModel
from jarvis_tui.widgets.status_header import render_status
from tests.core.store_helpers import make_run

#: The window a fresh console asks for.
ASK = RunModel().ask()

BURN = {"tokens_in": 120_000, "tokens_out": 8_000, "cost_usd": 1.234}


def test_the_header_shows_the_burn_and_gives_it_up_before_the_path() -> None:
    wide = render_status(Path("/srv/ws"), {}, host=42, burn=BURN, read_at="10:00:00").plain
    assert "spent 120.0k in · 8.0k out · $1.23" in wide.splitlines()[0]
    assert "spent" not in render_status(Path("/srv/ws"), {}, host=42).plain
    narrow = render_status(Path("/srv/a-long-workspace-path"), {}, host=42, burn=BURN,
                           read_at="10:00:00", width=48).plain  # fmt: skip
    first = narrow.splitlines()[0]
    assert len(first) <= 48 and "spent" not in first  # the path keeps its room


def test_the_feed_reads_the_burn_of_every_run(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        make_run(store, "r1", RunState.RUNNING)
        feed = StoreFeed(tmp_path / "jarvis.db")
        first = feed.read(None, ASK)
        assert first is not None and first.burn is None
        with store.transaction() as tx:
            tx.record_usage("r1", 1, 5, Usage(tokens_in=10, tokens_out=2, cost_usd=0.5))
            tx.touch_run("r1", changes={}, kind="progress", payload={}, actor="test")
        later = feed.read(first.last_seq, ASK)
        assert later is not None and later.burn == {"tokens_in": 10, "tokens_out": 2,
                                                    "cost_usd": 0.5,
                                                    "cost_computed": False}  # fmt: skip
    finally:
        store.close()
