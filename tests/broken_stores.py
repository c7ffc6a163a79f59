"""Stores broken in each way a real one breaks, for the tests of opening and using them.

Each maker takes the path of a ``jarvis.db`` whose workspace directory exists and breaks it (or
puts something broken in its place). `OPEN_CODE` is the `StoreError` code opening it gives;
`READ_CODE` what reading its runs gives when opening cannot tell (damage past the first page).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run

PAGE = 4096
RUNS = 40


def good_store(db: Path, runs: int = RUNS) -> None:
    """A store with ``runs`` queued runs: dozens of pages, all checkpointed into the file."""
    store = SqliteStore(db)
    try:
        for i in range(runs):
            make_run(store, f"run-{i:03d}", RunState.QUEUED)
    finally:
        store.close()  # the last connection checkpoints the log into the file and removes it
    assert not Path(f"{db}-wal").exists()


def _garbage(db: Path) -> None:
    db.write_bytes(bytes((i * 37 + 11) % 256 for i in range(8 * PAGE)))


def _truncated(db: Path) -> None:
    good_store(db)
    size = db.stat().st_size
    with db.open("r+b") as handle:
        handle.truncate(size // 2)


def _zeroed_header(db: Path) -> None:
    good_store(db)
    with db.open("r+b") as handle:
        handle.write(bytes(100))


def _bad_page(db: Path) -> None:
    """The root pages of the runs and journal tables, in the middle of the file, overwritten."""
    good_store(db)
    conn = sqlite3.connect(db)
    roots = [
        root
        for (root,) in conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name IN ('runs', 'journal')"
        )
    ]
    pages = db.stat().st_size // PAGE
    conn.close()
    assert len(roots) == 2 and all(1 < root < pages for root in roots)
    with db.open("r+b") as handle:
        for root in roots:
            handle.seek((root - 1) * PAGE)
            handle.write(b"\xa5" * PAGE)


def _too_new(db: Path) -> None:
    good_store(db)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
            "VALUES ('jarvis', '0999_from_the_future', '2030-01-01')"
        )
    conn.close()


def _directory(db: Path) -> None:
    db.mkdir()


def _zero_bytes(db: Path) -> None:
    db.write_bytes(b"")


def _foreign(db: Path) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('not a jarvis store')")
    conn.close()


BREAK: dict[str, Callable[[Path], None]] = {
    "garbage": _garbage,
    "truncated": _truncated,
    "zeroed_header": _zeroed_header,
    "bad_page": _bad_page,
    "too_new": _too_new,
    "directory": _directory,
    "zero_bytes": _zero_bytes,
    "foreign": _foreign,
}

#: What opening each broken store says; None: opening cannot tell without reading every page.
OPEN_CODE: dict[str, str | None] = {
    "garbage": "store_corrupt",
    "truncated": "store_corrupt",
    "zeroed_header": "store_corrupt",
    "bad_page": None,
    "too_new": "store_too_new",
    "directory": "store_not_a_file",
    "zero_bytes": "store_empty",
    "foreign": "store_foreign",
}
