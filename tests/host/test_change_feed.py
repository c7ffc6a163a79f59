"""The host's change feed: a real host serves what changed; a console's read of it is the store's.

Each test runs the real `jarvis host` on a workspace and listens on its socket as a console
does (`core.service.change_feed.FeedListener`). What the feed says after a position must be
what the console would have read from the store itself (`jarvis_tui.feed.StoreFeed`): the same
journal entries, the same rows, the same counts; commits by other writers (a CLI, another
console) are in it too, since the feed reads the store, not the host's own commits. A reader
that missed something (it connected late, or the host died and another took over) is told it
cannot go on from the feed and reads the store.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from core.feed_wire import socket_path
from core.service.change_feed import FRESH_S, FeedListener
from core.service.window import RunsView
from core.store.changes import ChangeListener
from core.store.sqlite_store import SqliteStore
from jarvis_tui.feed import StoreFeed
from jarvis_tui.run_model import WindowAsk
from tests.host.hostkit import (
    HostProcess,
    dispatch,
    put_progress,
    queued_workspace,
    running_host,
    wait_until,
    write_config,
)

RUN = "run-feed-1"
WAIT_S = 60


def listen(ws: Path) -> FeedListener:
    listener = FeedListener(ws, ChangeListener())
    wait_until(lambda: listener.wait(0.2) is not None or listener.connected, WAIT_S,
               "the listener to connect to the host's feed")  # fmt: skip
    # The hello is the first line: the listener knows where the feed starts once it is read.
    wait_until(lambda: _hello(listener) is not None, WAIT_S, "the feed's hello")
    return listener


def _hello(listener: FeedListener) -> int | None:
    listener.wait(0.1)
    hello = listener._hello  # the position this connection's messages start from
    return None if hello is None else int(hello["seq"])


def ask_for(loaded: frozenset[str]) -> WindowAsk:
    return WindowAsk(RunsView(), None, 0, 50, 0, 0, loaded)


def follow(listener: FeedListener, position: int, target: int) -> None:
    """Let the listener read until the feed reaches ``target``."""

    def reached() -> bool:
        listener.wait(0.1)
        found = listener.changes_after(position)
        return found is not None and found.to_seq >= target

    wait_until(reached, WAIT_S, f"the feed to reach journal position {target}")


def test_what_the_feed_says_is_what_the_store_says(tmp_path: Path) -> None:
    ws, store = queued_workspace(tmp_path, RUN)
    with running_host(ws):
        listener = listen(ws)
        start = _hello(listener)
        assert start is not None
        for seq in range(1, 41):
            put_progress(ws, RUN, seq, f"step {seq}")
        # Another writer's commit (as a CLI's dispatch would be): the feed reads the store.
        dispatch(store, "run-feed-2")
        target = store.last_seq()
        wait_until(lambda: store.last_seq() >= target and _progress_in(store) == 40, WAIT_S,
                   "the host to ingest the 40 events")  # fmt: skip
        target = store.last_seq()
        follow(listener, start, target)
        fed = listener.changes_after(start)
        assert fed is not None and fed.changed
        # The same read from the store, as a console with no feed does it.
        plain = StoreFeed(ws / "jarvis.db")
        read = plain.read(start, ask_for(frozenset({RUN, "run-feed-2"})))
        assert read is not None
        assert [e["seq"] for e in fed.entries] == [e["seq"] for e in read.journal]
        assert {e["kind"] for e in fed.entries} == {"progress", "created"}
        assert fed.to_seq == read.last_seq == target
        assert fed.counts == read.counts == {"queued": 2}
        assert sorted(fed.rows) == [RUN, "run-feed-2"]
        # The run's row as the feed carries it is the row the store gives (through JSON).
        first = plain.read(None, ask_for(frozenset()))
        assert first is not None and first.page is not None
        stored = {row["run_id"]: row for row in first.page.rows}
        assert fed.rows[RUN]["last_progress_summary"] == "step 40"
        assert json.loads(json.dumps(stored[RUN], default=str)) == fed.rows[RUN]
        # A console with the feed reads the same, without the store's journal or rows.
        fed_feed = StoreFeed(ws / "jarvis.db")
        fed_feed.fed = listener
        via_feed = fed_feed.read(start, ask_for(frozenset({RUN, "run-feed-2"})))
        assert via_feed is not None and fed_feed.fed_reads == 1
        assert [e["seq"] for e in via_feed.journal] == [e["seq"] for e in read.journal]
        assert via_feed.counts == read.counts and via_feed.last_seq == read.last_seq
        assert via_feed.host_pid == read.host_pid is not None
        # What it took is let go; asked again from where it is now, nothing changed.
        again = fed_feed.read(
            via_feed.last_seq, ask_for(frozenset({RUN})), last_host=via_feed.host_pid
        )
        assert again is None
        assert fed_feed.opened == 1  # the window moved (a dispatch): one page read, no more
        listener.close()
        plain.close()
        fed_feed.close()
    store.close()


def _progress_in(store: SqliteStore) -> int:
    return store.progress_event_count()


def test_the_socket_is_the_owners_and_gone_after_the_host(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config(ws)
    SqliteStore(ws / "jarvis.db").close()
    with running_host(ws):
        wait_until(lambda: socket_path(ws).exists(), WAIT_S, "the feed's socket")
        mode = os.lstat(socket_path(ws)).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    assert not socket_path(ws).exists()


def test_a_reader_after_a_host_killed_reads_the_store_then_follows_the_new_host(
    tmp_path: Path,
) -> None:
    ws, store = queued_workspace(tmp_path, RUN)
    host = HostProcess(ws)
    try:
        host.wait_started()
        listener = listen(ws)
        start = _hello(listener)
        assert start is not None
        host.kill()  # its socket file stays behind
        assert socket_path(ws).exists()
        wait_until(lambda: listener.wait(0.2) is None and not listener.connected, WAIT_S,
                   "the listener to see the feed gone")  # fmt: skip
        assert listener.changes_after(start) is None  # no feed: the console reads the store
        dispatch(store, "run-feed-2")  # while no host runs: no feed carried it
        missed = store.last_seq()
        with running_host(ws):  # the dead host's socket is replaced
            listener._next_try = 0.0  # connect now rather than at the next retry
            wait_until(lambda: listener.wait(0.2) is not None or listener.connected, WAIT_S,
                       "the listener to connect to the new host")  # fmt: skip
            assert listener.connects == 2
            wait_until(lambda: _hello(listener) is not None, WAIT_S, "the new feed's hello")
            # What was committed with no host is before the new feed's first position: a reader
            # still at `start` must read the store; one that did goes on from the feed.
            assert listener.changes_after(start) is None
            put_progress(ws, RUN, 1, "after the restart")
            wait_until(lambda: _progress_in(store) == 1, WAIT_S, "the new host to ingest")
            follow(listener, missed, store.last_seq())
            fed = listener.changes_after(missed)
            assert fed is not None
            assert [e["kind"] for e in fed.entries] == ["progress"]
            assert fed.rows[RUN]["last_progress_summary"] == "after the restart"
        listener.close()
    finally:
        host.kill()
        store.close()


def _changes(start: int, end: int, kinds: list[str] | None, run: str = RUN) -> dict[str, object]:
    entries = None
    if kinds is not None:
        entries = [
            {"seq": start + i + 1, "run_id": run, "kind": kind} for i, kind in enumerate(kinds)
        ]
    return {"v": 1, "kind": "changes", "from_seq": start, "to_seq": end, "entries": entries,
            "rows": [{"run_id": run, "state": "queued"}], "counts": {"queued": 1},
            "burn": None, "cut": None,
            "hosts": [["h1", None, "live", "2026-11-28T03:00:00Z"]]}  # fmt: skip


def test_what_a_reader_may_take_from_the_feed_and_when_it_must_read_the_store(
    tmp_path: Path,
) -> None:
    """The merging rules, message by message (no host: the messages are handed in)."""
    listener = FeedListener(tmp_path, ChangeListener())
    listener._sock = object()  # type: ignore[assignment]  # as if connected
    listener._heard_at = time.monotonic()  # and heard from just now
    listener._keep({"v": 1, "kind": "hello", "seq": 10, "pid": 42})
    assert listener.changes_after(9) is None  # before the feed's start: read the store
    quiet = listener.changes_after(10)
    assert quiet is not None and not quiet.changed and quiet.pid == 42
    listener._keep(_changes(10, 12, ["progress", "progress"]))
    listener._keep(_changes(12, 13, ["progress"]))
    assert not listener.urgent_after(10)  # progress alone: a stream's pace
    fed = listener.changes_after(11)  # a reader part-way into the first message
    assert fed is not None and [e["seq"] for e in fed.entries] == [12, 13]
    assert fed.to_seq == 13 and fed.hosts[0].name == "h1" and fed.counts == {"queued": 1}
    listener._keep(_changes(13, 14, ["state_changed"]))
    assert listener.urgent_after(13) and listener.urgent_after(10)
    assert not listener.urgent_after(14)
    listener.consumed(13)
    assert listener.changes_after(12) is None  # what it let go is gone: read the store
    listener._keep(_changes(15, 16, ["progress"]))  # 14 → 15 never arrived
    assert listener.changes_after(14) is None
    listener._messages.clear()
    listener._keep(_changes(16, 900, None))  # too many for a message
    assert listener.changes_after(16) is None and listener.urgent_after(16)
    listener._messages.clear()
    listener._keep(_changes(16, 17, ["progress"]))
    assert listener.changes_after(16) is not None
    listener._heard_at = time.monotonic() - FRESH_S - 1  # a feed gone quiet: not a read
    assert listener.changes_after(16) is None
    listener._heard_at = time.monotonic()
    listener._sock = None
    assert listener.changes_after(16) is None  # not connected: read the store


def test_a_feed_that_fails_lets_its_consoles_go_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in the feed's thread ends the feed, not the host: its consoles are let go (they
    read the store themselves) and the failure is logged with its traceback."""
    from core.host.change_feed import ChangeFeed

    ws, store = queued_workspace(tmp_path, RUN)
    store.close()
    stopping = threading.Event()
    feed = ChangeFeed(ws / "jarvis.db", ws, stopping)

    def broken(self: ChangeFeed, *, tick: bool) -> str | None:
        raise RuntimeError("a bug in the feed")

    monkeypatch.setattr(ChangeFeed, "_publish", broken)
    feed.start()
    try:
        listener = FeedListener(ws, ChangeListener())
        wait_until(lambda: listener.wait(0.2) is None and listener.connects >= 1, WAIT_S,
                   "the listener to connect")  # fmt: skip
        wait_until(lambda: listener.wait(0.2) is None and not listener.connected, WAIT_S,
                   "the failed feed to let the listener go")  # fmt: skip
        assert listener.changes_after(0) is None  # it reads the store
        assert "the change feed stopped" in caplog.text and "a bug in the feed" in caplog.text
        listener.close()
    finally:
        stopping.set()
        feed.join()
    assert not socket_path(ws).exists()
