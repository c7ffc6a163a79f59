"""The PostgreSQL backend: the store's interface (`core.store.api`) over psycopg 3.

Every named read and write is the same statement as in SQLite, written portably; this module
provides what differs: the connection, ``?`` placeholders given as psycopg's ``%s``, numbers
PostgreSQL sums into ``numeric`` handed back as ints and floats, the journal's sequence number
from ``RETURNING``, steers ordered by their identity column, and writers serialised for a whole
transaction by an advisory lock (what SQLite's ``BEGIN IMMEDIATE`` gives the SQLite store, and
what makes two operators' compare-and-sets come out one effect and one refusal). A NUL, which
PostgreSQL refuses in text, is bound as U+FFFD here as on SQLite (`core.store.statements.bound`).

Chosen by ``--db``, ``JARVIS_DB`` or ``[store] url`` (`core.store.location`). psycopg is the
``postgres`` extra, imported only when this module is. Opening refuses what opening an SQLite
store refuses, in the same words and codes: a database whose schema a newer jarvis wrote, one
holding tables of someone else's, one a read-only open would have to upgrade; a server that
cannot be reached is ``store_unreachable``. A connection the server dropped is opened again at
the next call (the call that met the drop fails as a store fault, which callers wait out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

import psycopg
from psycopg.rows import dict_row

from core.store.api import Row, RunStore, RunTransaction, iso, utc_now
from core.store.errors import StoreError
from core.store.faults import fault
from core.store.postgres_schema import MIGRATIONS
from core.store.statements import bound
from core.store.urls import masked

#: What writers NOTIFY at each commit that journaled something: the newest sequence number.
CHANNEL: Final = "jarvis_journal"

#: The advisory lock every write transaction takes first (a constant of Jarvis's own).
WRITE_LOCK: Final = 0x4A415256  # "JARV"


def _sql(statement: str) -> str:
    """A statement written with ``?`` placeholders, as psycopg takes it (``%s``; a literal
    ``%`` doubled). The store's statements hold no ``?`` inside a string literal."""
    return statement.replace("%", "%%").replace("?", "%s")


def _plain(value: Any) -> Any:
    # SUM over integers is numeric in PostgreSQL: a whole one is an int, as SQLite gives it.
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _rows(cursor: psycopg.Cursor[dict[str, Any]]) -> list[Row]:
    return [{key: _plain(value) for key, value in row.items()} for row in cursor.fetchall()]


class _Connected:
    """``rows``/``execute`` over one psycopg connection, speaking the store's errors: psycopg's
    become a `StoreError` (`fault`) as they leave the statement that raised them."""

    conn: psycopg.Connection[dict[str, Any]]
    location: str

    def rows(self, sql: str, params: list[Any] | None = None) -> list[Row]:
        try:
            with self.conn.cursor() as cursor:
                cursor.execute(_sql(sql), bound(params or []))
                return _rows(cursor)
        except psycopg.Error as exc:
            raise fault(exc, self.location) from exc

    def execute(self, sql: str, params: list[Any]) -> int:
        try:
            with self.conn.cursor() as cursor:
                cursor.execute(_sql(sql), bound(params))
                return int(cursor.rowcount)
        except psycopg.Error as exc:
            raise fault(exc, self.location) from exc

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        # psycopg sends every row's statement before reading any answer (pipeline mode): one
        # round trip for the lot, where a statement at a time waits for each.
        try:
            with self.conn.cursor() as cursor:
                cursor.executemany(_sql(sql), [bound(row) for row in rows])
        except psycopg.Error as exc:
            raise fault(exc, self.location) from exc


@contextmanager
def translated(location: str) -> Iterator[None]:
    """psycopg's errors raised inside as the store's (`fault`): for the statements a backend
    runs around its callers' (BEGIN, COMMIT, SAVEPOINT, the lock) and for any caller of the
    connection."""
    try:
        yield
    except psycopg.Error as exc:
        raise fault(exc, location) from exc


