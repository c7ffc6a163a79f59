"""The PostgreSQL backend against a real server, beside the SQLite one: the same history made
through the engine's own calls reads back the same through every view, and PostgreSQL keeps
the store's promises (compare-and-set, an append-only journal, one effect of two racing
writers)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.host.steering import deliver_pending, expire_steers
from core.ipc.layout import IpcLayout
from core.ipc.payloads import Usage
from core.lifecycle import RunState
from core.operator_actions import cancel, retry, steer
from core.run_views import run_detail, run_journal, table_rows
from core.store.errors import QueryError
from core.store.postgres_store import PostgresStore
from core.store.runs import StaleVersion
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run

Clock = Callable[[], datetime]


class Ticking:
    """A clock both backends share: each reading a millisecond after the last."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Back to the start (opening a store may read the clock: its migrations' record)."""
        self.at = datetime(2026, 11, 25, 3, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.at += timedelta(milliseconds=1)
        return self.at


def history(store: Any, layout: IpcLayout) -> None:
    """One fleet's worth of moves, through the engine's calls (never SQL)."""
    make_run(store, "done-1", RunState.DONE)
    make_run(store, "failed-1", RunState.FAILED)
    make_run(store, "running-1", RunState.RUNNING)
    make_run(store, "queued-1", RunState.QUEUED)
    assert retry(store, "failed-1", "op").ok
    assert steer(store, "running-1", "op", "focus on the failing test").ok
    assert steer(store, "running-1", "op", "then the changelog").ok
    deliver_pending(store, layout)
    with store.transaction() as tx:
        tx.record_usage("running-1", 1, 3, Usage(tokens_in=100, tokens_out=20, cost_usd=0.25))
        tx.record_usage("running-1", 1, 2, Usage(tokens_in=50, tokens_out=10, cost_usd=0.1))
        assert tx.add_progress_event("running-1", 1, 0, "a-0.json", timestamp="t", at_utc="1",
                                     phase="editing", summary="first", tool_used=None)  # fmt: skip
        assert not tx.add_progress_event("running-1", 1, 0, "a-0.json", timestamp="t",
                                         at_utc="1", phase="editing", summary="again",
                                         tool_used=None)  # fmt: skip
        tx.add_gate_result("done-1", 1, "parseable", True, "ok")
        tx.add_gate_result("done-1", 1, "commit_on_branch", False, "not checked", "not_checked")
        tx.add_failure("failed-1", 1, error_class="worker", error_code="CRASH", step_id="run",
                       message="exited 1", fingerprint="fp-1")  # fmt: skip
        tx.keep_stderr("failed-1", 1, 1, "Traceback…", 120)
        assert tx.record_refusal("r.reason.json", {
            "run_id": "failed-1", "named_run": "failed-1", "lane": "jarvis-worker-1",
            "code": "not_json", "message": "not JSON", "original_path": "x.json",
            "stored_as": None, "outcome": "moved", "quarantined_at": tx.now,
            "target_jid": "jarvis-worker-1@nanoclaw"})  # fmt: skip
    assert cancel(store, "queued-1", "op", "not needed").ok
    expire_steers(store, layout, ack_timeout_s=3600)


@pytest.fixture
def layout(tmp_path: Path) -> IpcLayout:
    made = IpcLayout(tmp_path / "data" / "ipc")
    made.ensure_lane("jarvis-worker-1")
    return made


@pytest.fixture
def both(tmp_path: Path, pg_url: str) -> Iterator[tuple[SqliteStore, PostgresStore]]:
    clocks = Ticking(), Ticking()
    lite = SqliteStore(tmp_path / "jarvis.db", clock=clocks[0])
    pg = PostgresStore(pg_url, clock=clocks[1])
    for clock in clocks:
        clock.reset()
    yield lite, pg
    lite.close()
    pg.close()


def comparable(value: Any) -> Any:
    """What both backends must agree on: every field but the journal's numbering and the
    steers' random ids."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in ("seq", "id", "steer_id")}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def test_one_history_reads_back_the_same_from_both_backends(
    both: tuple[SqliteStore, PostgresStore], tmp_path: Path
) -> None:
    lite, pg = both
    for store, name in ((lite, "lite"), (pg, "pg")):
        lanes = IpcLayout(tmp_path / name / "ipc")
        lanes.ensure_lane("jarvis-worker-1")
        history(store, lanes)
    assert comparable(table_rows(pg)) == comparable(table_rows(lite))
    for run_id in ("done-1", "failed-1", "running-1", "queued-1"):
        assert comparable(run_detail(pg, run_id)) == comparable(run_detail(lite, run_id)), run_id
        assert comparable(run_journal(pg, run_id)) == comparable(run_journal(lite, run_id))
    assert pg.state_counts() == lite.state_counts()
    assert (
        pg.usage_by_run()
        == lite.usage_by_run()
        == {
            "running-1": {
                "tokens_in": 100,
                "tokens_out": 20,
                "cost_usd": 0.25,
                "cost_computed": False,
                "unreadable": None,
            }
        }  # fmt: skip
    )
    refused = pg.lane_refusals("jarvis-worker-1", 5)
    assert comparable(refused) == comparable(lite.lane_refusals("jarvis-worker-1", 5))
    assert [r["target_jid"] for r in refused] == ["jarvis-worker-1@nanoclaw"]
    assert pg.last_seq() == lite.last_seq() > 0
    assert [e["kind"] for e in pg.journal_since(0)] == [e["kind"] for e in lite.journal_since(0)]


def test_a_stale_compare_and_set_is_refused_and_the_journal_is_append_only(
    both: tuple[SqliteStore, PostgresStore],
) -> None:
    _, pg = both
    make_run(pg, "r1", RunState.RUNNING)
    run = pg.get_run("r1")
    assert run is not None
    with pytest.raises(StaleVersion), pg.transaction() as tx:
        tx.change_run("r1", expected_version=run["version"] - 1, changes={}, kind="transition",
                      payload={}, actor="test")  # fmt: skip
    assert pg.get_run("r1") == run  # nothing written
    with pytest.raises(QueryError) as caught, pg.transaction() as tx:
        tx.execute("UPDATE journal SET kind = 'forged'", [])
    assert isinstance(caught.value.__cause__, psycopg.errors.RaiseException)
    assert "forged" not in {e["kind"] for e in pg.journal_since(0)}


def test_two_writers_racing_on_one_version_make_one_effect(pg_url: str) -> None:
    setup = PostgresStore(pg_url)
    make_run(setup, "r1", RunState.RUNNING)
    version = setup.get_run("r1")["version"]  # type: ignore[index]
    stores = [PostgresStore(pg_url) for _ in range(4)]
    start = threading.Barrier(len(stores))
    outcomes: list[str] = []

    def write(store: PostgresStore) -> None:
        start.wait()
        try:
            with store.transaction() as tx:
                tx.change_run("r1", expected_version=version, changes={"state_reason": "x"},
                              kind="transition", payload={}, actor="test")  # fmt: skip
            outcomes.append("moved")
        except StaleVersion:
            outcomes.append("stale")

    threads = [threading.Thread(target=write, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["moved", "stale", "stale", "stale"]
    assert setup.get_run("r1")["version"] == version + 1  # type: ignore[index]
    for store in (setup, *stores):
        store.close()


def test_opening_again_applies_no_migration_twice(pg_url: str) -> None:
    first = PostgresStore(pg_url)
    make_run(first, "r1", RunState.QUEUED)
    first.close()
    again = PostgresStore(pg_url)
    assert again.get_run("r1") is not None
    names = [r["name"] for r in again.rows("SELECT name FROM jarvis_migrations ORDER BY name")]
    assert names == ["0001_initial", "0002_worked_time", "0003_hosts", "0004_usage_unreadable",
                     "0005_refusal_target", "0006_usage_cost_computed",
                     "0007_confinement", "0008_merge_by_host", "0009_run_counts",
                     "0010_usage_totals", "0011_window_indexes", "0012_retention",
                     "0013_notify_marks",
                     "0014_lane_pauses"]  # fmt: skip
    again.close()
