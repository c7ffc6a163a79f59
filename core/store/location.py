"""Which store a workspace uses, and opening it: SQLite by default, PostgreSQL when named.

A workspace's store is its ``jarvis.db`` unless one is named, first found of:

1. ``--db URL`` on the command line;
2. ``JARVIS_DB`` in the environment;
3. ``url`` in the ``[store]`` table of the workspace's ``jarvis.toml``.

A name is a ``postgresql://`` (or ``postgres://``) URL, or the path of an SQLite file
(``sqlite:////abs/path`` or ``sqlite:///relative`` also read as one). Only the ``[store]`` table
of ``jarvis.toml`` is read here, so a command that only reads runs does not fail on a mistake
elsewhere in the file (the host validates all of it).

A URL may carry a password: `masked` (`core.store.urls`) is the form every message, log line
and ``--json`` field shows.

This is the one module that imports the backends (`open_store`), each only when a store of
its kind is opened; the backends import nothing of it.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from core.store.api import Clock, RunStore
from core.store.errors import StoreError
from core.store.urls import SCHEMES, is_postgres, masked, shown

__all__ = [
    "ENV_VAR",
    "SCHEMES",
    "configured",
    "is_postgres",
    "masked",
    "open_store",
    "shown",
    "store_location",
]

ENV_VAR = "JARVIS_DB"
_SQLITE = "sqlite:///"


def configured(root: Path) -> str | None:
    """``[store] url`` of the workspace's ``jarvis.toml``, or None.

    Raises:
        StoreError: ``store_config``: the file cannot be read as TOML, or the entry is no string.
    """
    path = root / "jarvis.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError("store_config", f"Cannot read {path}: {exc}.", path) from None
    try:
        table = tomllib.loads(text).get("store", {})
    except tomllib.TOMLDecodeError as exc:
        raise StoreError("store_config", f"{path} is not valid TOML: {exc}.", path) from None
    url = table.get("url") if isinstance(table, dict) else None
    if url is not None and (not isinstance(url, str) or not url.strip()):
        raise StoreError("store_config", f"[store] url in {path} must be a non-empty string.", path)
    return url


def store_location(root: Path, explicit: str | None = None) -> str | Path:
    """The store of the workspace at ``root``: a PostgreSQL URL, or an SQLite file's path.

    Raises:
        StoreError: ``store_config``: jarvis.toml names it wrongly.
    """
    chosen = explicit or os.environ.get(ENV_VAR) or configured(root)
    if not chosen:
        return root / "jarvis.db"
    if is_postgres(chosen):
        return chosen
    if chosen.startswith(_SQLITE):
        # As SQLAlchemy reads it: sqlite:////abs/path.db, or sqlite:///relative.db.
        chosen = chosen[len(_SQLITE) :]
    elif "://" in chosen:
        scheme = chosen.split("://", 1)[0]
        raise StoreError(
            "store_config",
            f"A store is a postgresql:// URL or an SQLite file; {scheme}:// is neither.",
            Path(chosen),
        )
    path = Path(chosen).expanduser()
    return path if path.is_absolute() else root / path


def open_store(
    location: str | Path,
    *,
    clock: Clock | None = None,
    busy_timeout_s: float = 30.0,
    migrate: bool = True,
    create: bool = True,
    read_only: bool = False,
    shared: bool = False,
) -> RunStore:
    """Open the store at ``location`` (see `store_location`) with the backend it names.

    The arguments mean what they mean to `SqliteStore`; a PostgreSQL store takes the same
    ones (its database must exist: ``create`` lets it make Jarvis's tables in an empty one).

    Raises:
        StoreError: the store cannot be opened or used (the sentence says why).
    """
    extra = {} if clock is None else {"clock": clock}
    if is_postgres(location):
        # Imported here: psycopg is an optional extra, and SQLite users never load it.
        from core.store.postgres_store import PostgresStore

        return PostgresStore(
            str(location),
            migrate=migrate,
            create=create,
            read_only=read_only,
            busy_timeout_s=busy_timeout_s,
            **extra,
        )
    from core.store.sqlite_store import SqliteStore

    return SqliteStore(
        location,
        busy_timeout_s=busy_timeout_s,
        migrate=migrate,
        create=create,
        read_only=read_only,
        shared=shared,
        **extra,
    )
