"""Fixtures for tests of the real host: a workspace, its store and a reader of its own."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
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


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 6 MiB tmpfs of the test's own, unmounted afterwards."""
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    where = tmp_path / "small"
    where.mkdir()
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=6m,mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)
