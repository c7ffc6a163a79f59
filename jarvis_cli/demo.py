"""``jarvis demo``: the console on a seeded workspace with a live simulated fleet, in one command.

It makes a temporary workspace (or uses ``--workspace DIR``, which must be empty or absent),
writes a demo ``jarvis.toml``, seeds a few hours of history from ``sample_runs/``
(`jarvis_sim.demo_seed`), starts a host and the fleet feeder (`jarvis_sim.demo_fleet`), and runs
the console in the foreground. The process tree:

    jarvis demo                            this process: seeds, supervises, runs the console
    ├── jarvis host --workspace W          its own process group, PR_SET_PDEATHSIG = SIGTERM
    │   └── simulated workers              one process group each, started by the host
    └── python -m jarvis_sim.demo_fleet    its own process group, PR_SET_PDEATHSIG = SIGTERM

Unlike the host `jarvis tui` starts, this one belongs to the demo and ends with it. When the
console quits or crashes, or the demo gets SIGTERM, SIGHUP or SIGINT, the demo SIGTERMs both
process groups (the host then stops its workers), waits, SIGKILLs whatever is left, and finally
kills any process still carrying the demo's marker in its environment (a worker whose host was
killed). If the demo itself is killed with SIGKILL, the kernel sends its children SIGTERM (the
parent-death signal, Linux only) and the host still stops its workers. The temporary workspace is
removed unless ``--keep`` or ``--workspace`` was given.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from types import FrameType
from typing import Any

from core.service.diffs import GitError
from core.service.hosting import (
    HostLock,
    child_env,
    log_tail,
    parent_death_signal,
    processes_with_env,
)
from core.service.text import inert
from core.service.workspace import STORE_ENV_VAR, Workspace, WorkspaceError
from jarvis_cli.demo_leftovers import PREFIX, make_temporary, remove_leftovers
from jarvis_cli.inputs import UsageError
from jarvis_cli.tui import check_theme
from jarvis_sim.demo_repos import make_demo_repos, repos_config
from jarvis_sim.demo_seed import SeedError, seed_new_workspace

#: The worker pace of the demo: an `ok` run takes a few seconds, a `slow` one half a minute.
DEMO_SIM_INTERVAL_MS = "300,900"
DEMO_CONFIG = """\
# The demo's host: simulated workers on jarvis-worker-1..4, two runs at a time per lane, and
# timeouts short enough that failures show up while you watch.
[workers]
concurrency = 2

[timeouts]
no_output_s = 20        # a `hang` run fails about 20 s after its last event
hard_limit_s = 300
steer_ack_s = 15        # a steer nobody acknowledges expires after 15 s
shutdown_grace_s = 2
"""
MARKER_ENV = "JARVIS_DEMO_ID"
HOST_START_TIMEOUT_S = 20.0
STOP_GRACE_S = 5.0
"""SIGTERM to SIGKILL for the host and the feeder: the host's own grace (2 s) plus margin."""
APP_EXIT_WATCHDOG_S = 5.0
_TICK_S = 0.05


