"""One host per workspace: an exclusive ``flock`` on ``<workspace>/host.lock``.

The kernel releases the lock when the holder dies, even by ``kill -9``, so a crashed host never
blocks its successor; the file keeps the holder's pid only so a refusal can name it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class HostLockHeld(Exception):
    """Another host holds the workspace."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        holder = f"pid {pid}" if pid else "another process"
        super().__init__(f"Another host ({holder}) is already running on this workspace ({path}).")


class HostLock:
    def __init__(self, workspace_root: Path) -> None:
        self.path = workspace_root / "host.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise `HostLockHeld` naming the holder."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise HostLockHeld(self.path, int(raw) if raw.isdigit() else None) from None
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
        """The pid of the host holding the workspace, or None when no host does."""
        path = workspace_root / "host.lock"
        if not path.exists():
            return None
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(raw) if raw.isdigit() else -1
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)
