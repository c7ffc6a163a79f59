from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store.sqlite_store import SqliteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "jarvis.db")
    yield opened
    opened.close()
