"""Telling a fault of the store — the disk, the database file, its lock — from a fault of the data.

"database or disk is full" says nothing about the row being written: the same row goes in once
there is room. A caller that took it for a bad input would refuse good data (the host used to
quarantine valid progress for it). `store_fault` recognises the SQLite and PostgreSQL errors that
are about the store itself (a lost connection to a database server among them), so callers wait
them out instead, and anything else is left to the caller's own judgement (a constraint, an
oversized value, a bug). `fault` makes the store's error for a driver's exception, the one
every backend raises in its place (`core.store.errors`).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

from core.store.errors import QueryError, StoreError

#: What a damaged store's sentence tells the operator to do.
RESTORE = "keep a copy of the file and restore it from a backup (stop any host on it first)"

#: SQLite's primary result codes that describe the store, not the statement, by stable name.
_KINDS: dict[int, str] = {
    sqlite3.SQLITE_FULL: "full",
    sqlite3.SQLITE_IOERR: "io_error",
    sqlite3.SQLITE_NOLFS: "io_error",
    sqlite3.SQLITE_BUSY: "locked",
    sqlite3.SQLITE_LOCKED: "locked",
    sqlite3.SQLITE_PROTOCOL: "locked",
    sqlite3.SQLITE_READONLY: "read_only",
    sqlite3.SQLITE_PERM: "cannot_open",
    sqlite3.SQLITE_AUTH: "cannot_open",
    sqlite3.SQLITE_CANTOPEN: "cannot_open",
    sqlite3.SQLITE_CORRUPT: "corrupt",
    sqlite3.SQLITE_NOTADB: "corrupt",
    sqlite3.SQLITE_NOMEM: "no_memory",
}

#: For errors that carry no result code: the texts SQLite gives the same conditions.
_TEXTS = (
    ("database or disk is full", "full"),
    ("disk i/o error", "io_error"),
    ("database is locked", "locked"),
    ("database table is locked", "locked"),
    ("readonly database", "read_only"),
    ("unable to open database", "cannot_open"),
    ("malformed", "corrupt"),
    ("file is not a database", "corrupt"),
)

_CHAIN_LIMIT = 8
"""How far back through ``__cause__``/``__context__`` to look: a clean-up step that failed
because the transaction was already gone hides the fault that destroyed it."""


@dataclass(frozen=True, slots=True)
class StoreFault:
    """A fault of the store: waiting (for space, a lock, an administrator) may cure it."""

    kind: str
    """Stable snake_case: ``full``, ``io_error``, ``locked``, ``read_only``, ``cannot_open``,
    ``corrupt``, ``no_memory`` or (a database server) ``unreachable``."""
    message: str
    """SQLite's own words, e.g. ``database or disk is full``."""


def database_errors() -> tuple[type[BaseException], ...]:
    """The exception classes of every backend that is loaded.

    No longer for callers' ``except`` clauses: the backends raise `StoreError` in their place.
    Kept importable until every caller catches `StoreError` alone.
    """
    loaded: tuple[type[BaseException], ...] = (sqlite3.Error,)
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        loaded += (psycopg.Error,)
    return loaded


def store_fault(exc: BaseException) -> StoreFault | None:
    """The store fault behind ``exc``, or None when ``exc`` is not about the store.

    Looks at ``exc`` and the exceptions it was raised from or while handling, so a rollback that
    failed after SQLite had already rolled back still reports the disk that filled up.
    """
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < _CHAIN_LIMIT:
        found = _one(current)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
        seen += 1
    return None


#: PostgreSQL's SQLSTATE codes (and classes, by their first two characters) that describe the
#: server or the connection, not the statement.
_PG_STATES: dict[str, str] = {
    "53100": "full",  # disk_full
    "53200": "no_memory",  # out_of_memory
    "53300": "unreachable",  # too_many_connections
    "25006": "read_only",  # read_only_sql_transaction
    "55P03": "locked",  # lock_not_available (lock_timeout)
    "57014": "locked",  # query_canceled (statement_timeout)
    "42501": "cannot_open",  # insufficient_privilege
    "28000": "cannot_open",  # invalid_authorization_specification
    "28P01": "cannot_open",  # invalid_password
    "3D000": "cannot_open",  # invalid_catalog_name: no such database
    "58030": "io_error",  # io_error
    "XX001": "corrupt",  # data_corrupted
    "XX002": "corrupt",  # index_corrupted
}
_PG_CLASSES: dict[str, str] = {
    "08": "unreachable",  # connection exception
    "57": "unreachable",  # operator intervention: the server shutting down or restarting
    "53": "full",  # insufficient resources
    "58": "io_error",  # system error
}


