"""Telling a fault of the store — the disk, the database file, its lock — from a fault of the data.

"database or disk is full" says nothing about the row being written: the same row goes in once
there is room. A caller that took it for a bad input would refuse good data (the host used to
quarantine valid progress for it). `store_fault` recognises the SQLite and PostgreSQL errors that
are about the store itself (a lost connection to a database server among them), so callers wait
them out instead, and anything else is left to the caller's own judgement (a constraint, an
oversized value, a bug).
"""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import dataclass

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
    """The exception classes of every backend that is loaded, for an ``except`` clause."""
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
