"""Ending whatever an attack started and removing its folders, however the attack ends.

An attack starts hosts, which start workers and criterion commands in sessions of their own; it
starts the CLI and the console on a pseudo-terminal; and it kills hosts with ``kill -9`` on
purpose, orphaning their workers until the next host settles them. A wait that gives up, an
exception, Ctrl-C or a SIGTERM must leave none of that running, nor a mounted file system, nor a
temporary folder.

Everything started inside `contained` is found by pid, never by name: it carries ``TOKEN`` in
its environment (hosts pass their environment on to their workers), or it works inside the
harness's temporary folder (a criterion command gets a scrubbed environment but runs in its
checkout there). Each is sent SIGKILL, with the process group it leads, until none is left;
this process's own children are then reaped.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

TOKEN = "JARVIS_ATTACK_RUN"
"""The environment variable that marks every process an attack harness started."""

_ROUNDS = 200
"""Kill rounds before giving up: a host may start a worker between a look and a kill."""


@dataclass(frozen=True)
class Scope:
    """What one harness owns: the processes carrying ``token``, and everything under ``root``."""

    token: str
    root: Path


_current: Scope | None = None


def current() -> Scope | None:
    """The scope `contained` set up in this process, if any."""
    return _current


def _environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []  # gone, not ours to read, or a zombie (whose environment reads empty)


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _spared() -> set[int]:
    """This process and its ancestors: a harness may itself carry the token it was given."""
    spared, pid = set(), os.getpid()
    while pid > 1 and pid not in spared:
        spared.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return spared


def _under(path: str, folder: Path) -> bool:
    return bool(path) and Path(path).is_relative_to(folder)


def found(scope: Scope, within: Path | None = None) -> list[int]:
    """Live processes of ``scope`` (only those that name or work in ``within``, if given)."""
    marker = f"{TOKEN}={scope.token}".encode()
    spared = _spared()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in spared:
            continue
        pid = int(entry)
        environ, cwd = _environ(pid), _cwd(pid)
        if marker not in environ and not _under(cwd, scope.root):
            continue
        if within is not None:
            named = str(within).encode()
            if not (_under(cwd, within) or named in _cmdline(pid)
                    or any(named in value for value in environ)):  # fmt: skip
                continue
        pids.append(pid)
    return pids


def reap() -> None:
    """Collect every child of this process that has exited, so none lingers as a zombie."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def stop(scope: Scope, within: Path | None = None) -> list[int]:
    """SIGKILL every process of ``scope`` (see `found`) until none is left; the pids killed."""
    killed: list[int] = []
    own_group = os.getpgrp()
    for _ in range(_ROUNDS):
        pids = found(scope, within)
        if not pids:
            break
        for pid in pids:
            try:
                if os.getpgid(pid) == pid and pid != own_group:
                    os.killpg(pid, signal.SIGKILL)  # a group leader: its helpers go with it
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            killed.append(pid)
        reap()
        time.sleep(0.02)  # a killed process's /proc entry lingers until it is reaped
    reap()
    return killed


def unmount(root: Path) -> list[str]:
    """Lazily unmount every file system mounted under ``root`` (deepest first)."""
    points = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        # /proc/mounts escapes blanks and backslashes in octal.
        point = fields[1].encode().decode("unicode_escape") if len(fields) > 1 else ""
        if _under(point, root):
            points.append(point)
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)
    return points


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def contained(prefix: str = "jarvis-attacks-") -> Iterator[Scope]:
    """A scope for this process and everything it starts, ended and removed on the way out.

    Temporary folders made inside (`tempfile`, ``TMPDIR`` for children) fall under its root. A
    token already in the environment is kept, so a harness that started this one can still find
    what this one started. SIGTERM ends the block like Ctrl-C does; a second signal during the
    clean-up is ignored, so the clean-up always completes. ``JARVIS_ATTACK_KEEP=1`` keeps the
    folders (the processes are still ended).
    """
    global _current
    root = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    scope = Scope(os.environ.get(TOKEN) or uuid.uuid4().hex, root)
    saved_env = {name: os.environ.get(name) for name in (TOKEN, "TMPDIR")}
    saved_tempdir, saved_current = tempfile.tempdir, _current
    os.environ[TOKEN], os.environ["TMPDIR"] = scope.token, str(root)
    tempfile.tempdir, _current = str(root), scope
    saved_term = signal.signal(signal.SIGTERM, _interrupted)
    # Ctrl-C interrupts even where the shell started this with SIGINT ignored (`cmd &`).
    saved_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield scope
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            stop(scope)
            unmount(root)
            if os.environ.get("JARVIS_ATTACK_KEEP"):
                print(f"  (kept {root})")
            else:
                shutil.rmtree(root, ignore_errors=True)
        finally:
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            tempfile.tempdir, _current = saved_tempdir, saved_current
            signal.signal(signal.SIGINT, saved_int)
            signal.signal(signal.SIGTERM, saved_term)
