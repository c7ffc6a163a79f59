from __future__ import annotations

import pytest

from core.store.api import RunStore


@pytest.fixture
def store(any_store: RunStore) -> RunStore:
    """The engine's tests run on both backends: SQLite, then PostgreSQL (tests/backends.py)."""
    return any_store
