"""The seeded history: every state an operator meets, consistent with its journal and audit."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from jarvis_sim.demo_seed import SeedError, seed_new_workspace
from tests.faults.test_crash import verify


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("seeded")
    return root, seed_new_workspace(root)


def _rows(root: Path, sql: str) -> list[dict[str, Any]]:
    conn = sqlite3.connect(root / "jarvis.db")
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def test_every_state_an_operator_meets_is_there(seeded: tuple[Path, dict[str, Any]]) -> None:
    root, report = seeded
    runs = _rows(root, "SELECT * FROM runs")
    states = Counter(r["state"] for r in runs)
    assert set(states) == {"done", "review_requested", "failed_contract", "failed"}, states
    assert report["by_state"] == dict(sorted(states.items()))
    assert report["runs"] == len(runs) >= 30
    # Nothing a host's start-up recovery would touch, nothing waiting for a worker.
    assert not states["running"] and not states["queued"]

    overridden = [r for r in runs if r["overridden"]]
    assert overridden and all(r["state"] == "done" for r in overridden)
    assert all(r["override_reason"] and r["overridden_by"] for r in overridden)
    assert any(r["state"] == "done" and not r["overridden"] for r in runs)
    assert max(r["retry_count"] for r in runs) >= 2
    assert {r["state"] for r in runs if r["retry_count"]} >= {"done", "review_requested", "failed"}
    assert any(r["source_lane"] == "andy-developer" for r in runs)  # came in as an IPC task file
    assert any((r["state_reason"] or "").startswith("cancelled by") for r in runs)
    assert {r["lane"] for r in runs} >= {f"jarvis-worker-{n}" for n in range(1, 5)} | {"openclaw"}


def test_contract_failures_have_their_failed_gates(seeded: tuple[Path, dict[str, Any]]) -> None:
    root, _ = seeded
    gates = _rows(
        root,
        "SELECT r.run_id, g.name, g.passed FROM runs r JOIN gate_results g USING (run_id) "
        "WHERE r.state = 'failed_contract'",
    )
    contract = _rows(root, "SELECT run_id FROM runs WHERE state = 'failed_contract'")
    failed_runs = {r["run_id"] for r in contract}
    assert {g["run_id"] for g in gates if not g["passed"]} == failed_runs
    assert {g["name"] for g in gates} >= {"parseable", "risk_gate"}  # completions and OpenClaw


def test_failures_share_a_fingerprint(seeded: tuple[Path, dict[str, Any]]) -> None:
    root, report = seeded
    failed = _rows(
        root,
        "SELECT f.fingerprint, f.error_class, f.error_code, r.run_id FROM failures f "
        "JOIN runs r USING (run_id) WHERE r.state = 'failed'",
    )
    per_print = Counter(fp for fp, _ in {(f["fingerprint"], f["run_id"]) for f in failed})
    assert max(per_print.values()) >= 3, per_print
    assert all(len(f["fingerprint"]) == 64 for f in failed)
    assert {f["error_code"] for f in failed} >= {"WORKER_CRASHED", "WORKER_NO_OUTPUT"}
    assert report["shared_fingerprint"]["runs"] >= 3
    # Every failed run (cancelled ones aside) carries its error.v1 record.
    uncancelled = _rows(
        root,
        "SELECT run_id FROM runs WHERE state = 'failed' AND state_reason NOT LIKE 'cancelled by%'",
    )
    assert {r["run_id"] for r in uncancelled} <= {f["run_id"] for f in failed}


def test_steers_progress_and_audit(seeded: tuple[Path, dict[str, Any]]) -> None:
    root, report = seeded
    steers = _rows(root, "SELECT * FROM steering_events")
    statuses = Counter(s["status"] for s in steers)
    assert statuses["acked"] >= 2 and statuses["expired"] >= 2, statuses
    assert set(statuses) <= {"acked", "expired"}  # pending/delivered need a live worker
    assert all(s["acked_at"] for s in steers if s["status"] == "acked")
    reasons = {s["status_reason"] for s in steers if s["status"] == "expired"}
    assert any("not acknowledged" in r for r in reasons)
    assert any("run ended" in r for r in reasons)

    events = _rows(root, "SELECT run_id, attempt, seq FROM progress_events")
    assert report["progress_events"] == len(events) >= 100
    assert any(e["attempt"] == 2 for e in events)
    actors = {a["actor"] for a in _rows(root, "SELECT actor FROM audit")}
    assert actors >= {"host", "main", "andy-developer", "openclaw", "oncall"}

    # Every IPC file was ingested and removed, and nothing was refused.
    left = [p for p in (root / "data" / "ipc").rglob("*") if p.is_file()]
    assert left == []


def test_the_journal_replays_to_every_run(seeded: tuple[Path, dict[str, Any]]) -> None:
    root, _ = seeded
    seen = verify(root / "jarvis.db", None, "after seeding")
    assert seen.runs >= 30


def test_history_is_spread_over_the_past_in_order(seeded: tuple[Path, dict[str, Any]]) -> None:
    root, report = seeded
    journal = _rows(root, "SELECT seq, at FROM journal ORDER BY seq")
    stamps = [j["at"] for j in journal]
    assert stamps == sorted(stamps)
    first, last = stamps[0], stamps[-1]
    assert (first, last) == (report["first_at"], report["last_at"])
    now = datetime.now(UTC)
    first_dt, last_dt = (datetime.fromisoformat(s) for s in (first, last))
    assert (now - first_dt).total_seconds() > 6 * 3600
    assert 0 < (now - last_dt).total_seconds() < 3600
    progress = _rows(root, "SELECT payload FROM journal WHERE kind = 'progress'")
    payloads = [json.loads(r["payload"]) for r in progress]
    assert all(p["timestamp"] for p in payloads)


def test_only_a_new_workspace_is_seeded(seeded: tuple[Path, dict[str, Any]]) -> None:
    root, _ = seeded
    with pytest.raises(SeedError, match="already holds runs"):
        seed_new_workspace(root)
