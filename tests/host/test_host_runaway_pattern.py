"""A pattern that backtracks without end never freezes the host.

The real host and a worker that leaves ``"a" * 34 + "b"`` in the file a ``content_match``
criterion checks with ``^(a+)+$``. Matched in-process, that search runs for hours while holding
the interpreter lock: ingestion stops, SIGTERM is ignored, and a restarted host freezes again on
the same run. Here SIGTERM stops the host in the middle of the search, a restarted host keeps
ingesting while it verifies, and the run fails once, naming the criterion and the time limit.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from core.criteria import run_criteria
from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.host.hostkit import (
    HostProcess,
    dispatch,
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.slow

RUNAWAY = r"^(a+)+$"
VICTIM = "a" * 34 + "b"

#: The simulated worker, then the file the criterion checks: what a worker could leave behind.
WORKER = (
    "import os, pathlib, sys\n"
    "from jarvis_sim.simworker import main\n"
    "code = main()\n"
    f"pathlib.Path(os.environ['JARVIS_CHECKOUT'], 'notes.txt').write_text({VICTIM!r} + '\\n')\n"
    "sys.exit(code)\n"
)


def _configure(ws: Path, pattern_timeout_s: float) -> None:
    write_config(ws, concurrency=2, shutdown_grace_s=1)
    with (ws / "jarvis.toml").open("a") as config:
        config.write(f"[criteria]\npattern_timeout_s = {pattern_timeout_s}\n")
    text = (ws / "jarvis.toml").read_text()
    command = json.dumps([sys.executable, "-c", WORKER])
    (ws / "jarvis.toml").write_text(
        text.replace("[workers]\n", f"[workers]\ncommand = {command}\n")
    )


def test_a_runaway_pattern_neither_freezes_nor_outlives_the_host(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    criterion = {"type": "content_match", "path": "notes.txt", "pattern": RUNAWAY,
                 "description": "notes.txt must match the regex ^(a+)+$"}  # fmt: skip
    doc = dispatch_doc("runaway", input="Write notes.txt. sim:ok", acceptance_criteria=[criterion])
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()

    # First host: a limit far beyond the test, so the search is surely running when it is told
    # to stop. SIGTERM must end it within its shutdown grace, not at the search's end.
    _configure(ws, pattern_timeout_s=600)
    first = HostProcess(ws, log_name="host-1.log")
    try:
        first.wait_started()
        wait_until(
            lambda: run_row(conn, "runaway")["verification_state"] == "verifying",
            40,
            "the verification to start",
            first.log,
        )
        code = first.stop(timeout=15)
        assert code == 0, f"the host did not stop on SIGTERM (exit {code}):\n{first.log()}"
    finally:
        first.kill()
    assert run_row(conn, "runaway")["verification_state"] == "verifying"

    # Second host: a short limit. It verifies the run again, keeps ingesting meanwhile (a new
    # run goes all the way through), and fails the run once with the reason.
    _configure(ws, pattern_timeout_s=2)
    dispatch(store, "bystander")
    with running_host(ws, log_name="host-2.log") as second:
        wait_for_states(
            conn, {"runaway": "failed", "bystander": "review_requested"}, timeout=60, host=second
        )

    run = run_row(conn, "runaway")
    assert run["state_reason"] == (
        "acceptance criteria failed: notes.txt must match the regex ^(a+)+$"
    )
    results = rows(conn, "SELECT results_json FROM verification_results WHERE run_id = ?",
                   ["runaway"])  # fmt: skip
    assert len(results) == 1
    latest = run_criteria.latest_results(store, "runaway")
    assert latest is not None
    [outcome] = latest["criteria_results"]
    assert outcome["passed"] is False
    assert "still searching after 2 s" in outcome["output"]
