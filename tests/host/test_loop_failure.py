"""A host whose loop fails on a bug stops, and says so: it never stays up with a live lease and
a loop that does nothing (the heartbeat kept renewing while nothing else ran)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from core.host.config import load_config
from core.host.host import Host, HostFailed
from core.host.lock import HostLock
from core.store.hosts import lease_state
from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace
from tests.host.hostkit import write_config
from tests.processes import HANG_GUARD_S


def test_a_loop_that_fails_stops_the_host_ends_its_lease_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_config(root)
    with (root / "jarvis.toml").open("a") as config:
        config.write('[host]\nname = "h1"\nheartbeat_s = 0.05\nlease_s = 30\n')
    workspace = Workspace.resolve(root)
    host = Host(workspace, load_config(root))
    scheduled = threading.Event()

    def broken() -> None:  # a bug in one of the loop's steps, met after the host is up
        scheduled.set()
        raise ArithmeticError("a sum that overflowed")

    host.launching.schedule = broken  # type: ignore[method-assign]
    failed: list[BaseException] = []

    def run() -> None:
        try:
            host.run()
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, name="host-under-test")
    with caplog.at_level(logging.INFO, logger="jarvis.host"):
        thread.start()
        thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), "the host stayed up after its loop failed"
    assert scheduled.is_set()
    assert len(failed) == 1 and isinstance(failed[0], HostFailed)
    assert "ArithmeticError: a sum that overflowed" in str(failed[0])
    assert "stops: its loop failed" in caplog.text
    assert not [t for t in threading.enumerate() if t.name == "heartbeat" and t.is_alive()]
    assert HostLock.holder(root) is None
    store = SqliteStore(root / "jarvis.db")
    try:
        assert lease_state(store.host("h1") or {}, store.now()) == "stopped"
    finally:
        store.close()


def test_a_statement_the_store_refuses_is_a_bug_of_the_loop_not_a_fault_of_the_store(
    tmp_path: Path,
) -> None:
    # The backend speaks the store's errors (a QueryError, a StoreError): the host still tells
    # a statement of its own that the database refused from a store it cannot use.
    root = tmp_path / "ws"
    root.mkdir()
    write_config(root)
    host = Host(Workspace.resolve(root), load_config(root))

    def broken() -> None:
        host.store.rows("SELECT * FROM no_such_table")

    host.launching.schedule = broken  # type: ignore[method-assign]
    failed: list[BaseException] = []

    def run() -> None:
        try:
            host.run()
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, name="host-under-test")
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), "the host stayed up after its loop failed"
    assert len(failed) == 1 and isinstance(failed[0], HostFailed), failed
    assert "no_such_table" in str(failed[0])
    assert HostLock.holder(root) is None
