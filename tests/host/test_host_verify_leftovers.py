"""A criterion command never outlives its host, and never runs twice for one run.

The real host, a real ``kill -9`` of it while a criterion command runs, and a restarted host:
the command the dead host left is killed before the run is verified again, and SIGTERM ends the
second verification's command with its host — each time with the children it put beyond its
process group (a ``setsid`` child, a daemon).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from core.host.verification import WORKSPACE_MARK
from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.criteria.helpers import alive
from tests.host.hostkit import (
    HostProcess,
    assert_no_workers,
    run_row,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.slow

#: Starts a child in a session of its own and a daemon (double fork, then setsid), neither of
#: which a process group holds; the daemon, the last in place, leaves a file named for this run
#: of the check (not a pid: inside its namespace a command's pid is its own, not the host's).
#: Then it runs far longer than the test.
CHECK = (
    "import os, pathlib, subprocess, sys, time, uuid\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
    "                 start_new_session=True)\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        pathlib.Path(f'check-{uuid.uuid4().hex}.started').write_text('')\n"
    "        time.sleep(600)\n"
    "    os._exit(0)\n"
    "time.sleep(600)\n"
)


def _verification_commands(ws: Path) -> list[int]:
    """Live processes marked as criterion commands of this workspace (read from outside)."""
    mark = f"{WORKSPACE_MARK}={ws.resolve()}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if mark in environ and alive(int(entry)):
            found.append(int(entry))
    return found


def _started(checkout: Path) -> int:
    return len(list(checkout.glob("check-*.started")))


def test_a_restarted_host_kills_the_check_its_predecessor_left_before_verifying_again(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, concurrency=1, shutdown_grace_s=1)
    interpreter = Path(sys.executable).name
    with (ws / "jarvis.toml").open("a") as config:
        config.write(f'[criteria]\nallow = ["{interpreter}"]\n')
    criterion = {"type": "command_success", "description": "the long check passes",
                 "command": [interpreter, "-c", CHECK]}  # fmt: skip
    doc = dispatch_doc("long-check", input="Fix the retry counter. sim:ok",
                       acceptance_criteria=[criterion])  # fmt: skip
    assert submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                           actor="test").outcome == "enqueued"  # fmt: skip
    checkout = ws / "checkouts" / "long-check"

    first = HostProcess(ws, log_name="host-1.log")
    second: HostProcess | None = None
    try:
        first.wait_started()
        wait_until(lambda: _started(checkout) == 1, 40, "the first check to run", first.log)
        # Recorded before it ran: the group a restarted host will look for.
        group = run_row(conn, "long-check")["verify_pgid"]
        orphans = set(_verification_commands(ws))
        # contain, the namespace's init, the check, its session child and its daemon.
        assert group in orphans and len(orphans) >= 5
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(10)
        assert all(alive(pid) for pid in orphans), "the check should outlive a kill -9 of its host"

        second = HostProcess(ws, log_name="host-2.log")
        second.wait_started()
        wait_until(lambda: _started(checkout) == 2, 40, "the restarted host to verify again",
                   second.log)  # fmt: skip
        # The leftover was killed in recovery, before the loop that starts verifications.
        wait_until(lambda: not any(alive(pid) for pid in orphans), 10,
                   "the leftover check to be killed", second.log)  # fmt: skip
        again = run_row(conn, "long-check")["verify_pgid"]
        assert again not in orphans and again in _verification_commands(ws)

        assert second.stop(timeout=15) == 0
        wait_until(
            lambda: not _verification_commands(ws), 10, "the second check to end with its host"
        )
        run = run_row(conn, "long-check")
        assert (run["state"], run["verification_state"]) == ("running", "verifying")
        assert run["verify_pgid"] is None
    finally:
        first.kill()
        if second is not None:
            second.kill()
        for pid in _verification_commands(ws):
            os.kill(pid, signal.SIGKILL)
        assert_no_workers(ws)


def test_a_group_that_is_not_ours_is_left_alone(tmp_path: Path) -> None:
    """A recorded group id whose processes lack the markers is someone else's now."""
    import subprocess

    from core.host.verification import kill_leftover

    stranger = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
    )
    try:
        assert not kill_leftover(stranger.pid, tmp_path, "long-check")
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()
