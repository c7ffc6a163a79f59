"""Starting a host in the background, asking whether one runs, and stopping it.

`jarvis tui` calls `ensure_host` so that one command is enough: if no host holds the workspace,
it starts the host command it is given (``jarvis host --workspace DIR``) as a detached service
(its own session, stdin from /dev/null, stdout and stderr appended to ``<workspace>/host.log``)
and waits until that host holds the workspace lock. The service outlives the console on purpose
— like a tmux server, a dropped SSH session must not stop the runs in flight — and `stop_host`
(``jarvis host --stop``) ends it.

Starting is serialised by a second lock, ``host.launch.lock``: several consoles opening one
workspace at the same moment start exactly one host, and the others find it running.

Nothing here takes ``host.lock`` itself, not even to look (see `core.host.lock`).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.host.lock import HostLock
from core.workspace import Workspace

HOST_LOG = "host.log"
LAUNCH_LOCK = "host.launch.lock"
#: A host that fails exits at once and is reported at once: this bounds only the wait for one
#: that is slow to take the workspace, as on a busy machine (5 s ran out at load 13 on 2 cores).
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0
_POLL_S = 0.02
_PR_SET_PDEATHSIG = 1
#: Where this package and its siblings are importable from: a checkout's root, or site-packages.
_IMPORT_ROOT = Path(__file__).resolve().parents[2]

#: Hosts started by this process. Keeping the handle stops `subprocess` from warning that a
#: child is "still running" when the handle is collected: a background host is meant to be.
_STARTED: list[subprocess.Popen[bytes]] = []


class HostLaunchError(Exception):
    """The host could not be started; ``str()`` says why, with the end of its log."""


class HostStopError(Exception):
    """The host could not be stopped (no permission, or it did not let go in time)."""


@dataclass(frozen=True, slots=True)
class LaunchedHost:
    """A host `ensure_host` started: it runs detached until stopped."""

    pid: int
    workspace: Path
    log_path: Path


def workspace_root(workspace: Workspace | Path | str) -> Path:
    """The absolute workspace directory, without creating anything."""
    if isinstance(workspace, Workspace):
        return workspace.root
    return Path(workspace).expanduser().resolve()


def child_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """An environment in which this checkout's packages import from any directory (so does a
    ``python -m`` of one of them, such as the host command)."""
    env = dict(os.environ if base is None else base)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    # A checkout run without installing needs its root on the path; an installed package is
    # found anyway, and putting site-packages ahead of the standard library could shadow it.
    installed = _IMPORT_ROOT.name in ("site-packages", "dist-packages")
    if not installed and str(_IMPORT_ROOT) not in parts:
        env["PYTHONPATH"] = os.pathsep.join([str(_IMPORT_ROOT), *parts])
    env.update(extra)
    return env


def parent_death_signal(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to send ``sig`` to the child when its parent dies.

    So a child started with it does not outlive its parent even when the parent is killed with
    SIGKILL and can clean nothing up. None where ``prctl`` is not available (not Linux): the
    caller then relies on its own clean-up alone. The kernel sends the signal when the *thread*
    that started the child ends, so start such children from the main thread.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was in place
            os.kill(os.getpid(), sig)

    return preexec


def log_tail(path: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a log, or a note that there is none."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16 * 1024))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return f"({path} cannot be read)"
    tail = text.splitlines()[-lines:]
    return "\n".join(tail) if tail else f"({path} is empty)"


def host_status(workspace: Workspace | Path | str) -> int | None:
    """The pid of the host holding the workspace, or None. Cheap: one stat and a small read."""
    return HostLock.holder(workspace_root(workspace))


@contextlib.contextmanager
def _launch_lock(root: Path, timeout_s: float) -> Iterator[None]:
    fd = os.open(root / LAUNCH_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise HostLaunchError(
                        f"Another process has been starting a host on {root} for more than "
                        f"{timeout_s:g} s; try again, or look at {root / HOST_LOG}."
                    ) from None
                time.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def ensure_host(
    workspace: Workspace | Path | str,
    *,
    command: Sequence[str],
    timeout_s: float = START_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
) -> LaunchedHost | None:
    """Start a detached host on the workspace unless one holds it already.

    ``command`` is the host's command line for this workspace, the caller's to give (the engine
    names no front end): ``jarvis tui`` gives its own ``jarvis host``.

    Returns the started host, or None when another host holds the workspace (started by someone
    else, or by a concurrent call that won the start).

    Raises:
        HostLaunchError: the host exited or did not take the workspace within ``timeout_s``;
            the message ends with the last lines of its log.
    """
    root = workspace_root(workspace)
    if HostLock.holder(root):
        return None
    with _launch_lock(root, timeout_s + START_TIMEOUT_S):
        if HostLock.holder(root):
            return None
        log_path = root / HOST_LOG
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                list(command),
                cwd=root,
                env=child_env(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # no terminal signals, no SIGHUP when the console goes
                close_fds=True,
            )
        _STARTED.append(proc)
        deadline = time.monotonic() + timeout_s
        while True:
            holder = HostLock.holder(root)
            if holder == proc.pid:
                return LaunchedHost(proc.pid, root, log_path)
            code = proc.poll()
            if code is not None:
                if holder:
                    return None  # a host started some other way got there first
                raise HostLaunchError(
                    f"The host exited with code {code} before it took the workspace {root}. "
                    f"The end of {log_path}:\n{log_tail(log_path)}"
                )
            if time.monotonic() >= deadline:
                _end(proc)
                raise HostLaunchError(
                    f"The host (pid {proc.pid}) did not take the workspace {root} within "
                    f"{timeout_s:g} s and was stopped. The end of {log_path}:\n{log_tail(log_path)}"
                )
            time.sleep(_POLL_S)


def _end(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)


def stop_host(
    workspace: Workspace | Path | str, *, timeout_s: float = STOP_TIMEOUT_S
) -> int | None:
    """SIGTERM the host holding the workspace and wait until it lets go of it.

    Returns the pid that was stopped, or None when no host was running. The host ends its
    workers itself (with its configured grace period) before it releases the workspace.

    Raises:
        HostStopError: the host cannot be signalled, or still holds the workspace after
            ``timeout_s``.
    """
    root = workspace_root(workspace)
    pid = HostLock.holder(root)
    if pid is None:
        return None
    if pid <= 0:
        raise HostStopError(
            f"The host on {root} runs in another pid namespace; stop it from there."
        )
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # it ended on its own meanwhile
    except PermissionError:
        raise HostStopError(
            f"The host on {root} (pid {pid}) belongs to another user; it cannot be stopped."
        ) from None
    deadline = time.monotonic() + timeout_s
    while HostLock.holder(root) is not None:
        if time.monotonic() >= deadline:
            raise HostStopError(
                f"The host on {root} (pid {pid}) still holds the workspace {timeout_s:g} s "
                f"after SIGTERM. The end of {root / HOST_LOG}:\n{log_tail(root / HOST_LOG)}"
            )
        time.sleep(_POLL_S)
    return pid


def processes_with_env(entry: str) -> list[int]:
    """Live processes (other than this one) whose environment holds ``entry`` (``NAME=value``).

    Reads ``/proc/<pid>/environ``; an empty list where there is no /proc. Zombies read empty
    and are not counted.
    """
    wanted = entry.encode()
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    me = os.getpid()
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.append(int(name))
    return found
