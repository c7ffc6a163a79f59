"""A big store shows its newest runs first, while the whole run list is read behind them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from jarvis_tui import feed as feed_module
from jarvis_tui.feed import StoreFeed
from jarvis_tui.messages import StoreChanged
from jarvis_tui.screens.main_screen import MainScreen
from tests.core.store_helpers import dispatch_doc
from tests.tui.helpers import make_app, settle, table

RUNS = 12


@pytest.fixture
def many(tmp_path: Path) -> Path:
    db = tmp_path / "jarvis.db"
    store = SqliteStore(db)
    try:
        for n in range(RUNS):
            submit_dispatch(store, dispatch_doc(f"run-{n:02d}"), source_lane="main",
                            target_lane="jarvis-worker-1", actor="test")  # fmt: skip
            store.db.execute(  # distinct creation times: run-11 is the newest
                "UPDATE runs SET created_at = ? WHERE run_id = ?",
                [f"2026-01-02T09:{n:02d}:00.000Z", f"run-{n:02d}"],
            )
            store.db.conn.commit()
    finally:
        store.close()
    return db


def test_the_first_page_is_the_newest_runs_with_every_runs_counts(many: Path) -> None:
    feed = StoreFeed(many)
    page = feed.first_page(limit=5)
    assert page is not None and page.partial and page.full
    assert sorted(row["run_id"] for row in page.rows) == [f"run-{n:02d}" for n in range(7, 12)]
    assert sum(page.counts.values()) == RUNS
    whole = feed.read(None)
    assert whole is not None and not whole.partial and page.last_seq == whole.last_seq
    assert feed.first_page(limit=RUNS) is None  # nothing to gain: the full read is as quick


async def test_the_console_shows_the_newest_page_then_every_run(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed_module, "FIRST_PAGE", 4)
    seen: list[tuple[bool, int, int, str]] = []
    handle = MainScreen._show_view_line

    def recording(self: MainScreen) -> None:
        handle(self)
        line = self.query_one("#view-line", Static).content
        whole = self.store_sync.whole
        seen.append((whole, table(self.app).row_count, len(self.model.rows), str(line)))

    monkeypatch.setattr(MainScreen, "_show_view_line", recording)
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        paged = [s for s in seen if s[2] == 4]
        assert paged, seen
        whole, shown, _known, line = paged[0]
        assert not whole and shown == 4
        assert "the newest 4 of 12" in line and "reading the rest" in line
        assert table(app).run_ids[0] == "run-11"  # the newest on top from the first paint
        assert seen[-1][:3] == (True, RUNS, RUNS)
        assert "12 of 12" in seen[-1][3] and "reading" not in seen[-1][3]
        assert table(app).run_ids[0] == "run-11" and table(app).row_count == RUNS


async def test_a_first_page_arriving_after_the_whole_list_is_ignored(many: Path) -> None:
    app = make_app(many)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert table(app).row_count == RUNS
        page = StoreFeed(many).first_page(limit=3)
        assert page is not None
        app.main.post_message(StoreChanged(page))
        await settle(pilot)
        assert table(app).row_count == RUNS and len(app.main.model.rows) == RUNS
