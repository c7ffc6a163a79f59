"""Nothing a criterion command starts outlives it: not a ``setsid`` child, not a daemon.

A process group does not hold a child that starts a session of its own: ``setsid sleep 300 &``
once outlived its criterion by the whole five minutes. Every command now runs under
`core.criteria.contain`: in a PID namespace (as root, or in a user namespace of the same user),
else under a subreaper whose tree is killed. Each way is forced here in turn (``auto`` is what
runs for real); the processes are found from outside, in /proc, by a marker in their
environment, after the command ended, after its time limit, after a cancel, after the death of
the process that ran it, and after a host's recovery.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.criteria.runner import Containment, RunResult, Supervision, run_command
from core.host.verification import kill_leftover, markers
from tests.criteria.helpers import HELPER_LIMIT_S, Marked, wait_for_file
from tests.processes import HANG_GUARD_S

MODES: list[Containment] = ["auto", "pid", "user", "subreaper"]
ENV = {"PATH": "/usr/bin:/bin"}

#: A child in a session of its own, and a daemon (double fork, then setsid): each writes a file
#: once it is in place, and the command waits for both before it goes on.
ESCAPE = (
    "setsid sh -c ': > session; exec sleep 300' &\n"
    "( setsid sh -c ': > daemon; exec sleep 300' & )\n"
    "until [ -e session ] && [ -e daemon ]; do sleep 0.01; done\n"
)


def _run(
    tmp_path: Path,
    marked: Marked,
    mode: Containment,
    then: str,
    *,
    timeout_s: float = HANG_GUARD_S,
    supervision: Supervision | None = None,
) -> RunResult:
    return run_command(
        ["/bin/sh", "-c", ESCAPE + then],
        cwd=tmp_path,
        env={**ENV, **marked.env()},
        timeout_s=timeout_s,
        keep_bytes=4096,
        supervision=supervision,
        containment=mode,
    )


@pytest.mark.parametrize("mode", MODES)
def test_nothing_is_left_once_the_command_ends(tmp_path: Path, mode: Containment) -> None:
    marked = Marked()
    try:
        result = _run(tmp_path, marked, mode, "echo started")
        assert (result.returncode, result.timed_out, result.tail) == (0, False, b"started\n")
        assert marked.gone(), f"left running: {marked.processes()}"
    finally:
        marked.kill()


@pytest.mark.parametrize("mode", MODES)
def test_nothing_is_left_once_the_time_limit_kills_it(tmp_path: Path, mode: Containment) -> None:
    marked = Marked()
    try:
        result = _run(tmp_path, marked, mode, "echo started; exec sleep 300",
                      timeout_s=HELPER_LIMIT_S)  # fmt: skip
        # Killed at the limit, and only once both children were in place: else this proves
        # nothing, and says so.
        assert result.timed_out and result.tail == b"started\n", result
        assert marked.gone(), f"left running: {marked.processes()}"
    finally:
        marked.kill()


@pytest.mark.parametrize("mode", MODES)
def test_nothing_is_left_once_a_cancel_stops_it(tmp_path: Path, mode: Containment) -> None:
    marked = Marked()
    cancel = threading.Event()

    def cancel_once_started() -> None:
        wait_for_file(tmp_path / "started")
        cancel.set()

    helper = threading.Thread(target=cancel_once_started, daemon=True)
    helper.start()
    try:
        watch = Supervision(cancel=cancel, started=lambda pgid: None)
        result = _run(tmp_path, marked, mode, "echo yes > started; exec sleep 300",
                      supervision=watch)  # fmt: skip
        assert result.cancelled
        assert marked.gone(), f"left running: {marked.processes()}"
    finally:
        cancel.set()
        helper.join(HANG_GUARD_S)
        marked.kill()


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("auto", "2 2"), ("pid", "2 2"), ("user", "2 2"), ("subreaper", None)],
)
def test_the_command_sees_its_own_namespace(
    tmp_path: Path, mode: Containment, expected: str | None
) -> None:
    """In a namespace the command is pid 2 (its init is 1), and /proc agrees with it."""
    code = "import os; print(os.getpid(), os.readlink('/proc/self'), os.getuid())"
    result = run_command([sys.executable, "-c", code], cwd=tmp_path, env=ENV, timeout_s=20,
                         keep_bytes=100, containment=mode)  # fmt: skip
    pid, proc_self, uid = result.tail.decode().split()
    assert uid == str(os.getuid())  # the same user inside: never root of a namespace
    if expected is None:
        assert pid == proc_self and pid != "2"
    else:
        assert f"{pid} {proc_self}" == expected


@pytest.mark.parametrize("mode", MODES)
def test_the_command_s_exit_and_signal_come_through(tmp_path: Path, mode: Containment) -> None:
    def ended(script: str) -> int | None:
        return run_command(["/bin/sh", "-c", script], cwd=tmp_path, env=ENV, timeout_s=20,
                           keep_bytes=100, containment=mode).returncode  # fmt: skip

    assert ended("exit 7") == 7
    assert ended("kill -KILL $$") == -signal.SIGKILL
    assert ended("kill -TERM $$") == -signal.SIGTERM


#: Runs a command the way a process that then dies would: supervised (the host's), with its
#: group written to a file before it runs, or unsupervised (`jarvis verify`'s).
DYING = """
import json, pathlib, sys
from core.criteria.runner import Supervision, run_command
args = json.loads(sys.argv[1])
record = pathlib.Path(args["record"])
watch = Supervision(started=lambda pgid: record.write_text(str(pgid)),
                    env=args["markers"]) if args["supervised"] else None
