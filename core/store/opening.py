"""The store's front door: what opening a ``jarvis.db`` refuses, and the sentence it says why.

A store is a fleet's history. Opening one must never make that history worse, nor answer a
broken store with a traceback:

- A zero-byte ``jarvis.db`` is history that went missing (a restore that failed, a copy cut short
  by a full disk), not a new store: refused in every mode and never written over. A new store is
  built beside its final name and linked into place whole (`create_store`), so a file this code
  makes is never seen empty, not even by a process opening it at the same instant.
- A file that is not SQLite, whose header or pages are damaged, or that is a directory, is refused
  with a sentence. `quick_check` reads every page: a process about to write for hours (the host)
  runs it once at its start; a command that reads a few rows relies on SQLite noticing a bad page
  it touches, which `fault` turns into the same refusal.
- A store that a newer jarvis migrated (a schema step this code does not know) is refused: writing
  it with the older schema could lose what the newer one keeps. A database with tables but no
  Jarvis schema is refused too: migrating it would write Jarvis tables into someone else's data.

Faults while a store is in use — the disk full, an I/O error, the write lock still held by
another process after the busy timeout, a read-only file — are classified by `fault` into the
same `StoreError`. Callers report it as an I/O error (exit 2), never as a verdict on their input.

Reading never needs write access (`connect` with ``read_only``): an auditor who may only read the
workspace can list it. See `connect` for what a read-only directory costs a WAL database.
"""

from __future__ import annotations

import errno
import os
import secrets
import sqlite3
import stat
from pathlib import Path

from sqlite_utils import Database

from core.store.errors import StoreError
from core.store.faults import RESTORE, fault, store_fault
from core.store.schema import MIGRATIONS, migrate

__all__ = [
    "check_schema",
    "check_writable",
    "connect",
    "create_store",
    "needs_creating",
    "quick_check",
    "step_names",
]


