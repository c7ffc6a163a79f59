"""Opening a store: every broken store is refused with a code and a sentence, in every mode,
and nothing is written over it; a new store appears whole; reading needs no write access."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.errors import CODES, StoreError
from core.store.faults import fault
from core.store.sqlite_store import SqliteStore
from tests.broken_stores import BREAK, OPEN_CODE, good_store
from tests.core.store_helpers import make_run

MODES = {
    "create": {},
    "existing": {"create": False},
    "no_migrate": {"migrate": False},
    "read_only": {"read_only": True},
}


def fingerprint(path: Path) -> str:
    """The data of a store (its file and its write-ahead log), to prove an open wrote none.

    A reader of a WAL store may leave an empty log and the shared-memory index behind (SQLite
    makes them to read): no data, so an empty log counts as none, and the index is not looked at.
    """
    digest = hashlib.sha256()
    for side in (path, Path(f"{path}-wal"), Path(f"{path}-journal")):
        digest.update(side.name.encode())
        if side.is_file():
            digest.update(side.read_bytes())
        elif side.exists():
            digest.update(b"<not a file>")
    return digest.hexdigest()


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("broken", list(BREAK))
def test_a_broken_store_is_refused_with_a_sentence_and_left_as_it_was(
    tmp_path: Path, broken: str, mode: str
) -> None:
    db = tmp_path / "jarvis.db"
    BREAK[broken](db)
    before = fingerprint(db)
    with pytest.raises(StoreError) as caught:
        store = SqliteStore(db, **MODES[mode])  # type: ignore[arg-type]
        try:
            # Damage past the first page shows when it is read, as the same kind of refusal.
            store.check_integrity()
        finally:
            store.close()
    error = caught.value
    assert error.code == (OPEN_CODE[broken] or "store_corrupt")
    assert error.code in CODES and error.path == db
    assert str(db) in error.message and error.message.endswith(".")
    assert fingerprint(db) == before


def test_a_zero_byte_store_is_history_gone_missing_never_a_new_store(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    db.write_bytes(b"")
    with pytest.raises(StoreError, match="history is missing") as caught:
        SqliteStore(db)
    assert caught.value.code == "store_empty"
    assert db.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jarvis.db"]


def test_damage_past_the_first_page_is_a_fault_when_read(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    BREAK["bad_page"](db)
    store = SqliteStore(db, read_only=True)
    try:
        with pytest.raises(StoreError) as caught:
            store.list_runs()
    finally:
        store.close()
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)
    assert fault(caught.value.__cause__, db).code == "store_corrupt"
    assert caught.value.code == "store_corrupt"


def test_without_create_a_missing_store_is_not_made(tmp_path: Path) -> None:
    for kwargs in ({"create": False}, {"read_only": True}):
        with pytest.raises(StoreError) as caught:
            SqliteStore(tmp_path / "jarvis.db", **kwargs)  # type: ignore[arg-type]
        assert caught.value.code == "no_workspace"
        assert list(tmp_path.iterdir()) == []


def test_a_new_store_appears_whole_and_says_it_was_created(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    store = SqliteStore(db)
    assert store.created
    make_run(store, "r1", RunState.QUEUED)
    store.close()
    again = SqliteStore(db)
    assert not again.created and [r["run_id"] for r in again.list_runs()] == ["r1"]
    again.close()
    # The scratch file it was built in is gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jarvis.db"]


def test_many_openers_of_a_new_workspace_share_one_store(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    start = threading.Barrier(6)
    created: list[bool] = []
    errors: list[BaseException] = []

    def opener(i: int) -> None:
        try:
            start.wait(timeout=60)
            store = SqliteStore(db)
            created.append(store.created)
            make_run(store, f"r{i}", RunState.QUEUED)
            store.close()
        except BaseException as exc:  # reported below, with the others
            errors.append(exc)

    threads = [threading.Thread(target=opener, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and sorted(created) == [False] * 5 + [True]
    store = SqliteStore(db, read_only=True)
    assert len(store.list_runs()) == 6
    store.close()


def test_a_read_only_open_reads_and_never_writes(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    good_store(db, runs=3)
    before = fingerprint(db)
    store = SqliteStore(db, read_only=True)
    assert len(store.list_runs()) == 3
    with pytest.raises(StoreError) as caught:
        with store.transaction() as tx:
            tx.journal("run-000", "note", {}, "test")
    store.close()
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    assert fault(caught.value.__cause__, db).code == "store_read_only"
    assert caught.value.code == "store_read_only"
    assert fingerprint(db) == before


def test_a_read_only_open_of_an_old_store_asks_for_an_upgrade(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    good_store(db, runs=1)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0004_criteria'")
    conn.close()
    with pytest.raises(StoreError) as caught:
        SqliteStore(db, read_only=True)
    assert caught.value.code == "store_outdated"


def test_a_full_disk_is_a_fault_not_a_verdict(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    good_store(db, runs=1)
    store = SqliteStore(db)
    (pages,) = store.db.execute("PRAGMA page_count").fetchone()
    # SQLITE_FULL without a special file system: this connection may not grow the file.
    store.db.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StoreError) as caught:
        for i in range(200):
            make_run(store, f"more-{i}", RunState.QUEUED)
    store.close()
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    error = fault(caught.value.__cause__, db)
    assert error.code == "disk_full" and "full" in error.message
    assert caught.value.code == "disk_full" and caught.value.message == error.message


def test_a_lock_held_past_the_busy_timeout_is_a_fault(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    good_store(db, runs=1)
    store = SqliteStore(db, busy_timeout_s=0)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError) as caught:
            make_run(store, "blocked", RunState.QUEUED)
    finally:
        store.close()
        holder.rollback()
        holder.close()
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    assert fault(caught.value.__cause__, db).code == "store_busy"
    assert caught.value.code == "store_busy"


def test_opening_an_up_to_date_store_waits_for_no_lock(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    good_store(db, runs=1)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        # Nothing to migrate: a writer opens at once and waits only when it writes.
        store = SqliteStore(db, busy_timeout_s=0)
        assert [r["run_id"] for r in store.list_runs()] == ["run-000"]
        store.close()
    finally:
        holder.rollback()
        holder.close()


def _error(code: int, text: str) -> sqlite3.Error:
    exc = sqlite3.OperationalError(text)
    exc.sqlite_errorcode = code
    return exc


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (13, "disk_full"),  # SQLITE_FULL
        (5, "store_busy"),  # SQLITE_BUSY
        (6, "store_busy"),  # SQLITE_LOCKED
        (8, "store_read_only"),  # SQLITE_READONLY
        (1544, "store_read_only"),  # SQLITE_READONLY_DIRECTORY: the primary code decides
        (11, "store_corrupt"),  # SQLITE_CORRUPT
        (26, "store_corrupt"),  # SQLITE_NOTADB
        (14, "store_unreadable"),  # SQLITE_CANTOPEN
        (10, "store_io_error"),  # SQLITE_IOERR, with room on the disk
        (266, "store_io_error"),  # SQLITE_IOERR_READ
        (1, "store_unusable"),  # SQLITE_ERROR
    ],
)
def test_every_fault_gets_its_code_and_a_sentence(tmp_path: Path, code: int, expected: str) -> None:
    error = fault(_error(code, "what SQLite said"), tmp_path / "jarvis.db")
    assert error.code == expected and error.code in CODES
    assert str(tmp_path / "jarvis.db") in error.message and error.message.endswith(".")


def test_an_io_error_on_a_full_disk_is_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Full:
        f_bavail = 0
        f_frsize = 4096

    monkeypatch.setattr("core.store.opening.os.statvfs", lambda _path: Full())
    assert fault(_error(10, "disk I/O error"), tmp_path / "jarvis.db").code == "disk_full"