run_command(["/bin/sh", "-c", args["script"]], cwd=pathlib.Path(args["cwd"]), env=args["env"],
            timeout_s=600, keep_bytes=100, supervision=watch, containment=args["mode"])
"""


def _killed_runner(tmp_path: Path, marked: Marked, mode: Containment, supervised: bool) -> int:
    """Start a runner process, let its command start its escapees, kill -9 it; its pgid."""
    ws = tmp_path / "ws"
    ws.mkdir()
    args = {"record": str(tmp_path / "pgid"), "cwd": str(tmp_path), "mode": mode,
            "env": {**ENV, **marked.env()}, "supervised": supervised,
            "markers": markers(ws, "run-1"),
            "script": ESCAPE + "echo yes > started; exec sleep 300"}  # fmt: skip
    runner = subprocess.Popen([sys.executable, "-c", DYING, json.dumps(args)],
                              cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    try:
        wait_for_file(tmp_path / "started")
        runner.kill()
        runner.wait(HANG_GUARD_S)
        return int(wait_for_file(tmp_path / "pgid")) if supervised else 0
    finally:
        runner.kill()
        runner.wait(HANG_GUARD_S)


@pytest.mark.parametrize("mode", MODES)
def test_a_command_nobody_records_dies_with_the_process_that_ran_it(
    tmp_path: Path, mode: Containment
) -> None:
    """`jarvis verify`'s commands: no host records them, so a kill -9 of it must end them."""
    marked = Marked()
    try:
        _killed_runner(tmp_path, marked, mode, supervised=False)
        assert marked.gone(), f"left running: {marked.processes()}"
    finally:
        marked.kill()


@pytest.mark.parametrize("mode", MODES)
def test_recovery_kills_what_a_dead_host_s_command_started(
    tmp_path: Path, mode: Containment
) -> None:
    """A host's commands outlive its kill -9 (their group is recorded); the next host's
    recovery kills all they started, sessions and daemons too, not only the group."""
    marked = Marked()
    try:
        pgid = _killed_runner(tmp_path, marked, mode, supervised=True)
        assert len(marked.processes()) >= 3, "the command should outlive its runner's kill -9"
        assert kill_leftover(pgid, tmp_path / "ws", "run-1")
        assert marked.gone(), f"left running: {marked.processes()}"
    finally:
        marked.kill()


def _as_nobody(args: list[str]) -> subprocess.CompletedProcess[str]:
    repo = Path(__file__).resolve().parents[2]
    return subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         "env", f"PYTHONPATH={repo}", *args],
        cwd=repo, capture_output=True, text=True, timeout=HANG_GUARD_S,
    )  # fmt: skip


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root, to run a command as another user")  # fmt: skip
def test_an_unprivileged_user_gets_a_namespace_too() -> None:
    """``auto`` without root: a user namespace of the same user, and the command is pid 2."""
    # An interpreter that user can run and find again (a virtual environment under /root is
    # not one), with the runner importable: it needs only the standard library.
    probe = "import os, sys; os.stat(sys.executable); import core.criteria.runner"
    usable = [p for p in (sys.executable, "/usr/bin/python3")
              if _as_nobody([p, "-c", probe]).returncode == 0]  # fmt: skip
    if not usable:
        pytest.skip("no interpreter here that another user can run")
    code = (
        "import pathlib, sys\n"
        "from core.criteria.runner import run_command\n"
        "r = run_command([sys.executable, '-c', 'import os; print(os.getpid(), os.getuid())'],\n"
        "                cwd=pathlib.Path(sys.argv[1]), env={}, timeout_s=60, keep_bytes=100)\n"
        "print(r.tail.decode().strip())\n"
    )
    shown = _as_nobody([usable[0], "-c", code, "/"])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["2", "65534"]
