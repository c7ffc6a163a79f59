"""Fixtures for tests of the real host: a workspace, its store and a reader of its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import connect


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def store(ws: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(ws / "jarvis.db")
    yield opened
    opened.close()


@pytest.fixture
def conn(store: SqliteStore) -> Iterator[sqlite3.Connection]:
    """The test's own reader (the store fixture has created the database by now)."""
    reader = connect(store.path.parent)
    yield reader
    reader.close()
