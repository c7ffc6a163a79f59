"""Asking who holds a workspace never stops a host from taking it.

`HostLock.holder` used to take the lock for an instant; a host starting in that instant was told
another host ran. These tests race real processes against each other: one asks `holder()` in a
tight loop while another takes and releases the lock, or starts a real host, again and again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.host.lock import HostLock, HostLockHeld
from tests.host.hostkit import HostProcess, write_config

pytestmark = pytest.mark.slow

_HAMMER = """
import sys, time
from pathlib import Path
from core.host.lock import HostLock
root = Path(sys.argv[1])
print("ready", flush=True)
seen = 0
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    if HostLock.holder(root) is not None:
        seen += 1
print(seen, flush=True)
"""


@contextmanager
def hammering(root: Path, seconds: float = 30.0) -> Iterator[subprocess.Popen[str]]:
    """A process calling `HostLock.holder(root)` as fast as it can."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HAMMER, str(root), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_holder_never_blocks_an_acquire(tmp_path: Path) -> None:
    # No retry at all: with the old probing holder() this failed within a few hundred rounds.
    lock = HostLock(tmp_path)
    deadline = time.monotonic() + 3.0
    rounds = 0
    with hammering(tmp_path):
        while time.monotonic() < deadline or rounds < 200:
            try:
                lock.acquire(wait_s=0)
            except HostLockHeld:
                pytest.fail(f"acquire was refused on round {rounds} while only holder() ran")
            lock.release()
            rounds += 1
    assert rounds >= 200


def test_holder_sees_the_holder_and_its_release_without_taking_the_lock(tmp_path: Path) -> None:
    assert HostLock.holder(tmp_path) is None  # no file yet
    lock = HostLock(tmp_path)
    lock.acquire()
    try:
        assert HostLock.holder(tmp_path) == os.getpid()
        # A second opener is refused while we hold it, and holder() still names us after.
        with pytest.raises(HostLockHeld):
            HostLock(tmp_path).acquire(wait_s=0.05)
        assert HostLock.holder(tmp_path) == os.getpid()
    finally:
        lock.release()
    assert HostLock.holder(tmp_path) is None


def test_a_stale_pid_in_the_file_is_not_a_holder(tmp_path: Path) -> None:
    # A host killed with -9 leaves its pid in the file; the lock itself is gone.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "host.lock").write_text(f"{dead.pid}\n")
    assert HostLock.holder(tmp_path) is None


def test_real_hosts_start_while_holder_is_hammered(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config(ws)
    with hammering(ws):
        for attempt in range(3):
            host = HostProcess(ws, log_name=f"host-{attempt}.log")
            try:
                host.wait_started()
                assert HostLock.holder(ws) == host.pid
            finally:
                assert host.stop() == 0, host.log()
            assert "already running" not in host.log()
    assert HostLock.holder(ws) is None