class PostgresTransaction(_Connected, RunTransaction):
    """One unit of work on the PostgreSQL store; obtain one from `PostgresStore.transaction`."""

    claim_lock = " FOR UPDATE SKIP LOCKED"
    newest_seq = 0
    """The newest journal entry this transaction wrote (0: none), announced at its commit."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]], now: str, location: str) -> None:
        self.conn = conn
        self.now = now
        self.location = location

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        with translated(self.location), self.conn.transaction():
            yield

    def journal(self, run_id: str, kind: str, payload: Mapping[str, Any], actor: str) -> int:
        (row,) = self.rows(
            "INSERT INTO journal (run_id, kind, payload, actor, at) VALUES (?, ?, ?, ?, ?) "
            "RETURNING seq",
            [run_id, kind, self.journal_text(payload), actor, self.now],
        )
        self.newest_seq = int(row["seq"])
        return self.newest_seq

    def journal_many(self, entries: Sequence[tuple[str, str, Mapping[str, Any], str]]) -> None:
        if not entries:
            return
        self.execute_many(
            "INSERT INTO journal (run_id, kind, payload, actor, at) VALUES (?, ?, ?, ?, ?)",
            [[run_id, kind, self.journal_text(payload), actor, self.now]
             for run_id, kind, payload, actor in entries],
        )  # fmt: skip
        # The newest entry is this session's last value of the journal's sequence.
        (row,) = self.rows("SELECT currval(pg_get_serial_sequence('journal', 'seq')) AS seq")
        self.newest_seq = int(row["seq"])


class PostgresStore(_Connected, RunStore):
    """One connection to a workspace's PostgreSQL database (a ``postgresql://`` URL)."""

    dialect = "postgres"

    steer_order = "s.id"  # SQLite orders steers by rowid; here the identity column does

    def __init__(
        self,
        url: str,
        *,
        clock: Callable[[], datetime] = utc_now,
        migrate: bool = True,
        create: bool = True,
        read_only: bool = False,
        busy_timeout_s: float = 30.0,
    ) -> None:
        """Connect, check the schema, and bring it up to date when ``migrate``.

        Args:
            create: make Jarvis's tables in an empty database (the database itself must exist:
                making databases is the server's administrator's business).
            read_only: every transaction of this connection is read-only; never migrates.
            busy_timeout_s: how long a statement waits for a lock (``lock_timeout``), and a
                connection for the server.

        Raises:
            StoreError: ``store_unreachable``, ``no_workspace`` (an empty database without
                ``create``), ``store_foreign``, ``store_too_new``, ``store_outdated``, or the
                fault met while migrating.
        """
        self.url = url
        self.location = masked(url)
        self.path = None
        self.created = False
        self.read_only = read_only
        self.immutable = False
        self._clock = clock
        self._busy_timeout_s = busy_timeout_s
        self.conn = self._connect()
        try:
            pending = self._check_schema(create=create and not read_only)
            if pending and migrate and not read_only:
                self.created = pending == len(MIGRATIONS) and not self._has_runs_table()
                self._migrate()
        except BaseException as exc:
            self.conn.close()
            if isinstance(exc, psycopg.Error):
                raise fault(exc, self.location) from None
            raise

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        options = f"-c lock_timeout={int(self._busy_timeout_s * 1000)}"
        if self.read_only:
            options += " -c default_transaction_read_only=on"
        try:
            # Autocommit: every read outside a transaction sees the latest commit, as a SQLite
            # reader does; writes go in explicit transactions.
            return psycopg.connect(
                self.url,
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=max(1, int(self._busy_timeout_s)),
                options=options,
            )
        except psycopg.Error as exc:
            raise fault(exc, self.location) from None

    def _live(self) -> psycopg.Connection[dict[str, Any]]:
        """The connection, opened again if the server dropped it (a restart, a failover)."""
        if self.conn.closed or self.conn.broken:
            self.conn = self._connect()
        return self.conn

    def rows(self, sql: str, params: list[Any] | None = None) -> list[Row]:
        self._live()
        return super().rows(sql, params)

    def execute(self, sql: str, params: list[Any]) -> int:
        self._live()
        return super().execute(sql, params)

    def _has_runs_table(self) -> bool:
        return bool(self.rows("SELECT to_regclass('runs') IS NOT NULL AS found")[0]["found"])

    def _check_schema(self, *, create: bool) -> int:
        """How many schema steps are pending; refuses a database this code must not use."""
        found = self.rows(
            "SELECT to_regclass('jarvis_migrations') IS NOT NULL AS ours, "
            "(SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()) "
            "AS tables"
        )[0]
        known = [name for name, _ in MIGRATIONS]
        if not found["ours"]:
            if found["tables"]:
                raise StoreError(
                    "store_foreign",
                    f"{self.location} holds tables but no Jarvis schema; Jarvis will not write "
                    "into it.",
                    self.location,
                )
            if not create:
                raise StoreError(
                    "no_workspace",
                    f"There is no Jarvis store in {self.location} (the database is empty); "
                    "nothing was created. `jarvis host` or `jarvis dispatch` creates one.",
                    self.location,
                )
            return len(known)
        applied = [r["name"] for r in self.rows("SELECT name FROM jarvis_migrations")]
        unknown = sorted(name for name in applied if name not in known)
        if unknown:
            raise StoreError(
                "store_too_new",
                f"The store {self.location} was upgraded by a newer jarvis (schema step "
                f"{unknown[0]} is unknown to this one); use that version or a newer one.",
                self.location,
            )
        pending = len(known) - len(applied)
        if pending and self.read_only:
            raise StoreError(
                "store_outdated",
                f"The store {self.location} needs a schema upgrade that a read-only open cannot "
                "make; run `jarvis host` or a writing command once.",
                self.location,
            )
        return pending

    def _migrate(self) -> None:
        with translated(self.location), self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS jarvis_migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            done = {r["name"] for r in self.rows("SELECT name FROM jarvis_migrations")}
            for name, script in MIGRATIONS:
                if name in done:
                    continue
                self.conn.execute(script.encode())
                self.execute(
                    "INSERT INTO jarvis_migrations (name, applied_at) VALUES (?, ?)",
                    [name, self.now()],
                )

    def now(self) -> str:
        return iso(self._clock())

    def claim_runs(self, host: str, wants: Mapping[str, int], queued: str) -> list[str]:
        """Claims without the writers' lock: each skips the rows another host's claim holds
        (``FOR UPDATE SKIP LOCKED``), so hosts claim side by side. A claim writes no journal,
        which is what the lock keeps in order."""
        self._live()
        with translated(self.location), self.conn.transaction():
            tx = PostgresTransaction(self.conn, self.now(), self.location)
            return tx.claim_queued(host, wants, queued)

    @contextmanager
    def transaction(self) -> Iterator[PostgresTransaction]:
        """A write transaction; the advisory lock serialises writers for its whole length."""
        self._live()
        with translated(self.location), self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
            tx = PostgresTransaction(self.conn, self.now(), self.location)
            yield tx
            if tx.newest_seq:
                # Delivered to listeners at the commit, never for a rollback: a wake-up for
                # consoles (`core.store.changes`); the journal stays what they read.
                self.conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, str(tx.newest_seq)])

    def close(self) -> None:
        with translated(self.location):
            self.conn.close()

    def check_integrity(self) -> None:
        """PostgreSQL checks its own pages; a store that answers is taken as whole."""
        self.rows("SELECT 1 AS ok")
