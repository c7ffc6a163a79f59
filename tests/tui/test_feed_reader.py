"""The console reads through one long-lived connection: many polls from worker threads, one
connection, every commit seen; a failed read or a close opens a fresh one next time."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from jarvis_tui.feed import StoreFeed
from jarvis_tui.run_model import RunModel
from tests.core.store_helpers import make_run

#: The window a fresh console asks for.
ASK = RunModel().ask()


def test_polls_from_many_threads_share_one_connection_and_see_every_commit(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    feed = StoreFeed(tmp_path / "jarvis.db")
    try:
        first = feed.read(None, ASK)
        assert first is not None
        seen = [first.last_seq]
        errors: list[BaseException] = []

        def poll() -> None:
            try:
                for _ in range(10):
                    read = feed.read(None, ASK)
                    assert read is not None
            except BaseException as exc:  # reported below, with the thread's failure
                errors.append(exc)

        for n in range(5):
            make_run(store, f"r{n}", RunState.QUEUED)  # a writer commits between polls
            later = feed.read(seen[-1], ASK)
            assert (
                later is not None
                and later.page is not None
                and f"r{n}" in {r["run_id"] for r in later.page.rows}
            )
            seen.append(later.last_seq)
            threads = [threading.Thread(target=poll) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert errors == []
        assert feed.opened == 1
    finally:
        feed.close()
        store.close()


def test_a_failed_read_or_a_close_opens_a_fresh_connection_next_time(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    make_run(store, "r1", RunState.RUNNING)
    feed = StoreFeed(tmp_path / "jarvis.db")
    try:
        assert feed.read(None, ASK) is not None and feed.opened == 1
        with pytest.raises(RuntimeError), feed._reading():
            raise RuntimeError("the read failed")
        assert feed.read(None, ASK) is not None and feed.opened == 2
        feed.close()
        assert feed.run_view("r1", journal_limit=5).detail is not None and feed.opened == 3
    finally:
        feed.close()
        store.close()
