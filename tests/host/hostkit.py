"""Helpers for tests that run the real `jarvis host` as a subprocess against a workspace.

Every wait is a deadline poll that fails with the runs' states and the host's log, never a
sleep-and-hope; every host is stopped in a ``finally`` and every test can ask which worker
processes of its workspace are still alive (read from ``/proc/<pid>/environ``).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from core.intake import submit_dispatch
from core.store.api import RunStore
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.jarvis_cli import jarvis
from tests.processes import HANG_GUARD_S

T = TypeVar("T")

#: Fast simulated workers: an event every 10-30 ms.
FAST_INTERVAL = "10,30"
#: A `slow` run of 30-40 events at this pace lasts 3-6 s: time to steer, cancel or kill it.
STEERABLE_INTERVAL = "100,150"
#: How long a host may take to start before a test gives up on it: only a hang guard.
START_TIMEOUT_S = HANG_GUARD_S

#: The lane the tests queue their runs on unless they say otherwise.
LANE = "jarvis-worker-1"
WATCH_MODES = [pytest.param(False, id="inotify"), pytest.param(True, id="poll")]


def write_config(
    ws: Path,
    *,
    concurrency: int = 2,
    lane_concurrency: dict[str, int] | None = None,
    no_output_s: float = 60,  # a hang guard: a busy machine may starve a worker for seconds
    hard_limit_s: float = 120,
    steer_ack_s: float = 5,
    shutdown_grace_s: float = 1,
    sandbox: str | None = None,
) -> None:
    lanes = ", ".join(f'"{lane}" = {n}' for lane, n in (lane_concurrency or {}).items())
    (ws / "jarvis.toml").write_text(
        "[workers]\n"
        + (f'sandbox = "{sandbox}"\n' if sandbox else "")
        + f"concurrency = {concurrency}\n"
        f"lane_concurrency = {{ {lanes} }}\n"
        "[timeouts]\n"
        f"no_output_s = {no_output_s}\n"
        f"hard_limit_s = {hard_limit_s}\n"
        f"steer_ack_s = {steer_ack_s}\n"
        f"shutdown_grace_s = {shutdown_grace_s}\n"
    )


def script_workspace(
    tmp_path: Path, worker: str, run_id: str, *, no_output_s: float = 30, lane: str = LANE
) -> Path:
    """A workspace whose worker is the Python script ``worker``, with ``run_id`` queued on
    ``lane``: the preamble of the tests that give the host a worker of their own."""
    root = tmp_path / "ws"
    root.mkdir()
    script = tmp_path / "worker.py"
    script.write_text(worker)
    (root / "jarvis.toml").write_text(
        f"[workers]\ncommand = [{str(sys.executable)!r}, {str(script)!r}]\n"
        f"[timeouts]\nno_output_s = {no_output_s:g}\nshutdown_grace_s = 1\n"
    )
    store = SqliteStore(root / "jarvis.db")
    try:
        dispatch(store, run_id, lane=lane)
    finally:
        store.close()
    return root


def dispatch(
    store: RunStore,
    run_id: str,
    *,
    scenario: str = "ok",
    lane: str = "jarvis-worker-1",
) -> None:
    """Enqueue a run whose simulated worker plays ``scenario``."""
    doc = dispatch_doc(
        run_id,
        input=f"Fix the retry counter so a retried run keeps its run_id. sim:{scenario}",
    )
    result = submit_dispatch(store, doc, source_lane="main", target_lane=lane, actor="test")
    assert result.outcome == "enqueued", result.to_json()


class HostProcess:
    """One `python -m jarvis_cli host` on a workspace, its stderr kept in a log file."""

    def __init__(
        self,
        ws: Path,
        *,
        poll: bool = False,
        interval: str = FAST_INTERVAL,
        log_name: str = "host.log",
        extra_args: Sequence[str] = (),
        log_dir: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.ws = ws
        self.log_path = (log_dir or ws.parent) / f"{ws.name}-{log_name}"
        env = {**os.environ, **(env or {})}
        env.pop("JARVIS_POLL", None)  # the mode is the test's choice, not the environment's
        env["JARVIS_SIM_INTERVAL_MS"] = interval
        # The host runs from this virtual environment, as an installed `jarvis` would: its
        # tools (this interpreter, pytest, ruff) are on its PATH for criteria to find by name.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        args = [sys.executable, "-m", "jarvis_cli", "host", "--workspace", str(ws)]
        if poll:
            args.append("--poll")
        args.extend(extra_args)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        try:
            return self.log_path.read_text("utf-8", "replace")
        except OSError:
            return ""

    def holds_lock(self) -> bool:
        """The host took the workspace: ``host.lock`` holds its pid.

        Read as a plain file: the test wants this host's pid in it, not merely some holder.
        """
        try:
            return (self.ws / "host.lock").read_text().strip() == str(self.pid)
        except OSError:
            return False

    def wait_started(self, timeout: float = START_TIMEOUT_S) -> None:
        def started() -> bool:
            if self.proc.poll() is not None:
                pytest.fail(f"the host exited with {self.proc.returncode}:\n{self.log()}")
            return self.holds_lock()

        wait_until(started, timeout, "the host to take the workspace", lambda: self.log())

    def stop(self, timeout: float = HANG_GUARD_S) -> int:
        """SIGTERM, then SIGKILL if it does not exit in time; returns the exit code.

        A host still running at the deadline is first asked (SIGUSR1) to write every thread's
        stack to its log, so the failure that follows shows where it was stuck."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                before = self.log().count("Current thread")
                self.proc.send_signal(signal.SIGUSR1)
                deadline = time.monotonic() + 10
                while self.log().count("Current thread") == before and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@contextmanager
