"""Acceptance criteria end to end: dispatch → extraction → a simulated worker → the host's
verification in the run's checkout → the expected state → an override everyone can see.

The real host process and the real simulated worker; the outcome is read back from the store.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from core.criteria import run_criteria
from core.intake import submit_dispatch
from core.operator_actions import override
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.host.hostkit import (
    HostProcess,
    assert_no_workers,
    journal,
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

ASK = "Create docs/runbooks/retry.md that explains the retry counter."


def _submit(store: SqliteStore, run_id: str, **changes: object) -> None:
    doc = dispatch_doc(run_id, **changes)
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def test_criteria_are_extracted_verified_and_overridden(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, concurrency=2)
    _submit(store, "crit-ok", input=f"{ASK} sim:ok")
    _submit(store, "crit-missing", input=f"{ASK} sim:verify_fail")
    # Visible right after dispatch, with where they came from.
    for run_id in ("crit-ok", "crit-missing"):
        run = run_row(conn, run_id)
        assert json.loads(run["criteria_json"]) == [
            {"type": "file_exists", "path": "docs/runbooks/retry.md",
             "description": "docs/runbooks/retry.md must exist", "universal": False},
        ]  # fmt: skip
        created = journal(conn, run_id, "created")[0]
        assert created["criteria"]["source"] == "patterns" and created["criteria"]["count"] == 1

    with running_host(ws) as host:
        wait_for_states(
            conn, {"crit-ok": "review_requested", "crit-missing": "failed"}, HANG_GUARD_S, host=host
        )

    missing = run_row(conn, "crit-missing")
    assert missing["state_reason"] == (
        "acceptance criteria failed: docs/runbooks/retry.md must exist"
    )
    assert (ws / "checkouts" / "crit-ok" / "docs" / "runbooks" / "retry.md").is_file()
    assert not (ws / "checkouts" / "crit-missing" / "docs" / "runbooks" / "retry.md").exists()
    ok_results = run_criteria.latest_results(store, "crit-ok")
    bad_results = run_criteria.latest_results(store, "crit-missing")
    assert ok_results is not None and ok_results["passed"] is True
    assert bad_results is not None and bad_results["passed"] is False
    [result] = bad_results["criteria_results"]
    assert result["passed"] is False and "docs/runbooks/retry.md" in result["output"]
    failures = rows(conn, "SELECT error_code, step_id FROM failures WHERE run_id = ?",
                    ["crit-missing"])  # fmt: skip
    assert failures == [
        {"error_code": "ACCEPTANCE_CRITERIA_FAILED", "step_id": "verify:file_exists"}
    ]

    done = override(store, "crit-missing", "night-operator", "the runbook lives in the wiki")
    assert done.ok and done.run is not None and done.run["state"] == "done"
    overridden = run_criteria.latest_results(store, "crit-missing")
    assert overridden is not None
    assert overridden["override_applied"] is True
    assert overridden["override_reason"] == "the runbook lives in the wiki"
    assert overridden["overridden_by"] == "night-operator"
    assert overridden["overridden_at"]


def test_a_host_killed_mid_verification_verifies_again_and_decides_once(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, concurrency=1)
    interpreter = Path(sys.executable).name
    with (ws / "jarvis.toml").open("a") as config:
        config.write(f'[criteria]\nallow = ["{interpreter}"]\n')
    # First verification: leaves a marker and lasts as long as the host that started it (its
    # parent), so it is still under way when that host is killed, however slow the machine;
    # the next one finds the marker and passes at once.
    script = (
        "import os, pathlib, sys, time\n"
        "marker = pathlib.Path('verified-once')\n"
        "if marker.exists():\n    sys.exit(0)\n"
        "host = os.getppid()\n"
        "marker.write_text('x')\n"
        "while os.getppid() == host:\n    time.sleep(0.05)\n"
        "sys.exit(1)\n"
    )
    criterion = {"type": "command_success", "description": "the slow check passes",
                 "command": [interpreter, "-c", script]}  # fmt: skip
    _submit(store, "crit-slow", input="Fix the retry counter. sim:ok",
            acceptance_criteria=[criterion])  # fmt: skip

    first = HostProcess(ws, log_name="host-1.log")
    try:
        first.wait_started()
        marker = ws / "checkouts" / "crit-slow" / "verified-once"
        wait_until(lambda: marker.exists() or None, HANG_GUARD_S, "the first verification to start")
        assert run_row(conn, "crit-slow")["verification_state"] == "verifying"
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(HANG_GUARD_S)
        with running_host(ws, log_name="host-2.log") as second:
            wait_for_states(conn, {"crit-slow": "review_requested"}, HANG_GUARD_S, host=second)
    finally:
        first.kill()
        assert_no_workers(ws)

    run = run_row(conn, "crit-slow")
    assert run["state"] == "review_requested" and run["verification_state"] is None
    transitions = [(t["action"], t["to"], t.get("verification_to"))
                   for t in journal(conn, "crit-slow", "transition")]  # fmt: skip
    # The second host verified the run where the first left it (no move of its own), and the
    # run was decided once.
    assert transitions == [
        ("start", "running", None),
        ("await_verification", "running", "pending"),
        ("start_verification", "running", "verifying"),
        ("pass_gates", "review_requested", None),
    ]
    notes = [n["status"] for n in journal(conn, "crit-slow", "verification")]
    assert notes.count("resumed") == 1
    results = rows(conn, "SELECT results_json FROM verification_results WHERE run_id = ?",
                   ["crit-slow"])  # fmt: skip
    assert [json.loads(r["results_json"])["passed"] for r in results] == [True]
