"""Run one criterion command: no shell, a scrubbed environment, a time limit, a bounded tail.

* Nothing the command starts outlives it. It runs under `core.criteria.contain`, in a PID
  namespace of its own where the system allows one (else under a subreaper): when it ends, or
  is killed, everything it started ends too, children that called ``setsid`` or double-forked
  included, which a process group alone cannot hold. The runner still gives it its own session
  (process group) and kills that group and the whole process tree under it at the time limit,
  on a cancel, and once the command has exited: a check must not leave servers behind.
* Output (stdout and stderr together) is read as it arrives into a buffer that keeps only the
  last ``keep_bytes`` bytes, so a command that prints without end costs neither memory nor disk;
  `render_tail` turns those bytes into text for people, with secrets masked.
* The environment starts empty and gains only what tools need to find themselves
  (`child_env`); credentials in the parent's environment never reach the command. This is not
  a sandbox: files the user can read (``~/.npmrc``, ``~/.aws``) stay readable to the command.
  ``PATH`` keeps only absolute folders outside the checkout (`search_path`): an empty or
  relative entry means "the working directory", which is the checkout a worker wrote.
* A host supervises its commands (`Supervision`): it can stop one at once (shutting down), and
  it records each command's process group durably *before* the command runs, so a host
  restarted after a ``kill -9`` finds and kills a command it left behind. The command starts
  behind a gate (a ``/bin/sh`` that waits on a pipe, then ``exec``s contain in place, keeping
  its pid and group) that opens only once the record is written; if the host dies first, the
  pipe closes and the shell exits without running anything. A command nobody records
  (`jarvis verify`'s) dies with the process that started it instead.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal

from core.contracts.secrets_scan import mask_secrets
from core.criteria import contain

#: Variables passed through from the parent: where tools and their caches are, and the locale.
ENV_NAMES: Final = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "VIRTUAL_ENV",
        "JAVA_HOME",
        "GOPATH",
        "GOROOT",
        "GOCACHE",
        "GOMODCACHE",
        "CARGO_HOME",
        "RUSTUP_HOME",
    }
)
ENV_PREFIXES: Final = ("LC_",)

#: Set for every command. TERM and NO_COLOR keep escape codes out of the kept output; CI makes
#: runners that default to watch mode (jest through react-scripts, vitest) run once and exit
#: instead of waiting for the time limit; npm_config_yes=false stops ``npx X`` from downloading
#: a package that is not installed (without it npx assumes "yes" when stdin is not a terminal).
ENV_FIXED: Final[Mapping[str, str]] = MappingProxyType(
    {
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "true",
        "npm_config_yes": "false",
    }
)

#: Names that look like credentials. Checked even for allowed and extra names, so a policy that
#: passes ``DEPLOY_TOKEN`` through by mistake still does not leak it.
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|KEY|PASS|CRED|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|DSN|DATABASE_URL"
    r"|^(?:AWS|AZURE|GCP|GOOGLE|GH|GITHUB|GITLAB|OPENAI|ANTHROPIC|NPM|PYPI|TWINE|DOCKER)_",
    re.IGNORECASE,
)

#: The shell that runs the gate (only the gate: commands themselves never go through a shell).
SHELL_FOR_GATE: Final = "/bin/sh"
#: The program every command runs under (`core.criteria.contain`), by its file: run with
#: ``-I -S``, it needs nothing but the standard library.
CONTAIN: Final = Path(contain.__file__).resolve()

Containment = Literal["auto", "pid", "user", "subreaper"]

_READ_CHUNK: Final = 65536
_POLL_S: Final = 0.1
_WAIT_STEP_S: Final = 0.01
_DRAIN_GRACE_S: Final = 1.0
"""After the command exits, how long to wait for output from a child outside its group."""


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name suggests it holds a credential."""
    return bool(_SECRET_NAME.search(name))