def running_host(ws: Path, **kwargs: Any) -> Iterator[HostProcess]:
    """A started host, always stopped on the way out, and no worker of ``ws`` left behind."""
    host = HostProcess(ws, **kwargs)
    try:
        host.wait_started()
        yield host
    finally:
        host.stop()
    assert_no_workers(ws)


def wait_until(
    predicate: Callable[[], T | None],
    timeout: float,
    what: str,
    describe: Callable[[], str] | None = None,
    *,
    interval: float = 0.05,
) -> T:
    """Poll ``predicate`` until it returns something truthy; fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value  # truthy, so not None
        if time.monotonic() >= deadline:
            detail = describe() if describe else ""
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}\n{detail}")
        time.sleep(interval)


def queued_workspace(tmp_path: Path, run_id: str) -> tuple[Path, SqliteStore]:
    """A workspace whose lane runs no workers (runs stay queued: the host only ingests), with
    ``run_id`` queued on it; the store is the caller's to close."""
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config(ws, lane_concurrency={LANE: 0})
    store = SqliteStore(ws / "jarvis.db")
    dispatch(store, run_id)
    return ws, store


def put_progress(ws: Path, run_id: str, seq: int, summary: str, *, lane: str = LANE) -> None:
    """Write one progress event into ``run_id``'s folder as a worker does (a rename)."""
    folder = ws / "data" / "ipc" / lane / "progress" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "kind": "worker_progress",
        "run_id": run_id,
        "group_folder": lane,
        "timestamp": "2026-11-28T03:00:00.000Z",
        "phase": "testing",
        "summary": summary,
        "seq": seq,
    }
    temp = folder / f".{seq}.tmp"
    temp.write_text(json.dumps(doc))
    os.replace(temp, folder / f"{seq:04d}-p.json")


# -- the store, read from the test ----------------------------------------------------------------


def connect(ws: Path) -> sqlite3.Connection:
    """A plain reader on the workspace's store; autocommit, so every query sees the latest."""
    conn = sqlite3.connect(ws / "jarvis.db", timeout=30, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sql, list(params)).fetchall()]


def states(conn: sqlite3.Connection) -> dict[str, str]:
    return {r["run_id"]: r["state"] for r in rows(conn, "SELECT run_id, state FROM runs")}