class DemoProcesses:
    """The demo's host and feeder: started together, stopped together, idempotently."""

    def __init__(self, root: Path, *, interval: float | None) -> None:
        self.root = root
        self.interval = interval
        self.marker = f"{MARKER_ENV}={uuid.uuid4().hex}"
        self.host: subprocess.Popen[bytes] | None = None
        self.fleet: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _env(self) -> dict[str, str]:
        name, value = self.marker.split("=", 1)
        env = child_env(JARVIS_WORKSPACE=str(self.root))
        # The demo seeds and serves its own SQLite store, whatever store the shell names.
        env.pop(STORE_ENV_VAR, None)
        env[name] = value
        env.setdefault("JARVIS_SIM_INTERVAL_MS", DEMO_SIM_INTERVAL_MS)
        return env

    def _spawn(self, args: list[str], log_name: str) -> subprocess.Popen[bytes]:
        with (self.root / log_name).open("ab") as log:
            return subprocess.Popen(
                args,
                cwd=self.root,
                env=self._env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # its own process group, out of the terminal's reach
                preexec_fn=parent_death_signal(),
                close_fds=True,
            )

    def start(self) -> None:
        python = sys.executable
        self.host = self._spawn(
            [python, "-m", "jarvis_cli", "host", "--workspace", str(self.root)], "host.log"
        )
        fleet = [python, "-m", "jarvis_sim.demo_fleet", "--workspace", str(self.root)]
        if self.interval is not None:
            fleet += ["--interval", str(self.interval)]
        self.fleet = self._spawn(fleet, "fleet.log")

    def wait_for_host(self, timeout_s: float = HOST_START_TIMEOUT_S) -> None:
        """Until the host holds the workspace; UsageError (with its log) if it dies first."""
        assert self.host is not None
        deadline = time.monotonic() + timeout_s
        while HostLock.holder(self.root) != self.host.pid:
            code = self.host.poll()
            if code is not None or time.monotonic() >= deadline:
                why = (
                    f"exited with code {code}" if code is not None else f"took over {timeout_s:g} s"
                )
                log = self.root / "host.log"
                raise UsageError(
                    "host_start_failed",
                    f"The demo's host {why} before it took the workspace. "
                    f"The end of {log}:\n{log_tail(log)}",
                )
            time.sleep(_TICK_S)

    def host_alive(self) -> bool:
        return self.host is not None and self.host.poll() is None

    def stop(self) -> int:
        """SIGTERM both groups, wait, SIGKILL what is left, then anything carrying the marker;
        the steps it took (each a wait on a process, a kill or a look for what is left: a few
        when the tree ends on SIGTERM, as it should).

        Safe to call again (and from a signal handler): what has ended is left alone.
        """
        if not self._lock.acquire(blocking=False):
            return 0  # a stop is already under way (a signal arrived during the clean-up)
        steps = 0
        try:
            procs = [p for p in (self.fleet, self.host) if p is not None]
            for proc in procs:
                _signal_group(proc, signal.SIGTERM)
            deadline = time.monotonic() + STOP_GRACE_S
            for proc in procs:
                steps += 1
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(max(0.0, deadline - time.monotonic()))
            for proc in procs:
                if proc.poll() is None:
                    steps += 1
                    _signal_group(proc, signal.SIGKILL)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(2)
            steps += self._sweep()
        finally:
            self._lock.release()
        return steps

    def _sweep(self) -> int:
        deadline = time.monotonic() + 2.0
        steps = 1
        while left := processes_with_env(self.marker):
            for pid in left:
                for kill in (os.killpg, os.kill):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        kill(pid, signal.SIGKILL)
            if time.monotonic() >= deadline:
                break
            time.sleep(_TICK_S)
            steps += 1
        return steps


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)  # the child leads its own group: this reaches its children too
    except ProcessLookupError:
        pass
    except PermissionError:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)


def _choose_workspace(path: str | None) -> tuple[Path, bool]:
    """The workspace directory and whether it is a temporary one of ours."""
    if path is None:
        for left in remove_leftovers():
            _say(f"jarvis demo: removed {left}, left behind by a demo that was killed")
        return make_temporary(), True
    root = Path(path).expanduser()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(
            "workspace_not_empty",
            f"--workspace {path} must be an empty or absent directory: the demo seeds a new "
            "workspace and will not mix its runs into existing ones.",
        )
    return root, False


