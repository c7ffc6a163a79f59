"""The store's own errors: what every backend raises, whatever driver it speaks.

A caller of the store — the host, the command line, the console — catches `StoreError` and
nothing else: each backend turns its driver's exceptions (sqlite3's, psycopg's) into one of
these before they leave `core/store/`, keeping the driver's exception as the cause so the
classification of faults (`core.store.faults.store_fault`) still reads it. This module imports
no driver, so naming these errors costs a caller nothing.
"""

from __future__ import annotations

from pathlib import Path

#: Every code a `StoreError` carries, with what it means. Stable: scripts and docs use them.
CODES = {
    "no_workspace": "there is no store there (nothing was created)",
    "store_empty": "jarvis.db is zero bytes: its history is missing",
    "store_not_a_file": "a directory or other non-file is where jarvis.db should be",
    "store_corrupt": "not an SQLite database, or damaged",
    "store_too_new": "a newer jarvis migrated it",
    "store_foreign": "an SQLite database, but not a Jarvis store",
    "store_outdated": "needs a schema upgrade that a read-only open cannot make",
    "store_unreadable": "cannot be opened (permissions, or a path that is not a directory)",
    "disk_full": "the disk (or its quota) is full",
    "store_busy": "another process held the write lock past the busy timeout",
    "store_read_only": "the store or its directory is read-only for this user",
    "store_io_error": "the operating system reported an I/O error",
    "store_unreachable": "the database server cannot be reached, or refused the connection",
    "store_config": "the store named (--db, JARVIS_DB, [store] url) is no store Jarvis can use",
    "store_unusable": "any other failure of the database",
}

#: The codes no retry can cure: the file itself is wrong (damaged, emptied, foreign, too new)
#: or gone. A reader that meets one stops; the passing faults (full, busy, I/O) are waited out.
LASTING = frozenset(
    {"no_workspace", "store_empty", "store_not_a_file", "store_corrupt", "store_too_new",
     "store_foreign"}
)  # fmt: skip


class StoreError(Exception):
    """The store cannot be opened or used; ``message`` says why in a sentence.

    Attributes:
        code: one of `CODES`.
        message: the sentence for the operator.
        path: the store's file, or its database URL (its password masked).
    """

    def __init__(self, code: str, message: str, path: Path | str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path


class QueryError(StoreError):
    """The database refused a statement for what it said or carried — a constraint, a value
    out of range, a table that is not there — rather than for the state of the store: a fault
    of the code that asked, which no wait cures (code ``store_unusable``). The host stops on
    one as on any bug; a command reports it as the store's, in its sentence."""


__all__ = ["CODES", "LASTING", "QueryError", "StoreError"]