def _postgres(exc: BaseException) -> StoreFault | None:
    """The fault a psycopg error names, if it is one (psycopg is never imported for this:
    without it loaded, no such error exists)."""
    if not type(exc).__module__.startswith("psycopg"):
        return None
    import psycopg  # already loaded: the error came from it

    if not isinstance(exc, psycopg.Error):
        return None
    message = str(exc).strip() or type(exc).__name__
    state = exc.sqlstate or ""
    kind = _PG_STATES.get(state) or _PG_CLASSES.get(state[:2])
    if (
        kind is None
        and not state
        and isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
    ):
        kind = "unreachable"  # no SQLSTATE: the client lost, or never had, the connection
    return StoreFault(kind, message) if kind else None


def _one(exc: BaseException) -> StoreFault | None:
    found = _postgres(exc)
    if found is not None:
        return found
    # IntegrityError, DataError (a value too big), ProgrammingError and InterfaceError are about
    # the statement or its values; only OperationalError and the base DatabaseError (corruption)
    # can be about the store.
    if type(exc) not in (sqlite3.OperationalError, sqlite3.DatabaseError):
        return None
    message = str(exc)
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        kind = _KINDS.get(code & 0xFF)
        return StoreFault(kind, message) if kind else None
    lowered = message.lower()
    for text, kind in _TEXTS:
        if text in lowered:
            return StoreFault(kind, message)
    return None


def fault(exc: BaseException, path: Path | str) -> StoreError:
    """The `StoreError` for a database error raised while opening or using the store at ``path``
    (an SQLite file, or a database URL as shown: its password masked).

    Never a verdict on what the caller was doing: a full disk is a full disk, whatever the
    document being stored. Which fault it is comes from `store_fault`, the one classifier the
    host shares; an error that is no fault of the store is a `QueryError`. Every backend raises
    what this returns, from the driver's exception, wherever its driver raised one.
    """
    found = store_fault(exc)
    detail = (found.message if found else str(exc)) or type(exc).__name__
    kind = found.kind if found is not None else None
    # SQLite says "disk I/O error" when a full disk stops it growing its shared-memory index or
    # log rather than the database: the free space tells the two apart.
    if kind == "unreachable":
        return StoreError(
            "store_unreachable",
            f"Cannot reach the store {path} ({detail}); check that its server is up and "
            "reachable from here.",
            path,
        )
    if kind == "full" or (kind == "io_error" and isinstance(path, Path) and disk_is_full(path)):
        return StoreError(
            "disk_full",
            f"The disk holding the store {path} is full: it could not be written. "
            "Free some space and try again.",
            path,
        )
    if kind == "locked":
        return StoreError(
            "store_busy",
            f"The store {path} stayed locked by another process for longer than the busy "
            "timeout; try again.",
            path,
        )
    if kind == "read_only":
        return StoreError(
            "store_read_only",
            f"The store {path} cannot be written: it or its directory is read-only for this "
            f"user ({detail}).",
            path,
        )
    if kind == "corrupt":
        return StoreError(
            "store_corrupt",
            f"The store {path} is damaged or not an SQLite database ({detail}): {RESTORE}.",
            path,
        )
    if kind == "cannot_open":
        return StoreError(
            "store_unreadable", f"The store {path} cannot be opened ({detail}).", path
        )
    if kind in ("io_error", "no_memory"):
        return StoreError(
            "store_io_error",
            f"Reading or writing the store {path} failed ({detail}); check the disk.",
            path,
        )
    return QueryError("store_unusable", f"The store {path} cannot be used ({detail}).", path)


#: Less free space than this on the store's file system counts as a full disk.
FULL_BELOW_BYTES = 1024 * 1024


def disk_is_full(path: Path) -> bool:
    """Whether the file system holding ``path`` has (almost) no space left for this user."""
    try:
        info = os.statvfs(path.parent)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < FULL_BELOW_BYTES
