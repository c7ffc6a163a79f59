"""`store_fault` tells the store's faults from the data's, from real SQLite errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.store.faults import store_fault


def _raised(conn: sqlite3.Connection, sql: str, params: list[object] | None = None) -> Exception:
    with pytest.raises(sqlite3.Error) as caught:
        conn.execute(sql, params or [])
    return caught.value


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    made = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    made.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)")
    return made


def test_a_full_store_is_a_store_fault(conn: sqlite3.Connection) -> None:
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    exc = _raised(conn, "INSERT INTO t (v) VALUES (?)", ["x" * 100_000])
    found = store_fault(exc)
    assert found is not None and found.kind == "full", exc


def test_a_read_only_store_is_a_store_fault(tmp_path: Path, conn: sqlite3.Connection) -> None:
    conn.close()
    reader = sqlite3.connect(f"file:{tmp_path / 'x.db'}?mode=ro", uri=True)
    found = store_fault(_raised(reader, "INSERT INTO t (v) VALUES ('a')"))
    assert found is not None and found.kind == "read_only"


def test_a_store_locked_by_another_writer_is_a_store_fault(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    conn.execute("BEGIN IMMEDIATE")
    other = sqlite3.connect(tmp_path / "x.db", timeout=0, isolation_level=None)
    found = store_fault(_raised(other, "BEGIN IMMEDIATE"))
    assert found is not None and found.kind == "locked"


def test_faults_of_the_data_or_the_code_are_not_store_faults(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO t (v) VALUES ('a')")
    assert store_fault(_raised(conn, "INSERT INTO t (v) VALUES ('a')")) is None  # constraint
    assert store_fault(_raised(conn, "SELECT * FROM nowhere")) is None  # a bug of ours
    with pytest.raises(OverflowError) as too_big:
        conn.execute("INSERT INTO t (id) VALUES (?)", [2**70])
    assert store_fault(too_big.value) is None


def test_a_fault_hidden_behind_a_failed_clean_up_is_still_found() -> None:
    full = sqlite3.OperationalError("database or disk is full")
    try:
        try:
            raise full
        except sqlite3.OperationalError:
            raise sqlite3.OperationalError("no such savepoint: sp1") from None
    except sqlite3.OperationalError as cleanup:
        cleanup.__context__ = full
        found = store_fault(cleanup)
    assert found is not None and found.kind == "full"
