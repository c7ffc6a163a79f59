"""A reader wakes when a PostgreSQL writer commits (LISTEN/NOTIFY), with the newest sequence
number; a rollback or a write that journals nothing announces nothing; SQLite has nothing to
listen to."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.lifecycle import Action, RunState
from core.moves import host_move
from core.store.changes import ChangeListener, PostgresListener, listener_for
from core.store.location import open_store
from tests.core.store_helpers import make_run
from tests.processes import HANG_GUARD_S


def test_a_commit_wakes_a_listener_with_its_newest_sequence_number(pg_url: str) -> None:
    store = open_store(pg_url)
    listener = listener_for(pg_url)
    assert isinstance(listener, PostgresListener) and listener.hears_changes
    assert listener.wait(0.01) is None  # connected and listening; nothing yet
    make_run(store, "r1", RunState.QUEUED)
    assert listener.wait(HANG_GUARD_S) == store.last_seq()
    # A rollback is never announced: the next wake-up is the next commit's.
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.journal("r1", "note", {}, "test")
        raise RuntimeError("changed my mind")
    store.claim_runs("h1", {"jarvis-worker-1": 1}, "queued")  # journals nothing: silent too
    host_move(store, "r1", Action.START)
    assert listener.wait(HANG_GUARD_S) == store.last_seq()
    listener.close()
    assert listener.wait(0.01) is None and listener._conn is None
    store.close()


def test_a_listener_comes_back_after_the_server_drops_it(pg_url: str) -> None:
    import psycopg

    store = open_store(pg_url)
    listener = PostgresListener(pg_url)
    assert listener.wait(0.01) is None
    assert listener._conn is not None
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [listener._conn.info.backend_pid])
    assert listener.wait(0.5) is None  # the drop is met, not raised
    assert listener.wait(0.01) is None  # listening again
    make_run(store, "r1", RunState.QUEUED)
    assert listener.wait(HANG_GUARD_S) == store.last_seq()
    listener.close()
    store.close()


def test_notifications_that_arrive_together_wake_with_the_newest(pg_url: str) -> None:
    """Two commits announced in one read of the connection: the wake-up carries the newer
    number. Reporting the first alone lost the second when the first was already read."""
    import psycopg

    from core.store.postgres_store import CHANNEL

    listener = PostgresListener(pg_url)
    assert listener.wait(0.01) is None
    with psycopg.connect(pg_url) as writer, writer.transaction():  # delivered at one commit
        writer.execute("SELECT pg_notify(%s, '7'), pg_notify(%s, '8')", [CHANNEL, CHANNEL])
    assert listener.wait(HANG_GUARD_S) == 8
    listener.close()


def test_a_listener_counts_each_listen_that_took_effect(pg_url: str) -> None:
    """A reader reads once after each (re)LISTEN: nothing committed before it was announced."""
    import psycopg

    listener = PostgresListener(pg_url)
    assert listener.listens == 0
    assert listener.wait(0.01) is None
    assert listener.listens == 1
    assert listener.wait(0.01) is None
    assert listener.listens == 1  # the same connection: nothing was missed
    assert listener._conn is not None
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [listener._conn.info.backend_pid])
    assert listener.wait(0.5) is None  # the drop is met
    assert listener.wait(0.01) is None  # listening again: whatever came meanwhile went unheard
    assert listener.listens == 2
    listener.close()


def test_sqlite_has_nothing_to_listen_to(tmp_path: Path) -> None:
    listener = listener_for(tmp_path / "jarvis.db")
    assert type(listener) is ChangeListener and not listener.hears_changes
    assert listener.wait(0.01) is None
    listener.close()
    assert listener.wait(HANG_GUARD_S) is None  # closed: returns at once
