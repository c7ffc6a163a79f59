"""Run one criterion command so that nothing it starts outlives it.

`core.criteria.runner` starts this file as a program, behind its gate: ``python -I -S
contain.py [--mode M] [--parent PID] -- EXECUTABLE ARGV0 [ARG...]``. It imports nothing but the
standard library (``-S``: no site-packages), so it runs the same from a checkout or an install.

A process group does not hold a command's children: one that calls ``setsid``, or a daemon that
double-forks, leaves it and survived the group's kill. So the command runs in a PID namespace of
its own (mode ``pid``: as root; else ``user``: in a user namespace that maps the caller's own uid
and gid, so the command runs as the same user, never as root)::

    contain (outside: the process group the host records and kills)
      └─ init (pid 1 of the namespace; a mount namespace of its own holds a matching /proc)
           └─ the command (pid 2)

When the command exits, init reports its status to contain and exits, and the kernel kills
every process left in the namespace, sessions and daemons included. Killing contain's group
(the time limit, the host's stop, a restarted host's recovery) kills init too (SIGKILL from an
ancestor namespace always lands), and with it the namespace. init is ours rather than the
command itself because pid 1 ignores every signal it has no handler for, even from itself.

Where no namespace can be made (no privilege, user namespaces disabled), mode ``subreaper``:
contain runs the command as its child and marks itself a child subreaper, so every orphan of
the command's tree is re-parented to it rather than to the machine's init; when the command
exits it kills what is left (`kill_tree`). A whole tree is killed stopped first, so that nothing
in it forks faster than it is read. The runner likewise kills the tree under contain, not only
its group, when it stops a command.

``--parent PID``: die with that process (a command no host records, `jarvis verify`'s, must not
outlive the command line that started it). ``auto`` tries ``pid``, ``user``, then
``subreaper``; forcing one that cannot be made exits 125 saying why.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from collections.abc import Sequence
from typing import Final

MODES: Final = ("auto", "pid", "user", "subreaper")
_CLONE_NEWNS: Final = 0x00020000
_CLONE_NEWUSER: Final = 0x10000000
_CLONE_NEWPID: Final = 0x20000000
_PR_SET_PDEATHSIG: Final = 1
_PR_SET_CHILD_SUBREAPER: Final = 36
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
_MAX_READS: Final = 1000
"""Reads of the process tree one kill makes at most: each stops what it finds, so a tree
settles in a few; the bound only keeps a pathological one from holding the caller."""
_FAILED: Final = 125
"""contain's own failure (as ``env`` and ``timeout`` use): the command never ran."""


def _libc_call(name: str, *args: object) -> None:
    function = getattr(ctypes.CDLL(None, use_errno=True), name)
    if function(*args) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{name}: {os.strerror(number)}")


def _prctl(option: int, value: int) -> None:
    _libc_call("prctl", ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0),
               ctypes.c_ulong(0), ctypes.c_ulong(0))  # fmt: skip


# -- the process tree (also used by the runner and by a host's recovery) -----------------------


