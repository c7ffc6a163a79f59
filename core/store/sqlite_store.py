"""The run store on SQLite (sqlite-utils), in WAL mode.

Concurrency model: every write happens inside `SqliteStore.transaction`, which opens with
``BEGIN IMMEDIATE`` — the write lock is taken before anything is read, so a read-check-write
sequence (is this run still failed? then retry it) cannot interleave with another writer's, in
this process or any other. Waiting writers queue on the busy timeout. Readers never block
writers (WAL).

Durability: ``synchronous=NORMAL`` in WAL mode keeps every committed transaction across a crash
or ``kill -9`` of the process (the property the engine needs); only an OS crash or power loss
can drop the last few commits, and even then never corrupts the database.

Every change to a run goes through `Transaction.create_run` or `Transaction.change_run`, which
write the journal row in the same transaction: there is no way to change a run without its
journal entry.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from core.store.api import Clock, Row, RunStore, RunTransaction, iso, utc_now
from core.store.faults import fault
from core.store.opening import (
    check_schema,
    check_writable,
    connect,
    create_store,
    needs_creating,
    quick_check,
)
from core.store.schema import migrate
from core.store.statements import bound

__all__ = ["SqliteStore", "Transaction"]


class Transaction(RunTransaction):
    """The write operations of one store transaction. Obtain one from `SqliteStore.transaction`.

    Every call speaks the store's errors: sqlite3's become a `StoreError` (`fault`) here, as
    they leave the statement that raised them.
    """

    def __init__(self, db: Database, now: str, path: Path) -> None:
        self._db = db
        # The ingest hot path uses the connection directly: sqlite-utils' wrappers parse each
        # statement to classify it, which costs more than the statement on a small write.
        self._conn = db.conn
        self._path = path
        self.now = now
        """The transaction's timestamp: every row it writes carries the same time."""

    def run_brief(self, run_id: str) -> Row | None:
        """A run's lane, state and attempt only, read on the connection itself: the ingest hot
        path needs no more, and no dict of every column."""
        try:
            found = self._conn.execute(
                "SELECT lane, state, retry_count FROM runs WHERE run_id = ?", bound([run_id])
            ).fetchone()
        except sqlite3.Error as exc:
            raise fault(exc, self._path) from exc
        if found is None:
            return None
        return {"run_id": run_id, "lane": found[0], "state": found[1], "retry_count": found[2]}

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested step: rolled back alone if it raises, the outer transaction going on."""
        with translated(self._path), self._db.atomic():
            yield

    def execute(self, sql: str, params: list[Any]) -> int:
        """A write inside this transaction; returns the number of rows changed."""
        try:
            return int(self._conn.execute(sql, bound(params)).rowcount)
        except sqlite3.Error as exc:
            raise fault(exc, self._path) from exc

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            self._conn.executemany(sql, [bound(row) for row in rows])
        except sqlite3.Error as exc:
            raise fault(exc, self._path) from exc

    def rows(self, sql: str, params: list[Any] | None = None) -> list[Row]:
        # On the connection itself: receipts and progress are read here on the ingest path.
        try:
            cursor = self._conn.execute(sql, bound(params or []))
            names = [column[0] for column in cursor.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        except sqlite3.Error as exc:
            raise fault(exc, self._path) from exc

    def journal(self, run_id: str, kind: str, payload: Mapping[str, Any], actor: str) -> int:
        try:
            cursor = self._conn.execute(
                "INSERT INTO journal (run_id, kind, payload, actor, at) VALUES (?, ?, ?, ?, ?)",
                [run_id, kind, self.journal_text(payload), actor, self.now],
            )
        except sqlite3.Error as exc:
            raise fault(exc, self._path) from exc
        return int(cursor.lastrowid or 0)

    def journal_many(self, entries: Sequence[tuple[str, str, Mapping[str, Any], str]]) -> None:
        self.execute_many(
            "INSERT INTO journal (run_id, kind, payload, actor, at) VALUES (?, ?, ?, ?, ?)",
            [[run_id, kind, self.journal_text(payload), actor, self.now]
             for run_id, kind, payload, actor in entries],
        )  # fmt: skip


@contextmanager
def translated(path: Path) -> Iterator[None]:
    """sqlite3's errors raised inside as the store's (`fault`): for the statements a backend
    runs around its callers' (BEGIN, COMMIT, SAVEPOINT) and for any caller of the connection."""
    try:
        yield
    except sqlite3.Error as exc:
        raise fault(exc, path) from exc


