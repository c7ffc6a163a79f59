"""One host per workspace: an exclusive ``flock`` on ``<workspace>/host.lock``.

The kernel releases the lock when the holder dies, even by ``kill -9``, so a crashed host never
blocks its successor; the file keeps the holder's pid only so a refusal can name it.

Asking who holds the lock never takes it. An earlier `HostLock.holder` probed by taking the lock
for an instant, and a host starting in that instant was refused as if another host ran. Now the
question is answered from ``/proc/locks`` (the kernel's own table of held locks) on Linux, and from
the pid in the file plus a liveness check elsewhere. `HostLock.acquire` also retries for a quarter
of a second, so a prober from an older version, or any other brief holder, cannot turn a start
into a refusal either.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

LOCK_NAME = "host.lock"
PROC_LOCKS = Path("/proc/locks")
#: How long `HostLock.acquire` keeps trying before it reports the lock held.
ACQUIRE_WAIT_S = 0.25
_RETRY_S = 0.01


class HostLockHeld(Exception):
    """Another host holds the workspace."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        holder = f"pid {pid}" if pid else "another process"
        super().__init__(f"Another host ({holder}) is already running on this workspace ({path}).")


class HostLock:
    def __init__(self, workspace_root: Path) -> None:
        self.path = workspace_root / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, *, wait_s: float = ACQUIRE_WAIT_S) -> None:
        """Take the lock or raise `HostLockHeld` naming the holder.

        Tries for ``wait_s`` before giving up: a lock held for an instant by someone only looking
        must not make a starting host believe another one runs.
        """
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(_RETRY_S)
                    continue
                pid = _pid_in(fd)
                os.close(fd)
                raise HostLockHeld(self.path, pid) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @staticmethod
    def holder(workspace_root: Path) -> int | None:
        """The pid of the host holding the workspace, or None when no host does.

        Never takes the lock, so it is safe to call in a loop while a host starts. ``-1`` means
        the lock is held by a process whose pid cannot be seen (another pid namespace).
        """
        path = workspace_root / LOCK_NAME
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return None
        written = _pid_in_file(path)
        holders = _flock_holders(stat, written)
        if holders is None:  # no /proc/locks: trust the file if its process is alive
            return written if written and pid_alive(written) else None
        if not holders:
            return None
        if written in holders:
            return written
        visible = [pid for pid in holders if pid > 0]
        return visible[0] if visible else (written or -1)


def _pid_in(fd: int) -> int | None:
    raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(raw) if raw.isdigit() else None


def _pid_in_file(path: Path) -> int | None:
    try:
        raw = path.read_bytes()[:32].decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(raw) if raw.isdigit() else None


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _flock_holders(stat: os.stat_result, written: int | None) -> list[int] | None:
    """Pids holding a ``flock`` on the file ``stat`` describes, or None without /proc/locks.

    Lines look like ``1: FLOCK  ADVISORY  WRITE 1876 fe:00:2146322 0 EOF`` (device in hex,
    inode in decimal); waiters are marked ``->`` and do not hold anything.
    """
    try:
        text = PROC_LOCKS.read_text("ascii", "replace")
    except OSError:
        return None
    device = (os.major(stat.st_dev), os.minor(stat.st_dev))
    on_device: list[int] = []
    same_inode: list[int] = []
    for line in text.splitlines():
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        where = fields[5].split(":")
        if len(where) != 3:
            continue
        try:
            pid = int(fields[4])
            major, minor, inode = int(where[0], 16), int(where[1], 16), int(where[2])
        except ValueError:
            continue
        if inode != stat.st_ino:
            continue
        same_inode.append(pid)
        if (major, minor) == device:
            on_device.append(pid)
    if on_device:
        return on_device
    # Some stacked file systems report another device in /proc/locks than stat() does; then a
    # lock on the same inode counts only if it is held by the pid the file names.
    return [pid for pid in same_inode if written is not None and pid == written]