def _parents() -> dict[int, int]:
    """Every live process's parent, from /proc (zombies are dead: left out)."""
    found: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue  # gone meanwhile
        if len(fields) > 1 and fields[0] not in (b"Z", b"X"):
            found[int(entry)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    """The live processes under ``root``, parents before children."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # gone already (or, after a pid was reused, not ours to touch)


def kill_tree(root: int, *, include_root: bool = True) -> int:
    """SIGKILL every process under ``root`` (and ``root``); returns how many were under it.

    Each is stopped as soon as it is seen and the tree read again until no new one appears, so
    a process that forks without end cannot outrun the reading; orphans of killed processes go
    to the nearest subreaper (``root``, stopped, when it is contain) and are found next round.
    A process that cannot be signalled (not ours) is passed over, never waited for.
    """
    if include_root:
        _signal(root, signal.SIGSTOP)
    seen: set[int] = set()
    for _ in range(_MAX_READS):
        new = [pid for pid in descendants(root) if pid not in seen]
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        seen.update(new)
    for pid in seen:
        _signal(pid, signal.SIGKILL)
    if include_root:
        _signal(root, signal.SIGKILL)
    return len(seen)


# -- running the command -----------------------------------------------------------------------


def _exec(executable: str, argv: list[str]) -> None:
    """Become the command (never returns). Python ignores SIGPIPE and SIGXFSZ, and an ignored
    signal stays ignored across exec: restored, as `subprocess` does."""
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(executable, argv)
    except OSError as exc:
        os.write(2, f"jarvis: cannot run {executable}: {exc.strerror or exc}\n".encode())
        os._exit(127 if isinstance(exc, FileNotFoundError) else 126)


def _mirror(status: int) -> int:
    """End this process as the command ended: its exit code, or killed by its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the command's crash, not ours to dump
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be handled anyway
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig  # a signal that does not end a process (SIGCHLD, say)
    return os.waitstatus_to_exitcode(status)


def _enter_namespace(mode: str) -> None:
    """Unshare the PID and mount namespaces (children of this process get them)."""
    if mode == "pid":
        _libc_call("unshare", _CLONE_NEWPID | _CLONE_NEWNS)
        return
    uid, gid = os.getuid(), os.getgid()
    _libc_call("unshare", _CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWNS)
    # The same ids inside: the command is the user it was, not root of a namespace.
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    except OSError as exc:
        # Too late to fall back: this process is in the namespace already, where its ids are
        # unmapped and every file it would create is refused. Nothing ran; say why.
        os.write(2, f"jarvis: contain: user namespace without an id map: {exc}\n".encode())
        os._exit(_FAILED)


def _private_proc() -> None:
    """Mount a /proc that shows this namespace, so pids the command reads there are its own.

    Only after every mount here is made private: a proc mount must never reach the host's
    namespace. Best effort: where it is refused (a container's masked /proc) the command still
    runs contained, only reading the host's view of /proc.
    """
    try:
        _libc_call("mount", b"none", b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None)
        _libc_call("mount", b"proc", b"/proc", b"proc",
                   ctypes.c_ulong(_MS_NOSUID | _MS_NODEV | _MS_NOEXEC), None)  # fmt: skip
    except OSError:
        pass


def _init(report: int, executable: str, argv: list[str]) -> None:
    """Pid 1 of the namespace: run the command, reap orphans, report its status, exit.

    Exits 0 once it reported, else (it failed before the command ended) `_FAILED`, which
    contain passes on: a command that never ran must not look like one that passed.
    """
    code = _FAILED
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        _private_proc()
        command = os.fork()
        if command == 0:
            _exec(executable, argv)
        while True:
            pid, status = os.wait()
            if pid == command:
                os.write(report, str(status).encode())
                code = 0
                break
    finally:
        os._exit(code)  # the kernel kills whatever is left in the namespace


def _contained(mode: str, executable: str, argv: list[str]) -> int:
    read_end, write_end = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(read_end)
        _init(write_end, executable, argv)
    os.close(write_end)

    def stopped(*_: object) -> None:
        # Asked to stop (its parent died, say): the namespace ends with this process.
        _signal(init, signal.SIGKILL)
        os._exit(_FAILED)

    signal.signal(signal.SIGTERM, stopped)
    _, status = os.waitpid(init, 0)
    with os.fdopen(read_end, "rb") as report:
        said = report.read()
    return _mirror(int(said) if said else status)


def _subreaped(executable: str, argv: list[str]) -> int:
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)

    def stopped(*_: object) -> None:
        # Asked to stop: nothing holds the tree but this process, so it ends the tree first.
        kill_tree(os.getpid(), include_root=False)
        os._exit(_FAILED)

    signal.signal(signal.SIGTERM, stopped)
    command = os.fork()
    if command == 0:
        _exec(executable, argv)
    while True:
        pid, status = os.wait()
        if pid == command:
            break
    kill_tree(os.getpid(), include_root=False)
    try:
        while True:
            os.wait()  # the killed ones, re-parented here
    except ChildProcessError:
        pass
    return _mirror(status)


def run(mode: str, executable: str, argv: list[str]) -> int:
    """Run the command in ``mode`` (see the module docstring); returns its exit code."""
    if mode != "subreaper":
        tried = ("pid", "user") if mode == "auto" else (mode,)
        for each in tried:
            try:
                _enter_namespace(each)
            except OSError as exc:
                problem = exc
                continue
            return _contained(each, executable, argv)
        if mode != "auto":
            os.write(2, f"jarvis: no {mode} namespace: {problem}\n".encode())
            return _FAILED
    return _subreaped(executable, argv)


def main(args: Sequence[str]) -> int:
    mode, parent = "auto", 0
    rest = list(args)
    while rest and rest[0] != "--":
        option, value = rest[0], rest[1] if len(rest) > 1 else ""
        if option == "--mode" and value in MODES:
            mode = value
        elif option == "--parent" and value.isdigit():
            parent = int(value)
        else:
            os.write(2, f"jarvis: contain: bad option {option!r}\n".encode())
            return _FAILED
        rest = rest[2:]
    if len(rest) < 3:
        os.write(2, b"jarvis: contain: usage: [--mode M] [--parent PID] -- PROGRAM ARGV0 ...\n")
        return _FAILED
    if parent:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # it died before the request was in place
            return _FAILED
    try:
        return run(mode, rest[1], rest[2:])
    except OSError as exc:  # a fork, a pipe, prctl: said in a sentence, never a traceback
        os.write(2, f"jarvis: contain: {exc}\n".encode())
        return _FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
