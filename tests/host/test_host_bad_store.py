"""The host, and the console that starts one, on a broken store: exit 2 with the store's
sentence (``host_unusable``), never a traceback, never a lock taken, the store left as it was."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.host.lock import HostLock
from tests.broken_stores import BREAK, OPEN_CODE, good_store
from tests.core.test_store_opening import fingerprint

#: Beyond this the host did not stop on its own: it took the broken store for a good one.
HANG_GUARD_S = 60


def jarvis(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real entry point in its own process: its exit code is what a service manager sees."""
    return subprocess.run(
        [sys.executable, "-m", "jarvis_cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.mark.parametrize("broken", list(BREAK))
def test_the_host_on_a_broken_store_exits_2_with_a_sentence(ws: Path, broken: str) -> None:
    db = ws / "jarvis.db"
    BREAK[broken](db)
    before = fingerprint(db)
    result = jarvis("host", "--workspace", ws, "--poll", "--json")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "host_unusable"
    assert str(db) in error["message"]
    # The damage is named: every mode but damage past the first page is told apart at opening.
    if OPEN_CODE[broken] == "store_empty":
        assert "history is missing" in error["message"]
    readable = jarvis("host", "--workspace", ws, "--poll")
    assert readable.returncode == 2 and "Traceback" not in readable.stderr
    assert readable.stderr.splitlines()[-1].startswith("jarvis: ")
    assert str(db) in readable.stderr.splitlines()[-1]
    assert HostLock.holder(ws) is None
    assert fingerprint(db) == before


@pytest.mark.parametrize("broken", list(BREAK))
def test_the_console_on_a_broken_store_exits_2_with_a_sentence(ws: Path, broken: str) -> None:
    db = ws / "jarvis.db"
    BREAK[broken](db)
    try:
        # The console starts a host first; damage only a full read finds stops that host, and
        # the console reports it with the end of the host's log.
        result = jarvis("tui", "--workspace", ws)
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
        assert result.stderr.startswith("jarvis: ")
        assert str(db) in result.stderr
        assert HostLock.holder(ws) is None
    finally:
        jarvis("host", "--stop", "--workspace", ws)


def start_host(ws: Path) -> tuple[subprocess.Popen[str], str]:
    """A host on ``ws``, once it holds the workspace; then stopped, with what it logged."""
    host = subprocess.Popen(
        [sys.executable, "-m", "jarvis_cli", "host", "--workspace", str(ws), "--poll"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while HostLock.holder(ws) != host.pid and host.poll() is None:
            assert time.monotonic() < deadline, "the host never took the workspace"
            time.sleep(0.02)
        held = HostLock.holder(ws) == host.pid
    finally:
        host.terminate()
        _, log = host.communicate(timeout=HANG_GUARD_S)
    assert held, log
    return host, log


def test_the_host_creates_a_workspace_and_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "new" / "ws"
    host, log = start_host(ws)
    assert host.returncode == 0
    assert f"created a new workspace store at {ws.resolve() / 'jarvis.db'}" in log


def test_a_good_store_passes_the_hosts_check(ws: Path) -> None:
    good_store(ws / "jarvis.db")
    host, log = start_host(ws)
    assert host.returncode == 0 and "created" not in log


def test_the_console_waits_longer_for_a_host_that_reads_a_larger_store(tmp_path: Path) -> None:
    from core.host.launcher import START_TIMEOUT_S
    from jarvis_cli.tui import SLOW_DISK_BYTES_PER_S, host_start_timeout

    db = tmp_path / "jarvis.db"
    assert host_start_timeout(db) == START_TIMEOUT_S  # none yet: a new store is small
    with db.open("wb") as handle:
        handle.truncate(1024**3)  # sparse: a gigabyte's size without its blocks
    assert host_start_timeout(db) == START_TIMEOUT_S + 1024**3 / SLOW_DISK_BYTES_PER_S
