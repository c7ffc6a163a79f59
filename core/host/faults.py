"""Faults of the host's storage, which it waits out instead of ending or blaming a file.

A full disk, an I/O error, a store another process holds locked, an errors folder that cannot be
written: none of them says anything about the file being ingested or the run being recorded, and
each may pass (space is freed, the lock released). The host's loop hands any exception from a
step to `io_fault`; for one of these it keeps every file where it is, says so in its log once,
waits (longer each time, up to `LONGEST_WAIT_S`) and tries the whole step again. Anything else
is not the disk's doing and is left to the code that raised it.
"""

from __future__ import annotations

import errno
import logging
import threading
import time

from core.ipc.files import QuarantineError
from core.store.faults import store_fault

log = logging.getLogger("jarvis.host")

FIRST_WAIT_S = 0.2
LONGEST_WAIT_S = 5.0

#: OSError numbers that are about the disk, not the file being read or written.
_DISK_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.ENOMEM, errno.ENFILE, errno.EMFILE}
)


class StorageFault(Exception):
    """A storage fault met on another thread (the verifier), handed to the loop to wait out."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def io_fault(exc: BaseException) -> str | None:
    """What is wrong with the host's storage, in a sentence, or None when ``exc`` is not that."""
    if isinstance(exc, StorageFault):
        return exc.problem
    found = store_fault(exc)
    if found is not None:
        return f"the store cannot be used ({found.kind}: {found.message})"
    if isinstance(exc, QuarantineError):
        return f"refused files cannot be moved aside ({exc})"
    if isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS:
        return f"the disk failed ({exc.strerror or exc})"
    return None


class FaultWait:
    """The loop's memory of a storage fault: logged once, waited out with a growing pause."""

    def __init__(self, stopping: threading.Event) -> None:
        self._stopping = stopping
        self.attempts = 0
        """Attempts that have failed since the storage last worked (0: it works)."""
        self._problem: str | None = None
        self._since = 0.0

    def wait(self, problem: str) -> None:
        """Log ``problem`` (once per fault, or when it changes) and pause; `stop` cuts it short."""
        if self.attempts == 0:
            self._since = time.monotonic()
        self.attempts += 1
        if problem != self._problem:
            log.error(
                "%s; every file stays where it is, and the host tries again (at least every "
                "%g s) until it works",
                problem,
                LONGEST_WAIT_S,
            )
            self._problem = problem
        pause = min(LONGEST_WAIT_S, FIRST_WAIT_S * 2 ** min(self.attempts - 1, 16))
        self._stopping.wait(pause)

    def worked(self) -> bool:
        """Note that a step went through; True when that ends a fault (catch up on it then)."""
        if self.attempts == 0:
            return False
        log.warning(
            "storage works again after %d failed attempt(s) over %.0f s; catching up",
            self.attempts,
            time.monotonic() - self._since,
        )
        self.attempts = 0
        self._problem = None
        return True
