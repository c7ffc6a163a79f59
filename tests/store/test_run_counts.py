"""Runs per state (``run_counts``) and the fleet's reported usage (``usage_totals``), kept by
the store as they change, equal to a count (a sum) of every run: under writers racing on
separate connections of both backends, through every kind of change (created, moved by the host
and by operators, retried, cancelled, deleted by hand), and for runs written before the counts
existed (the migration counts them once)."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlite_utils import Database

from core import operator_actions
from core.ipc.payloads import Usage
from core.lifecycle import Action, IllegalTransition, RunState
from core.moves import host_move
from core.store.api import RunStore
from core.store.schema import MIGRATIONS
from core.store.sqlite_store import SqliteStore
from tests.backends import another_connection
from tests.core.store_helpers import make_run

WRITERS = 4
RUNS_EACH = 25


def race(store: RunStore, work: Callable[[RunStore, int], None]) -> None:
    """``work(connection, n)`` on WRITERS threads at once, each with a connection of its own;
    fails with what any of them raised."""
    start = threading.Barrier(WRITERS)
    failures: list[BaseException] = []

    def one(n: int) -> None:
        own = another_connection(store)
        try:
            start.wait()
            work(own, n)
        except BaseException as exc:
            failures.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures


def test_the_counts_follow_every_kind_of_change(any_store: RunStore) -> None:
    assert any_store.state_counts() == {}
    make_run(any_store, "r1", RunState.QUEUED)
    make_run(any_store, "r2", RunState.FAILED)
    make_run(any_store, "r3", RunState.REVIEW_REQUESTED)
    assert any_store.state_counts() == {"queued": 1, "failed": 1, "review_requested": 1}
    assert operator_actions.retry(any_store, "r2", "ops").ok  # failed → queued
    assert operator_actions.cancel(any_store, "r1", "ops", "not needed").ok  # queued → failed
    host_move(any_store, "r3", Action.REQUEST_MERGE)  # a sub-stage: the state stays
    assert any_store.state_counts() == {"queued": 1, "failed": 1, "review_requested": 1}
    host_move(any_store, "r3", Action.MERGE)
    with any_store.transaction() as tx:  # by hand, as an operator's repair might
        tx.execute("DELETE FROM runs WHERE run_id = 'r1'", [])
    assert any_store.state_counts() == {"queued": 1, "done": 1}
    assert any_store.state_counts() == any_store.recount_states()


def test_writers_racing_on_many_connections_keep_the_counts_exact(any_store: RunStore) -> None:
    def write(store: RunStore, n: int) -> None:
        rng = random.Random(n)
        for i in range(RUNS_EACH):
            run_id = f"w{n}-{i}"
            make_run(store, run_id, rng.choice([RunState.QUEUED, RunState.RUNNING,
                                                RunState.FAILED]))  # fmt: skip
            move = rng.choice(["retry", "cancel", "start", "nothing"])
            if move == "retry":
                operator_actions.retry(store, run_id, "ops")
            elif move == "cancel":
                operator_actions.cancel(store, run_id, "ops", "racing")
            elif move == "start":
                try:
                    host_move(store, run_id, Action.START)
                except IllegalTransition:  # not queued: refused, nothing written
                    pass

    race(any_store, write)
    counts = any_store.state_counts()
    assert sum(counts.values()) == WRITERS * RUNS_EACH
    assert counts == any_store.recount_states()


def test_runs_written_before_the_counts_are_counted_by_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "jarvis.db"
    old = Database(path)
    MIGRATIONS.apply(old, stop_before="0019_run_counts")
    old.close()
    store = SqliteStore(path)
    try:
        for run_id, state in (("a", RunState.QUEUED), ("b", RunState.QUEUED),
                              ("c", RunState.DONE)):  # fmt: skip
            make_run(store, run_id, state)
        # As a store from before would hold them: the table gone, then migrated again.
        with store.transaction() as tx:
            tx.execute("DROP TABLE run_counts", [])
            tx.execute("DELETE FROM _sqlite_migrations WHERE name = '0019_run_counts'", [])
            for trigger in ("insert", "update", "delete"):
                tx.execute(f"DROP TRIGGER runs_counted_{trigger}", [])
            tx.execute("DROP INDEX runs_newest", [])
    finally:
        store.close()
    again = SqliteStore(path)
    try:
        assert again.state_counts() == {"queued": 2, "done": 1} == again.recount_states()
    finally:
        again.close()


@pytest.mark.parametrize("state", list(RunState))
def test_every_state_is_counted(any_store: RunStore, state: RunState) -> None:
    make_run(any_store, "r1", state)
    assert any_store.state_counts() == {state.value: 1}


def test_the_fleets_usage_is_kept_as_figures_grow_race_and_go(any_store: RunStore) -> None:
    """What every run's agents reported, summed as reports arrive (the kept totals the
    console's header reads), equal to a sum over every attempt's figures."""
    for n in range(WRITERS):
        make_run(any_store, f"u{n}", RunState.RUNNING)

    def report(store: RunStore, n: int) -> None:
        rng = random.Random(n)
        for seq in range(RUNS_EACH):
            attempt = 1 + seq % 2
            cost = rng.randrange(10_000) / 1000
            figures = Usage(tokens_in=rng.randrange(10_000), tokens_out=rng.randrange(500),
                            cost_usd=cost, cost_computed=seq % 3 == 0)  # fmt: skip
            with store.transaction() as tx:  # cumulative figures, out of order: some kept
                tx.record_usage(f"u{n}", attempt, seq, figures)

    race(any_store, report)
    kept, summed = any_store.workspace_usage(), any_store.workspace_usage_summed()
    assert kept["tokens_in"] > 0 and kept["cost_computed"] is True
    # Tokens are whole numbers, exact in a double; a cost summed in another order may differ
    # in its last bits only.
    assert kept == {**summed, "cost_usd": pytest.approx(summed["cost_usd"], abs=1e-6)}
    with any_store.transaction() as tx:  # by hand, as an operator's repair might
        tx.execute("DELETE FROM run_usage WHERE run_id = 'u0'", [])
    after = any_store.workspace_usage_summed()
    close = pytest.approx(after["cost_usd"], abs=1e-6)
    assert any_store.workspace_usage() == {**after, "cost_usd": close}