class SqliteStore(RunStore):
    """One connection to one workspace's ``jarvis.db``. Use one store per thread."""

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock = utc_now,
        busy_timeout_s: float = 30.0,
        migrate: bool = True,
        create: bool = True,
        read_only: bool = False,
        shared: bool = False,
    ) -> None:
        """Open the store, through the checks of `core.store.opening`.

        Args:
            migrate: bring the schema up to date first. Writers do; a reader that polls (the
                console) passes False, so that reading never takes the write lock.
            create: make a new store when there is none (else ``no_workspace``).
            read_only: open for reading only, needing no write access to the workspace; never
                creates or migrates.
            shared: one connection used from several threads, one call at a time (the
                console's long-lived reader serialises its calls).

        Raises:
            StoreError: the store is missing (without ``create``), empty, damaged, not a file,
                from a newer jarvis, not a Jarvis store, or cannot be read; or a fault (the disk
                full, the lock held past the busy timeout) while creating or migrating it.
        """
        self.path: Path = Path(path)
        self.location = str(self.path)
        self._clock = clock
        self.read_only = read_only
        self.created = False
        """Whether this open made a new store (commands that may create one say so)."""
        self.immutable = False
        """Whether this read-only open sees the file as it was (see `connect`): a reader that
        polls opens again to see later commits."""
        if needs_creating(self.path, create=create and not read_only):
            self.created = create_store(self.path)
        elif not read_only:
            check_writable(self.path)
        try:
            conn, self.immutable = connect(
                self.path, read_only=read_only, busy_timeout_s=busy_timeout_s, shared=shared
            )
        except sqlite3.Error as exc:
            raise fault(exc, self.path) from None
        self.db = Database(conn)
        try:
            # Checked before anything is set: switching a database to WAL writes its header.
            pending = check_schema(self.db, self.path, read_only=read_only)
            if not read_only:
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = NORMAL")
            self.db.execute("PRAGMA foreign_keys = ON")
            if migrate and pending and not read_only:
                self._migrate()
        except BaseException as exc:
            conn.close()
            if isinstance(exc, sqlite3.Error):
                raise fault(exc, self.path) from None
            raise

    def check_integrity(self) -> None:
        """Read every page and refuse a damaged store (`quick_check`); seconds on a large one.

        Raises:
            StoreError: ``store_corrupt``, or the fault that stopped the check.
        """
        quick_check(self.db, self.path)

    def _migrate(self) -> None:
        # Two processes opening a new workspace at once would both try to create the schema;
        # holding the write lock across the whole migration makes the second wait and then find
        # nothing pending. (Each step's own transaction becomes a savepoint inside this one.)
        with self._immediate():
            migrate(self.db)

    @contextmanager
    def _immediate(self) -> Iterator[None]:
        with translated(self.path):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.db.execute("COMMIT")
            except BaseException:
                # Also when COMMIT itself fails (a full disk): SQLite may or may not have rolled
                # back already, and a connection left inside a transaction would refuse every
                # later BEGIN. rollback() does nothing when there is no transaction.
                self.db.conn.rollback()
                raise

    def now(self) -> str:
        return iso(self._clock())

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction holding the database's write lock from its first statement."""
        with self._immediate():
            yield Transaction(self.db, self.now(), self.path)

    def close(self) -> None:
        with translated(self.path):
            self.db.close()

    def rows(self, sql: str, params: list[Any] | None = None) -> list[Row]:
        """A read-only query, for callers that need a view the store does not name yet."""
        try:
            return list(self.db.query(sql, bound(params or [])))
        except sqlite3.Error as exc:
            raise fault(exc, self.path) from exc