def search_path(value: str, outside: Path | None = None) -> str:
    """``value`` (a ``PATH``) with only absolute folders, none of them inside ``outside``.

    An empty entry, ``.`` or any relative entry names the working directory — the checkout —
    so a program a worker left there would be found before the real tool.
    """
    kept: list[str] = []
    for entry in value.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        if outside is not None and Path(os.path.normpath(entry)).is_relative_to(outside):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def child_env(
    parent: Mapping[str, str], extra_names: Iterable[str] = (), checkout: Path | None = None
) -> dict[str, str]:
    """The environment for a criterion command, built from ``parent``.

    Only `ENV_NAMES`, ``LC_*`` and ``extra_names`` are copied, never a name that `looks_secret`;
    ``PATH`` is cut to `search_path` (nothing relative, nothing inside ``checkout``), and
    `ENV_FIXED` is then applied on top.
    """
    wanted = ENV_NAMES | frozenset(extra_names)
    env = {
        name: value
        for name, value in parent.items()
        if (name in wanted or name.startswith(ENV_PREFIXES)) and not looks_secret(name)
    }
    if "PATH" in env:
        env["PATH"] = search_path(env["PATH"], checkout)
    env.update(ENV_FIXED)
    return env


@dataclass(frozen=True)
class Supervision:
    """How a host watches the commands of a verification it runs (see the module docstring)."""

    cancel: threading.Event | None = None
    """Set when the host shuts down: a running command's group is killed at once."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables that mark the command as this host's (checked before killing a leftover)."""
    started: Callable[[int], None] | None = None
    """Called with the command's process group before it runs; must record it durably."""
    ended: Callable[[int], None] | None = None
    """Called once the command and its group are gone."""


@dataclass(frozen=True)
class RunResult:
    """How a command ended and the end of what it printed."""

    returncode: int | None
    """The exit status (negative: killed by that signal); None if it did not exit in time."""
    timed_out: bool
    tail: bytes
    """The last bytes of stdout and stderr together, at most the ``keep_bytes`` asked for."""
    total_bytes: int
    """How many bytes it printed in all."""
    cancelled: bool = False
    """The supervisor stopped it (the host is shutting down); its result means nothing."""


class _Tail:
    """A byte buffer that keeps only the last ``limit`` bytes written to it."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]


def _kill_group(pgid: int) -> None:
    """Kill the command's whole tree under ``pgid`` (its leader, contain), then its group.

    The tree first: contain is stopped before its descendants are read, so orphans it adopts
    as a subreaper (where there is no namespace) are still under it when they are killed.
    """
    contain.kill_tree(pgid)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def _has_exited(pid: int) -> bool:
    """Whether ``pid`` has exited, without reaping it.

    Leaving the zombie in place keeps its pid, and so its process-group id, from being reused
    until we have killed the group; reaping first could make ``killpg`` hit a stranger.
    """
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


_Ending = Literal["exited", "timed_out", "cancelled"]


def _collect(
    process: subprocess.Popen[bytes],
    deadline: float,
    tail: _Tail,
    cancel: threading.Event | None,
) -> _Ending:
    """Read output until the command and its group are done, the deadline, or a cancel."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                return "cancelled"
            if now >= deadline:
                return "timed_out"
            if exited_at is None and _has_exited(process.pid):
                # Whatever is left in the group would only hold the pipe open: stop it now.
                _kill_group(process.pid)
                exited_at = now
            if exited_at is not None and now - exited_at >= _DRAIN_GRACE_S:
                return "exited"  # a child in another session still holds the pipe; stop reading
            for _key, _events in selector.select(min(deadline - now, _POLL_S)):
                chunk = os.read(fd, _READ_CHUNK)
                if not chunk:
                    return "exited" if _wait_until(process, deadline, cancel) else "timed_out"
                tail.add(chunk)


def _wait_until(
    process: subprocess.Popen[bytes], deadline: float, cancel: threading.Event | None
) -> bool:
    """Whether the command exits by ``deadline`` (False too when cancelled meanwhile).

    Called once its output has closed, when it has normally exited already; a command can close
    its output and go on running, though, and that still counts against the time limit.
    """
    while not _has_exited(process.pid):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or (cancel is not None and cancel.is_set()):
            return False
        time.sleep(min(remaining, _WAIT_STEP_S))
    return True


#: The gate: wait for "run" on its stdin, then become the command in place, stdin emptied.
#: A host that dies before opening it closes the pipe; ``read`` then fails and nothing runs.
_GATE = 'IFS= read -r go && [ "$go" = run ] && exec "$@" </dev/null; exit 125'
_GATE_NAME = "jarvis-verify-gate"