class _Signals:
    """The demo's SIGTERM, SIGHUP and SIGINT: stop the children first, then end the console."""

    HANDLED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

    def __init__(self, procs: DemoProcesses, on_give_up: Any) -> None:
        self.procs = procs
        self.signum: int | None = None
        self.app: Any = None
        self._on_give_up = on_give_up
        self._previous: list[tuple[int, Any]] = []
        self._watchdog: threading.Timer | None = None

    def install(self) -> None:
        for sig in self.HANDLED:
            self._previous.append((sig, signal.signal(sig, self.handle)))

    def restore(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()  # the console did end: nothing to give up on
        for sig, previous in self._previous:
            signal.signal(sig, previous)
        self._previous.clear()

    def handle(self, signum: int, frame: FrameType | None) -> None:
        del frame
        first = self.signum is None
        self.signum = signum
        self.procs.stop()  # the part that must happen, whatever becomes of the console
        if not first or self.app is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        # From a signal handler, only the thread-safe entry into the loop is safe.
        loop.call_soon_threadsafe(self.app.exit)
        self._watchdog = threading.Timer(APP_EXIT_WATCHDOG_S, self._on_give_up, args=(signum,))
        self._watchdog.daemon = True
        self._watchdog.start()


def run(args: argparse.Namespace) -> int:
    check_theme(args.theme)
    if args.interval is not None and not args.interval > 0:
        raise UsageError("usage", "--interval must be a positive number of seconds.")
    if args.no_console is not None and not args.no_console >= 0:
        raise UsageError("usage", "--no-console must be a number of seconds.")
    root, temporary = _choose_workspace(args.workspace)
    keep = args.keep or not temporary
    try:
        root = Workspace.resolve(root).root
    except WorkspaceError as exc:
        raise UsageError("workspace_unusable", str(exc)) from None

    def remove_workspace() -> None:
        if not keep:
            remove_in_background(root)

    procs = DemoProcesses(root, interval=args.interval)

    def give_up(signum: int) -> None:
        # The console did not end after the signal: the children are already stopped.
        remove_workspace()
        os._exit(128 + signum)

    signals = _Signals(procs, give_up)
    signals.install()
    try:
        # Real repositories for the demo's projects: each run gets a worktree of one, its
        # simulated worker really commits, and approving a run merges it.
        try:
            repos = make_demo_repos(root)
        except (GitError, OSError) as exc:
            raise UsageError("demo_repos_failed", f"The demo's repositories: {exc}") from None
        (root / "jarvis.toml").write_text(DEMO_CONFIG + repos_config(repos, root), "utf-8")
        try:
            report = seed_new_workspace(root)
        except SeedError as exc:
            raise UsageError("seed_failed", str(exc)) from None
        if signals.signum is not None:
            return 128 + signals.signum
        procs.start()
        _say(
            f"jarvis demo: {report['runs']} past runs seeded in {root}; host pid "
            f"{procs.host.pid if procs.host else '?'}, fleet pid "
            f"{procs.fleet.pid if procs.fleet else '?'} (logs: host.log, fleet.log)"
        )
        procs.wait_for_host()
        if args.no_console is not None:
            return _headless(procs, signals, args.no_console)
        if signals.signum is None:
            from jarvis_tui.app import JarvisApp
            from jarvis_tui.personal import load_personal

            app = JarvisApp(root / "jarvis.db", theme=args.theme, own_process=True,
                            personal=load_personal())  # fmt: skip
            signals.app = app
            app.run()
        return 128 + signals.signum if signals.signum is not None else 0
    finally:
        if procs.host is not None:
            # Said before the wait: the console is gone and the screen would otherwise stay
            # blank while the host stops its workers.
            _say("jarvis demo: stopping the host, its workers and the fleet…")
            procs.stop()
            _say("jarvis demo: stopped.")
        else:
            procs.stop()
        signals.restore()
        remove_workspace()
        if keep:
            _say(f"jarvis demo: the workspace is kept at {root}; its host has stopped.")


def remove_in_background(root: Path) -> None:
    """Take the temporary workspace away at once and delete it in the background.

    Deleting it in the foreground was most of a slow quit: after a long demo it holds tens of
    thousands of files (a worktree per run, logs, the IPC tree), and the screen stayed blank
    while they went. Renamed first (one step), so its path is gone when the demo exits; the
    `rm` that deletes it runs in a session of its own. Named as a demo workspace still, with its
    owner file inside: if the `rm` is stopped, the next demo removes what is left
    (`jarvis_cli.demo_leftovers`).
    """
    trash = root.with_name(f"{PREFIX}removing-{uuid.uuid4().hex[:12]}")
    try:
        os.rename(root, trash)
    except OSError:
        shutil.rmtree(root, ignore_errors=True)
        return
    _say("jarvis demo: the temporary workspace is being removed in the background.")
    try:
        subprocess.Popen(["rm", "-rf", "--", str(trash)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)  # fmt: skip
    except OSError:
        shutil.rmtree(trash, ignore_errors=True)


def _headless(procs: DemoProcesses, signals: _Signals, seconds: float) -> int:
    """Host and fleet for ``seconds`` without the console (tests, scripted checks)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and signals.signum is None:
        if not procs.host_alive():
            _say("jarvis demo: the host ended unexpectedly; see host.log")
            return 1
        time.sleep(_TICK_S)
    return 128 + signals.signum if signals.signum is not None else 0


def _say(text: str) -> None:
    with contextlib.suppress(OSError):
        sys.stderr.write(inert(text) + "\n")
        sys.stderr.flush()
