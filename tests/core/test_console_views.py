"""The console's store views: receipts and gate totals per run, journal paging, shared causes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.ipc.payloads import Usage
from core.lifecycle import RunState
from core.operator_actions import retry, steer
from core.run_views import (
    fingerprint_peers,
    needs_attention,
    run_journal,
    state_counts,
    table_rows,
)
from core.store.api import Row
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    s = SqliteStore(tmp_path / "jarvis.db")
    yield s  # type: ignore[misc]
    s.close()


def _gate(store: SqliteStore, run_id: str, attempt: int, name: str, passed: bool) -> None:
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO gate_results (run_id, attempt, name, passed, detail, evaluated_at) "
            "VALUES (?, ?, ?, ?, '', 't')",
            [run_id, attempt, name, int(passed)],
        )


def _failure(store: SqliteStore, run_id: str, fingerprint: str) -> None:
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO failures (run_id, attempt, error_class, error_code, step_id, message, "
            "fingerprint, at) VALUES (?, 1, 'worker', 'crash', 's', 'm', ?, 't')",
            [run_id, fingerprint],
        )


def test_table_rows_carry_steer_receipts_and_only_the_latest_attempts_gates(
    store: SqliteStore,
) -> None:
    make_run(store, "r-run", RunState.RUNNING)
    make_run(store, "r-failed", RunState.FAILED_CONTRACT)
    assert steer(store, "r-run", "op", "look at the logs").ok
    assert steer(store, "r-run", "op", "then retry").ok
    store.db.execute("UPDATE steering_events SET status = 'expired' WHERE rowid = 1")
    store.db.conn.commit()
    _gate(store, "r-failed", 1, "tests_pass", False)
    _gate(store, "r-failed", 1, "files_in_scope", True)
    _gate(store, "r-failed", 2, "tests_pass", True)

    every = {row["run_id"]: row for row in table_rows(store)}
    some = {row["run_id"]: row for row in table_rows(store, ["r-run", "r-failed", "nope"])}
    assert every == some
    assert every["r-run"]["steers"] == {"expired": 1, "pending": 1}
    assert every["r-run"]["gates"] is None
    assert every["r-failed"]["gates"] == {"passed": 1, "total": 1, "not_checked": 0}
    assert needs_attention(every["r-run"])  # running, but a steer went unheard
    assert needs_attention(every["r-failed"])
    make_run(store, "r-queued", RunState.QUEUED)
    assert not needs_attention(table_rows(store, ["r-queued"])[0])


def test_table_rows_by_id_read_in_chunks(store: SqliteStore) -> None:
    for n in range(3):
        make_run(store, f"r-{n}", RunState.QUEUED)
    ids = [f"r-{n}" for n in range(3)] + [f"missing-{n}" for n in range(1200)]
    assert sorted(row["run_id"] for row in table_rows(store, ids)) == ["r-0", "r-1", "r-2"]


def _usage(store: SqliteStore, run_id: str, attempt: int, seq: int, **figures: float) -> None:
    with store.transaction() as tx:
        tx.record_usage(run_id, attempt, seq, Usage.model_validate(figures))


def test_table_rows_carry_what_each_runs_agent_spent_over_every_attempt(
    store: SqliteStore,
) -> None:
    make_run(store, "r-spent", RunState.RUNNING)
    make_run(store, "r-silent", RunState.RUNNING)
    _usage(store, "r-spent", 1, 3, tokens_in=1000, tokens_out=200, cost_usd=0.01)
    # Arrives later with smaller figures: each figure keeps its largest report.
    _usage(store, "r-spent", 1, 2, tokens_in=1, tokens_out=1, cost_usd=0.005)
    _usage(store, "r-spent", 2, 1, tokens_in=500, tokens_out=50, cost_usd=0.02)

    every = {row["run_id"]: row for row in table_rows(store)}
    some = {row["run_id"]: row for row in table_rows(store, ["r-spent", "r-silent"])}
    assert every == some
    assert every["r-spent"]["usage"] == {
        "tokens_in": 1500, "tokens_out": 250, "cost_usd": 0.03, "cost_computed": False,
        "unreadable": None,
    }  # fmt: skip
    assert every["r-silent"]["usage"] is None  # its agent reported nothing


@pytest.mark.parametrize("run_ids", [None, "by id"])
def test_table_rows_read_spending_in_as_many_queries_for_many_runs_as_for_one(
    store: SqliteStore, run_ids: str | None
) -> None:
    """What the agents spent costs the console one query a read, never one per run."""
    queries: list[str] = []
    rows = store.rows

    def counted(sql: str, params: list[Any] | None = None) -> list[Row]:
        queries.append(sql)
        return rows(sql, params)

    store.rows = counted  # type: ignore[method-assign]

    def count(ids: list[str]) -> int:
        queries.clear()
        read = table_rows(store, None if run_ids is None else ids)
        assert {row["run_id"] for row in read} == set(ids)
        assert all(row["usage"] is not None for row in read)
        return len(queries)

    make_run(store, "r-0", RunState.RUNNING)
    _usage(store, "r-0", 1, 1, tokens_in=1, tokens_out=1, cost_usd=0.01)
    one = count(["r-0"])
    for n in range(1, 40):
        make_run(store, f"r-{n}", RunState.RUNNING)
        _usage(store, f"r-{n}", 1, 1, tokens_in=n, tokens_out=1, cost_usd=0.01)
    assert count([f"r-{n}" for n in range(40)]) == one
    assert sum("run_usage" in sql for sql in queries) == 1


def test_state_counts(store: SqliteStore) -> None:
    make_run(store, "a", RunState.FAILED)
    make_run(store, "b", RunState.FAILED)
    make_run(store, "c", RunState.DONE)
    assert state_counts(store) == {"failed": 2, "done": 1}


def test_run_journal_pages_back_from_the_newest(store: SqliteStore) -> None:
    make_run(store, "a", RunState.FAILED)  # created, start, fail
    make_run(store, "b", RunState.QUEUED)
    assert retry(store, "a", "op").ok
    newest = run_journal(store, "a", limit=2)
    assert [e["kind"] for e in newest] == ["transition", "transition"]
    assert newest[-1]["payload"]["action"] == "retry"
    older = run_journal(store, "a", limit=10, before_seq=newest[0]["seq"])
    assert [e["kind"] for e in older] == ["created", "transition"]
    assert {e["run_id"] for e in run_journal(store, None, limit=100)} == {"a", "b"}
    seqs = [e["seq"] for e in run_journal(store, None, limit=100)]
    assert seqs == sorted(seqs)


def test_fingerprint_peers_count_other_runs_only(store: SqliteStore) -> None:
    for run_id in ("a", "b", "c", "d"):
        make_run(store, run_id, RunState.FAILED)
    for run_id in ("a", "b", "c"):
        _failure(store, run_id, "fp-shared")
    _failure(store, "a", "fp-shared")  # the same run twice is still one run
    _failure(store, "a", "fp-alone")
    _failure(store, "d", "fp-other")
    peers = {p["fingerprint"]: p["other_runs"] for p in fingerprint_peers(store, "a")}
    assert peers == {"fp-shared": 2, "fp-alone": 0}
    assert fingerprint_peers(store, "nope") == []
