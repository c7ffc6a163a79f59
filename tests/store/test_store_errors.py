"""Each backend speaks the store's own errors: whatever its driver raises while a store is in
use leaves `core/store/` as a `StoreError` (a `QueryError` when it is no fault of the store),
the driver's exception kept as its cause, so the faults are still told from the bugs."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.api import RunStore
from core.store.errors import QueryError, StoreError
from core.store.faults import store_fault
from tests.backends import another_connection
from tests.core.store_helpers import make_run


def _driver_errors() -> tuple[type[BaseException], ...]:
    import psycopg

    return (sqlite3.Error, psycopg.Error)


def test_a_statement_the_database_refuses_is_a_query_error_not_the_drivers(
    any_store: RunStore,
) -> None:
    make_run(any_store, "r1", RunState.QUEUED)
    with pytest.raises(StoreError) as caught, any_store.transaction() as tx:
        # The journal is append-only: the database itself refuses the edit.
        tx.execute("UPDATE journal SET kind = ? WHERE run_id = ?", ["edited", "r1"])
    assert isinstance(caught.value, QueryError)
    assert not isinstance(caught.value, _driver_errors())
    assert caught.value.code == "store_unusable"
    assert "append-only" in caught.value.message
    assert isinstance(caught.value.__cause__, _driver_errors())
    assert store_fault(caught.value) is None  # a bug's, never waited out
    assert any_store.get_run("r1") is not None  # the store goes on being usable


def test_a_read_the_database_refuses_is_a_query_error(any_store: RunStore) -> None:
    with pytest.raises(QueryError) as caught:
        any_store.rows("SELECT * FROM no_such_table")
    assert "no_such_table" in caught.value.message
    assert any_store.last_seq() == 0


def test_a_write_lock_held_past_the_busy_timeout_is_store_busy_a_fault(
    any_store: RunStore,
) -> None:
    other = another_connection(any_store)
    location = any_store.path if any_store.path is not None else str(any_store.url)  # type: ignore[attr-defined]
    from core.store.location import open_store

    impatient = open_store(location, busy_timeout_s=0.05, migrate=False)
    try:
        with other.transaction() as tx:
            tx.journal("r1", "note", {}, "holder")
            with pytest.raises(StoreError) as caught, impatient.transaction():
                pass
        assert caught.value.code == "store_busy"
        assert not isinstance(caught.value, (QueryError, *_driver_errors()))
        found = store_fault(caught.value)
        assert found is not None and found.kind == "locked"
        with impatient.transaction() as tx:  # the lock let go: the same connection writes
            tx.journal("r1", "note", {}, "impatient")
        assert impatient.last_seq() == 2
    finally:
        impatient.close()
        other.close()


def test_nothing_outside_the_store_catches_a_drivers_error() -> None:
    # lint-imports keeps the drivers out (pyproject.toml); this keeps out their errors reached
    # another way, by name or through the classes `database_errors` hands out.
    root = Path(__file__).resolve().parents[2]
    named = re.compile(r"\b(sqlite3|psycopg)\.\w*(Error|Exception)\b|\bdatabase_errors\b")
    found = [
        f"{path.relative_to(root)}:{number}"
        for package in ("core", "jarvis_cli", "jarvis_sim", "jarvis_tui")
        for path in sorted((root / package).rglob("*.py"))
        if path.parent != root / "core" / "store"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if named.search(line)
    ]
    assert found == []
