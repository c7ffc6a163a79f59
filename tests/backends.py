"""Both store backends for one test: `any_store` is a fresh SQLite store, then a fresh
PostgreSQL database on the test suite's real server, each on a clock the test moves (`clock`).
A plugin of the top-level conftest, so every test directory can ask for them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.store.api import RunStore


class StepClock:
    """A clock that stands still until the test moves it (``advance``)."""

    def __init__(self) -> None:
        self.at = datetime(2026, 11, 26, 3, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> StepClock:
    return StepClock()


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(
    request: pytest.FixtureRequest, tmp_path: Path, clock: StepClock
) -> Iterator[RunStore]:
    store: RunStore
    if request.param == "sqlite":
        from core.store.sqlite_store import SqliteStore

        store = SqliteStore(tmp_path / "jarvis.db", clock=clock)
    else:
        from core.store.postgres_store import PostgresStore

        databases: Callable[[], str] = request.getfixturevalue("pg_databases")
        store = PostgresStore(databases(), clock=clock)
    yield store
    store.close()


def another_connection(store: RunStore, clock: StepClock | None = None) -> RunStore:
    """A second connection to the same store (another host's, another operator's)."""
    from core.store.location import open_store

    location = store.path if store.path is not None else str(store.url)
    return open_store(location, clock=clock)