def _program(name: str, cwd: Path, env: Mapping[str, str]) -> str:
    """The file ``name`` executes, as exec would find it (``PATH``, else relative to ``cwd``).

    Looked for here, before anything starts, so that a missing program raises at once rather
    than failing inside the containment, after its group was recorded.

    Raises:
        FileNotFoundError: there is no such program.
        PermissionError: it is there but not an executable file.
    """
    if "/" not in name:
        found = shutil.which(name, path=env.get("PATH", os.defpath))
        if found is None:
            raise FileNotFoundError(2, "not found on PATH", name)
        return found
    path = name if os.path.isabs(name) else os.path.join(cwd, name)
    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such file", name)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise PermissionError(13, "not an executable file", name)
    return path


def _popen(
    args: list[str], cwd: Path, env: Mapping[str, str], gated: bool
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE if gated else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: killing the group kills all of it
        bufsize=0,
    )


def _start(
    argv: Sequence[str],
    executable: str | None,
    cwd: Path,
    env: Mapping[str, str],
    supervision: Supervision | None,
    containment: Containment,
) -> subprocess.Popen[bytes]:
    """Start the command under contain (behind the gate when a supervisor records its group)."""
    marked = {**env, **(supervision.env if supervision else {})}
    program = _program(executable or argv[0], cwd, env)
    contained = [sys.executable, "-I", "-S", str(CONTAIN), "--mode", containment]
    if supervision is None or supervision.started is None:
        # Nobody records this command to end it later: it dies with this process instead.
        contained += ["--parent", str(os.getpid()), "--", program, *argv]
        return _popen(contained, cwd, marked, gated=False)
    contained += ["--", program, *argv]
    process = _popen([SHELL_FOR_GATE, "-c", _GATE, _GATE_NAME, *contained], cwd, marked, True)
    assert process.stdin is not None
    try:
        supervision.started(process.pid)
        process.stdin.write(b"run\n")
    except BaseException:
        _kill_group(process.pid)
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
        raise
    finally:
        process.stdin.close()
    return process


def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    keep_bytes: int,
    executable: str | None = None,
    supervision: Supervision | None = None,
    containment: Containment = "auto",
) -> RunResult:
    """Run ``argv`` (no shell) in ``cwd`` and return how it ended.

    Args:
        argv: The command; ``argv[0]`` is what the program sees as its name.
        cwd: Where it runs.
        env: Its whole environment (see `child_env`).
        timeout_s: Its time limit; its process group is killed then.
        keep_bytes: How much of the end of its output to keep.
        executable: The program to execute, when already resolved (an absolute path); else
            ``argv[0]`` is looked up on ``env``'s ``PATH``.
        supervision: The host's watch over it: cancel, markers, recording its group.
        containment: How `core.criteria.contain` holds it: ``auto`` (a PID namespace where
            one can be made, else a subreaper) everywhere but in tests that force a mode.

    Raises:
        OSError: the command could not be started (FileNotFoundError when it does not exist).
    """
    process = _start(argv, executable, cwd, env, supervision, containment)
    tail = _Tail(keep_bytes)
    ending: _Ending = "timed_out"
    cancel = supervision.cancel if supervision else None
    try:
        ending = _collect(process, time.monotonic() + timeout_s, tail, cancel)
    finally:
        _kill_group(process.pid)
        assert process.stdout is not None
        process.stdout.close()
        returncode = process.wait()
        if supervision is not None and supervision.ended is not None:
            supervision.ended(process.pid)
    return RunResult(
        returncode=returncode if ending == "exited" else None,
        timed_out=ending == "timed_out",
        tail=bytes(tail.data),
        total_bytes=tail.total,
        cancelled=ending == "cancelled",
    )


def render_tail(run: RunResult, cap: int) -> str:
    """The last ``cap`` bytes of a command's output as text, with secrets masked.

    Masking runs on the whole kept window before the cut, so a secret that straddles the cut is
    recognised whole; a cut in the middle of a UTF-8 character drops the partial character.
    """
    masked = mask_secrets(run.tail.decode("utf-8", errors="replace")).encode("utf-8")
    if len(masked) <= cap and run.total_bytes <= len(run.tail):
        return masked.decode("utf-8")
    kept = masked[-cap:] if cap > 0 else b""
    while kept and kept[0] & 0xC0 == 0x80:  # a continuation byte: the cut split a character
        kept = kept[1:]
    return f"[output cut: the last {len(kept)} of {run.total_bytes} bytes]\n" + kept.decode()
