"""A console on PostgreSQL wakes on the store's NOTIFY (its poll is only the safety net), and
reads the store's hosts at every read, whether or not anything else changed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from core.host.fleet import Lease
from core.lifecycle import RunState
from core.store.changes import PostgresListener
from core.store.location import open_store
from jarvis_tui.feed import StoreFeed
from jarvis_tui.run_model import RunModel
from tests.core.store_helpers import make_run
from tests.processes import HANG_GUARD_S
from tests.tui.helpers import make_app, wait_for

#: The window a fresh console asks for.
ASK = RunModel().ask()


async def test_a_console_on_postgresql_wakes_on_a_change_without_polling(
    pg_url: str, tmp_path: Path
) -> None:
    store = open_store(pg_url)
    make_run(store, "r1", RunState.QUEUED)
    # The poll is an hour away: only the store's announcement can bring the change in.
    app = make_app(tmp_path / "jarvis.db", store_at=pg_url, live=True, poll_interval=3600)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "r1" in app.main.model.rows)
        sync = app.main.store_sync
        assert sync.listener.hears_changes
        make_run(store, "r2", RunState.QUEUED)  # another process's commit, in effect
        await wait_for(pilot, lambda: "r2" in app.main.model.rows)
    assert sync.listener.closed  # the console left: its listener with it
    store.close()


async def test_a_change_committed_before_the_console_listens_is_read_once_it_listens(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit between the console's first read and its LISTEN is announced to nobody: the
    console must read once the LISTEN is in effect, or it would wait for its safety poll."""
    store = open_store(pg_url)
    make_run(store, "r1", RunState.QUEUED)
    first_read = threading.Event()
    committed = threading.Event()
    read, connection = StoreFeed.read, PostgresListener._connection

    def reading(self: StoreFeed, *args: Any, **kwargs: Any) -> Any:
        try:
            return read(self, *args, **kwargs)
        finally:
            first_read.set()

    def connecting(self: PostgresListener) -> Any:
        if not committed.is_set():
            # The window, held open: the first read has been read, the LISTEN not issued.
            first_read.wait(HANG_GUARD_S)
            writer = open_store(pg_url)
            make_run(writer, "r2", RunState.QUEUED)
            writer.close()
            committed.set()
        return connection(self)

    monkeypatch.setattr(StoreFeed, "read", reading)
    monkeypatch.setattr(PostgresListener, "_connection", connecting)
    app = make_app(tmp_path / "jarvis.db", store_at=pg_url, live=True, poll_interval=3600)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, committed.is_set)
        await wait_for(pilot, lambda: "r2" in app.main.model.rows)
    store.close()


def test_the_feed_reads_the_hosts_at_every_read_whatever_else_changed(tmp_path: Path) -> None:
    store = open_store(tmp_path / "jarvis.db")
    feed = StoreFeed(tmp_path / "jarvis.db")
    lease = Lease(store, "h1", tmp_path, ["jarvis-worker-1"], 0.1, 3600.0)
    lease.register()
    first = feed.read(None, ASK)
    assert first is not None
    (line,) = feed.hosts
    assert (line.name, line.lanes, line.state) == ("h1", ("jarvis-worker-1",), "live")
    with store.transaction() as tx:  # as if a second had passed since
        tx.execute("UPDATE hosts SET heartbeat_at = '2000-01-01T00:00:00.000Z'", [])
    # A heartbeat: nothing to read, but its age is fresh for the header.
    assert lease.renew().outcome == "kept"
    assert feed.read(first.last_seq, ASK, last_host=first.host_pid) is None
    assert feed.hosts[0].heartbeat_at > "2000-01-01T00:00:00.000Z"
    with store.transaction() as tx:
        tx.execute("UPDATE hosts SET lease_until = '2000-01-01T00:00:00.000Z'", [])
    assert feed.read(first.last_seq, ASK, last_host=first.host_pid) is None
    assert feed.hosts[0].state == "lost"
    lease.end()  # a stopped host is history: not shown
    assert feed.read(first.last_seq, ASK, last_host=first.host_pid) is None
    assert feed.hosts == ()
    feed.close()
    store.close()
