"""Asking who holds a workspace never stops a host from taking it.

`HostLock.holder` used to take the lock for an instant; a host starting in that instant was told
another host ran. These tests race real processes against each other: one asks `holder()` in a
tight loop while another takes and releases the lock, or starts a real host, again and again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.host.lock import HostLock, HostLockHeld
from tests.host.hostkit import HostProcess, write_config
from tests.processes import PipedProcess

pytestmark = pytest.mark.slow

_HAMMER = """
import sys
from pathlib import Path
from core.host.lock import HostLock
root = Path(sys.argv[1])
HostLock.holder(root)
print("ready", flush=True)
while True:
    HostLock.holder(root)
"""

#: Acquire-release rounds against the hammer: the old probing holder() failed within a few
#: hundred, so this many make a pass mean something on any machine, fast or loaded.
ROUNDS = 20_000


@contextmanager
def hammering(root: Path) -> Iterator[PipedProcess]:
    """A process calling `HostLock.holder(root)` as fast as it can, until the block ends."""
    with PipedProcess([sys.executable, "-c", _HAMMER, str(root)]) as proc:
        assert proc.next_line("the hammer to start") == "ready"
        yield proc
        assert proc.returncode is None, f"the hammer died:\n{proc.stderr}"


def test_holder_never_blocks_an_acquire(tmp_path: Path) -> None:
    # No retry at all: a refusal on any round is the bug.
    lock = HostLock(tmp_path)
    with hammering(tmp_path):
        for round_ in range(ROUNDS):
            try:
                lock.acquire(wait_s=0)
            except HostLockHeld:
                pytest.fail(f"acquire was refused on round {round_} while only holder() ran")
            lock.release()


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
