"""The PostgreSQL backend: the store's interface (`core.store.api`) over psycopg 3.

Every named read and write is the same statement as in SQLite, written portably; this module
provides what differs: the connection, ``?`` placeholders given as psycopg's ``%s``, numbers
PostgreSQL sums into ``numeric`` handed back as ints and floats, the journal's sequence number
from ``RETURNING``, steers ordered by their identity column, and writers serialised for a whole
transaction by an advisory lock (what SQLite's ``BEGIN IMMEDIATE`` gives the SQLite store, and
what makes two operators' compare-and-sets come out one effect and one refusal).

Not yet chosen by ``--db``, ``JARVIS_DB`` or ``[store] url``: the host, the CLI and the console
open SQLite. psycopg is the ``postgres`` extra, imported only when this module is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

import psycopg
from psycopg.rows import dict_row

from core.store.api import RunStore, RunTransaction
from core.store.postgres_schema import MIGRATIONS
from core.store.sqlite_store import (
    STAGE_COLUMNS,
    VERSIONED_KINDS,
    Row,
    StaleVersion,
    iso,
    utc_now,
)

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
    """``rows``/``execute`` over one psycopg connection."""

    conn: psycopg.Connection[dict[str, Any]]

    def rows(self, sql: str, params: list[Any] | None = None) -> list[Row]:
        with self.conn.cursor() as cursor:
            cursor.execute(_sql(sql), params or [])
            return _rows(cursor)

    def execute(self, sql: str, params: list[Any]) -> int:
        with self.conn.cursor() as cursor:
            cursor.execute(_sql(sql), params)
            return int(cursor.rowcount)


class PostgresTransaction(_Connected, RunTransaction):
    """One unit of work on the PostgreSQL store; obtain one from `PostgresStore.transaction`."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]], now: str) -> None:
        self.conn = conn
        self.now = now

    def get_run(self, run_id: str) -> Row | None:
        found = self.rows("SELECT * FROM runs WHERE run_id = ?", [run_id])
        return found[0] if found else None

    def run_brief(self, run_id: str) -> Row | None:
        found = self.rows(
            "SELECT run_id, lane, state, retry_count FROM runs WHERE run_id = ?", [run_id]
        )
        return found[0] if found else None

    def create_run(
        self, row: Mapping[str, Any], *, actor: str, note: Mapping[str, Any] | None = None
    ) -> Row:
        record = dict(row)
        record.update(version=1, created_at=self.now, updated_at=self.now)
        columns = ", ".join(record)
        marks = ", ".join("?" for _ in record)
        self.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", list(record.values()))
        self.journal(record["run_id"], "created", {"state": record["state"], **(note or {})}, actor)
        created = self.get_run(record["run_id"])
        assert created is not None
        return created

    def change_run(
        self,
        run_id: str,
        *,
        expected_version: int,
        changes: Mapping[str, Any],
        kind: str,
        payload: Mapping[str, Any],
        actor: str,
    ) -> Row:
        values = dict(changes)
        values["updated_at"] = self.now
        bump = kind in VERSIONED_KINDS
        assert bump or not STAGE_COLUMNS & set(values), "a stage change bumps the version"
        assignments = ", ".join(f"{column} = ?" for column in values)
        if bump:
            assignments += ", version = version + 1"
        changed = self.execute(
            f"UPDATE runs SET {assignments} WHERE run_id = ? AND version = ?",
            [*values.values(), run_id, expected_version],
        )
        if changed != 1:
            raise StaleVersion(run_id, expected_version, self.get_run(run_id))
        self.journal(run_id, kind, payload, actor)
        current = self.get_run(run_id)
        assert current is not None
        return current

    def touch_run(
        self,
        run_id: str,
        *,
        changes: Mapping[str, Any],
        kind: str,
        payload: Mapping[str, Any],
        actor: str,
    ) -> None:
        assert kind not in VERSIONED_KINDS, "state changes go through change_run"
        values = dict(changes)
        assert not STAGE_COLUMNS & set(values), "a stage change bumps the version"
        values["updated_at"] = self.now
        assignments = ", ".join(f"{column} = ?" for column in values)
        self.execute(f"UPDATE runs SET {assignments} WHERE run_id = ?", [*values.values(), run_id])
        self.journal(run_id, kind, payload, actor)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    def journal(self, run_id: str, kind: str, payload: Mapping[str, Any], actor: str) -> int:
        (row,) = self.rows(
            "INSERT INTO journal (run_id, kind, payload, actor, at) VALUES (?, ?, ?, ?, ?) "
            "RETURNING seq",
            [run_id, kind, json.dumps(payload, sort_keys=True), actor, self.now],
        )
        return int(row["seq"])


class PostgresStore(_Connected, RunStore):
    """One connection to a workspace's PostgreSQL database (a ``postgresql://`` URL)."""

    def __init__(
        self, url: str, *, clock: Callable[[], datetime] = utc_now, migrate: bool = True
    ) -> None:
        self.url = url
        self._clock = clock
        # Autocommit: every read outside a transaction sees the latest commit, as a SQLite
        # reader does; writes go in explicit transactions.
        self.conn = psycopg.connect(url, autocommit=True, row_factory=dict_row)
        if migrate:
            self._migrate()

    def _migrate(self) -> None:
        with self.conn.transaction():
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

    @contextmanager
    def transaction(self) -> Iterator[PostgresTransaction]:
        """A write transaction; the advisory lock serialises writers for its whole length."""
        with self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
            yield PostgresTransaction(self.conn, self.now())

    def close(self) -> None:
        self.conn.close()

    def check_integrity(self) -> None:
        """PostgreSQL checks its own pages; a store that answers is taken as whole."""
        self.rows("SELECT 1 AS ok")

    def steers_to_deliver(self, running: str) -> list[dict[str, Any]]:
        # SQLite orders steers of one millisecond by rowid; here the identity column does.
        return self.rows(
            "SELECT s.steer_id, s.run_id, s.message, s.operator, r.lane FROM steering_events s "
            "JOIN runs r ON r.run_id = s.run_id "
            "WHERE s.status = 'pending' AND r.state = ? AND NOT EXISTS ("
            "  SELECT 1 FROM steering_events d "
            "  WHERE d.run_id = s.run_id AND d.status = 'delivered')"
            " ORDER BY s.created_at, s.id",
            [running],
        )
