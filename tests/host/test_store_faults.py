"""A store that cannot be written is a fault to wait out, never a verdict on a file.

The store is made full with ``PRAGMA max_page_count`` on the host's own connection (so this runs
everywhere): valid progress must stay where it is, nothing may be quarantined, the host must log
the fault once, keep trying, stay alive and still stop when asked; once there is room again,
every event must be ingested exactly once.
"""

from __future__ import annotations

import errno
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.host.config import load_config
from core.host.host import Host
from core.ipc import files
from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace
from tests.host.hostkit import connect, rows, wait_until
from tests.host.inproc import (
    LANE,
    LoopThread,
    host_in_process,
    reasons,
    write_progress,
)

RUN = "faults-run-1"
EVENTS = 40
#: Each summary is most of a page: the events cannot fit in a few free pages by luck.
SUMMARY = "x" * 3_000
WAIT_S = 60.0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    with host_in_process(ws, RUN):
        pass  # the store, its schema and a queued run
    # Poll every 20 ms (no watcher thread to reason about); no worker ever starts.
    (ws / "jarvis.toml").write_text(
        f'[workers]\nlane_concurrency = {{ "{LANE}" = 0 }}\n[watch]\npoll = true\n'
        "poll_interval_ms = 20\n"
    )
    return ws


@pytest.fixture
def loop(root: Path) -> Iterator[LoopThread]:
    workspace = Workspace.resolve(root)
    running = LoopThread(Host(workspace, load_config(workspace.root))).start()
    try:
        yield running
    finally:
        if running.thread.is_alive():
            running.stop()


def fill(store: SqliteStore) -> int:
    pages = int(store.rows("PRAGMA page_count")[0]["page_count"])
    store.db.execute(f"PRAGMA max_page_count = {pages}")
    return pages


def make_room(store: SqliteStore) -> None:
    store.db.execute("PRAGMA max_page_count = 1073741823")


def fault_logs(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "jarvis.host" and r.levelno >= logging.ERROR]


def stored_seqs(root: Path) -> list[int]:
    conn = connect(root)
    try:
        found = rows(conn, "SELECT seq FROM progress_events WHERE run_id = ? ORDER BY seq", [RUN])
        return [r["seq"] for r in found]
    finally:
        conn.close()


def progress_journal(root: Path) -> list[int]:
    conn = connect(root)
    try:
        found = rows(
            conn, "SELECT payload FROM journal WHERE run_id = ? AND kind = 'progress'", [RUN]
        )
        return sorted(json.loads(r["payload"])["seq"] for r in found)
    finally:
        conn.close()


def push(loop: LoopThread, count: int, start: int = 1) -> list[Path]:
    return [write_progress(loop.host, RUN, seq, SUMMARY) for seq in range(start, start + count)]


def test_a_full_store_keeps_the_files_and_ingests_each_once_when_room_returns(
    root: Path, loop: LoopThread, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="jarvis.host")
    loop.call(fill)
    pushed = push(loop, EVENTS)
    wait_until(
        lambda: loop.host.faults.attempts >= 3, WAIT_S, "the host to retry", lambda: caplog.text
    )

    assert loop.thread.is_alive()
    assert reasons(loop.host) == [], "a valid file was quarantined for the store's fault"
    assert all(path.exists() for path in pushed), "a file left its place"
    assert stored_seqs(root) == []
    (logged,) = fault_logs(caplog)  # once, however many attempts
    assert "full" in logged.getMessage(), logged.getMessage()

    loop.call(make_room)
    wait_until(
        lambda: (
            stored_seqs(root) == list(range(1, EVENTS + 1)) and not any(p.exists() for p in pushed)
        ),
        WAIT_S,
        "every event to be ingested",
        lambda: f"stored: {stored_seqs(root)}\n{caplog.text[-3000:]}",
    )
    assert progress_journal(root) == list(range(1, EVENTS + 1))
    assert reasons(loop.host) == []
    # The episode ends when the step that went through returns, a moment after its commit
    # (which is what made the files go): waited for, not assumed.
    wait_until(lambda: loop.host.faults.attempts == 0, WAIT_S, "the fault episode to end")
    assert any("again" in r.getMessage() for r in caplog.records if r.name == "jarvis.host")
    loop.stop()


def test_stop_during_a_store_fault_ends_the_host_and_loses_nothing(
    root: Path, loop: LoopThread
) -> None:
    loop.call(fill)
    pushed = push(loop, 5)
    wait_until(lambda: loop.host.faults.attempts >= 2, WAIT_S, "the host to retry")
    loop.stop()  # what SIGTERM does
    assert all(path.exists() for path in pushed)

    # The next host, with room, takes every event in once.
    with host_in_process(root) as again:
        again.sweep()
        again.sweep()
    assert stored_seqs(root) == [1, 2, 3, 4, 5]
    assert not any(path.exists() for path in pushed)


def test_a_quarantine_reason_that_cannot_be_written_does_not_end_the_host(
    root: Path, loop: LoopThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file goes back where it was and is refused again once the disk has room."""
    real_write = files.atomic_write_json
    disk_full = {"on": True}

    def write(path: Path, obj: Any) -> None:
        if disk_full["on"] and path.name.endswith(files.REASON_SUFFIX):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, obj)

    monkeypatch.setattr(files, "atomic_write_json", write)
    bad = loop.host.layout.progress_dir(LANE, RUN) / "00000001-1.json"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("not JSON at all")
    good = write_progress(loop.host, RUN, 2)
    wait_until(lambda: loop.host.faults.attempts >= 2, WAIT_S, "the host to retry")
    assert loop.thread.is_alive()
    assert bad.exists(), "the refused file must stay in place until its reason can be written"
    assert list(loop.host.layout.errors_dir.iterdir()) == []

    disk_full["on"] = False
    wait_until(lambda: not bad.exists() and not good.exists(), WAIT_S, "the files to be handled")
    (reason,) = reasons(loop.host)
    assert reason["code"] == "not_json" and reason["original_path"] == str(bad)
    assert stored_seqs(root) == [2]
    loop.stop()