def needs_creating(path: Path, *, create: bool) -> bool:
    """Whether there is no store at ``path`` yet and the caller may create one.

    Raises:
        StoreError: no store and ``create`` is false (``no_workspace``), a directory or other
            non-file in its place, a zero-byte file, or a path that cannot be looked at.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if create:
            return True
        raise StoreError(
            "no_workspace",
            f"There is no workspace store at {path}; nothing was created. `jarvis dispatch`, "
            "`jarvis host` and `jarvis tui` create a workspace.",
            path,
        ) from None
    except OSError as exc:
        raise StoreError(
            "store_unreadable", f"The store {path} cannot be opened: {exc.strerror or exc}.", path
        ) from None
    if not stat.S_ISREG(info.st_mode):
        what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise StoreError(
            "store_not_a_file",
            f"{path} is {what}, where the workspace's store file should be; move it aside.",
            path,
        )
    if info.st_size == 0:
        raise StoreError(
            "store_empty",
            f"The store {path} is empty (0 bytes): the workspace's history is missing. Jarvis "
            "will not write over it; restore it from a backup, or move it aside to start a "
            "new, empty store.",
            path,
        )
    return False


def create_store(path: Path) -> bool:
    """Build a new, migrated store and link it into place at ``path`` whole.

    Returns:
        True if this call created the store; False if another process created one first
        (which is then the store to use).

    Raises:
        StoreError: the new store could not be written (e.g. the disk is full).
    """
    scratch = path.with_name(f".{path.name}.new-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        conn = sqlite3.connect(str(scratch))
        try:
            db = Database(conn)
            db.execute("PRAGMA journal_mode = WAL")
            migrate(db)
        finally:
            # The last connection to close checkpoints the log into the file and removes it: the
            # file linked below holds the whole store.
            conn.close()
        try:
            os.link(scratch, path)
        except FileExistsError:
            return False
        except OSError:
            # A file system without hard links. Renaming could replace a store another process
            # linked in the meantime, so only when there still is none (a small window).
            if path.exists():
                return False
            os.replace(scratch, path)
        return True
    except sqlite3.Error as exc:
        raise fault(exc, path) from None
    except OSError as exc:
        raise StoreError(
            "disk_full" if exc.errno == errno.ENOSPC else "store_unreadable",
            f"A new store cannot be created at {path}: {exc.strerror or exc}.",
            path,
        ) from None
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{scratch}{suffix}").unlink(missing_ok=True)


def connect(
    path: Path, *, read_only: bool, busy_timeout_s: float, shared: bool = False
) -> tuple[sqlite3.Connection, bool]:
    """A connection to the existing store at ``path``, read-only when asked; ``shared``: usable
    from any thread (its user serialises the calls).

    Returns:
        The connection, and whether it is ``immutable`` (see below): such a connection never
        sees a later commit, so a reader that polls must open again to look.

    A reader of a WAL database needs its ``-shm`` file, which it creates when no other connection
    has. In a directory the reader cannot write, or on a full disk, with no writer connected (no
    ``-wal`` file), that fails; the file alone then holds every committed change, and it is opened
    ``immutable`` (no locks, no log). The cost: a writer that starts during the read and
    checkpoints within it could show the reader a torn page, which SQLite reports as damage — rare
    (a checkpoint follows a thousand pages of writes, or a writer's exit) and at worst a failed
    read, never a wrong write.
    With a writer connected, its ``-wal`` and ``-shm`` exist and a plain read-only open sees its
    latest commits.

    Raises:
        sqlite3.Error: the database cannot be opened or read (for `fault` to classify).
    """
    if not read_only:
        return sqlite3.connect(
            str(path), timeout=busy_timeout_s, check_same_thread=not shared
        ), False
    uri = path.absolute().as_uri()
    conn = sqlite3.connect(
        f"{uri}?mode=ro", uri=True, timeout=busy_timeout_s, check_same_thread=not shared
    )
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn, False
    except sqlite3.OperationalError as exc:
        conn.close()
        wal = Path(f"{path}-wal")
        has_log = wal.exists() and wal.stat().st_size > 0
        # Read-only, or no room for the index (a full disk): the file alone will do, if no
        # writer's log holds commits it lacks.
        found = store_fault(exc)
        if found is None or found.kind not in ("read_only", "cannot_open", "io_error") or has_log:
            raise
    immutable = f"{uri}?mode=ro&immutable=1"
    return (
        sqlite3.connect(immutable, uri=True, timeout=busy_timeout_s, check_same_thread=not shared),
        True,
    )


def check_writable(path: Path) -> None:
    """Refuse to open for writing a store this user cannot write, before SQLite half-opens it.

    SQLite opens a file it may not write read-only without a word, and the first write then
    fails; a WAL store in a directory the user cannot write fails even to be read. Asking first
    gives the one sentence that matters: this needs write access.

    Raises:
        StoreError: ``store_read_only``.
    """
    for target in (path, path.parent):
        if not os.access(target, os.W_OK):
            raise StoreError(
                "store_read_only",
                f"The store {path} cannot be written: {target} is read-only for this user. "
                "Reading commands (runs, show, journal) need only read access.",
                path,
            )


def step_names() -> list[str]:
    """The schema steps this code knows, in order: those pending on an empty database."""
    return [step.name for step in MIGRATIONS.pending(Database(memory=True))]


def check_schema(db: Database, path: Path, *, read_only: bool) -> int:
    """Refuse a store this code must not use; reading its schema also proves it is SQLite.

    Returns:
        How many schema steps are pending (0: up to date).

    Raises:
        StoreError: ``store_too_new``, ``store_foreign``, or ``store_outdated`` (pending schema
            steps on a read-only open).
        sqlite3.Error: the file is not a database, or its first page is damaged.
    """
    tables = {
        str(row[0])
        for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    }
    known = step_names()
    if MIGRATIONS.migrations_table in tables:
        applied = [m.name for m in MIGRATIONS.applied(db)]
    else:
        applied = []
        if {t for t in tables if not t.startswith("sqlite_")}:
            raise StoreError(
                "store_foreign",
                f"{path} is an SQLite database but not a Jarvis store (it has tables and no "
                "Jarvis schema); Jarvis will not write into it.",
                path,
            )
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise StoreError(
            "store_too_new",
            f"The store {path} was upgraded by a newer jarvis (schema step {unknown[0]} is "
            "unknown to this one); use that version or a newer one.",
            path,
        )
    pending = len(known) - len(applied)
    if read_only and pending:
        raise StoreError(
            "store_outdated",
            f"The store {path} needs a schema upgrade that a read-only open cannot make; run "
            "`jarvis host` or a writing command once as a user who can write the workspace.",
            path,
        )
    return pending


def quick_check(db: Database, path: Path) -> None:
    """Read every page of the store and refuse it if any is damaged.

    Raises:
        StoreError: ``store_corrupt``, or the fault that stopped the check.
    """
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        raise fault(exc, path) from None
    if [tuple(row) for row in rows] != [("ok",)]:
        first = str(rows[0][0]) if rows else "no answer"
        raise StoreError(
            "store_corrupt",
            f"The store {path} is damaged ({first}; {len(rows)} problem(s) found): {RESTORE}.",
            path,
        )