def run_row(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    found = rows(conn, "SELECT * FROM runs WHERE run_id = ?", [run_id])
    assert found, f"no run {run_id}"
    return found[0]


def describe_runs(conn: sqlite3.Connection, host: HostProcess | None = None) -> str:
    lines = [
        f"  {r['run_id']}: {r['state']} ({r['state_reason']}) pid={r['worker_pid']}"
        for r in rows(conn, "SELECT * FROM runs ORDER BY run_id")
    ]
    text = "runs:\n" + "\n".join(lines)
    if host is not None:
        text += "\nhost log (tail):\n" + host.log()[-4000:]
    return text


def wait_for_states(
    conn: sqlite3.Connection,
    expected: dict[str, str | set[str]],
    timeout: float,
    host: HostProcess | None = None,
) -> None:
    def reached() -> bool:
        now = states(conn)
        for run_id, want in expected.items():
            wanted = want if isinstance(want, set) else {want}
            if now.get(run_id) not in wanted:
                return False
        return True

    wait_until(reached, timeout, f"runs to reach {expected}", lambda: describe_runs(conn, host))


def journal(conn: sqlite3.Connection, run_id: str, kind: str) -> list[dict[str, Any]]:
    found = rows(
        conn, "SELECT seq, payload, actor FROM journal WHERE run_id = ? AND kind = ? ORDER BY seq",
        [run_id, kind],
    )  # fmt: skip
    return [{"seq": r["seq"], "actor": r["actor"], **json.loads(r["payload"])} for r in found]


# -- sweeps, counted ------------------------------------------------------------------------------

_CANARY = json.loads(
    (
        Path(__file__).resolve().parents[2] / "sample_runs" / "openclaw" / "request-valid.json"
    ).read_text("utf-8")
)


def wait_for_sweeps(
    ws: Path, count: int, host: HostProcess | None = None, *, prefix: str = "sweep-canary"
) -> list[str]:
    """Wait until the host has run ``count`` whole sweeps from now; the canary run ids.

    Counted, not timed: nothing watches ``work/requests/``, so an OpenClaw request there becomes
    a run only through a sweep. Canaries are dropped one at a time, each once the one before is
    a run; the sweep that takes canary ``k`` began after canary ``k - 1`` was taken, so the
    sweeps that take the second to the last canary are ``count`` whole sweeps begun after this
    call. The canaries are runs in the ``openclaw`` lane named ``<prefix>-<n>``.
    """
    requests = ws / "work" / "requests"
    requests.mkdir(parents=True, exist_ok=True)
    conn = connect(ws)
    made = []
    try:
        for n in range(count + 1):
            task_id = f"{prefix}-{n}"
            target = requests / f"{task_id}.json"
            temp = requests / f".{task_id}.tmp"
            temp.write_text(json.dumps({**_CANARY, "task_id": task_id}), "utf-8")
            os.replace(temp, target)

            def taken(task_id: str = task_id) -> bool:
                return bool(rows(conn, "SELECT 1 FROM runs WHERE run_id = ?", [task_id]))

            wait_until(
                taken,
                HANG_GUARD_S,
                f"sweep {n} of {count} to take {task_id}",
                (lambda: host.log()[-3000:]) if host else None,
            )
            made.append(task_id)
    finally:
        conn.close()
    return made


# -- worker processes -----------------------------------------------------------------------------


def _environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []  # gone, or a zombie (whose environment reads empty): not a live worker


def workers_of(ws: Path) -> list[int]:
    """Live processes started by a host of ``ws``: their JARVIS_IPC_DIR is inside its tree."""
    marker = f"JARVIS_IPC_DIR={ws.resolve() / 'data' / 'ipc'}/".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and any(v.startswith(marker) for v in _environ(int(entry))):
            found.append(int(entry))
    return found


def is_alive_worker(pid: int, run_id: str) -> bool:
    return f"JARVIS_RUN_ID={run_id}".encode() in _environ(pid)


def assert_no_workers(ws: Path, timeout: float = 5.0) -> None:
    """Every worker of ``ws`` is gone (killing any survivor so one failure does not leak)."""
    deadline = time.monotonic() + timeout
    while (left := workers_of(ws)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"worker processes left behind: {left}"


def cli(ws: Path, *args: str, stdin: str | None = None) -> tuple[int, dict[str, Any]]:
    """``jarvis <args> --workspace ws --json``: its exit code and its one JSON object.

    Run in this process (tests/jarvis_cli.py); the host it talks to is the real one.
    """
    done = jarvis(
        *args, "--workspace", ws, "--json", stdin=None if stdin is None else stdin.encode()
    )
    assert done.stdout.strip(), f"no JSON from jarvis {args}: {done.stderr}"
    return done.code, json.loads(done.stdout)


def fill(disk: Path) -> Path:
    """Write zeros until the disk says it is full; the file is what to delete for room."""
    filler = disk / "filler"
    block = b"\0" * 4096
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            try:
                os.write(fd, block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                return filler
    finally:
        os.close(fd)
