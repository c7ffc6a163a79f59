"""One run's slow criteria never hold another run's checks, and no run's verification is endless.

The real host. Run ``slow``'s criteria are six patterns that backtrack without end (``^(a+)+$``
over ``'a' * 40 + 'b'``, each given far longer than the test); run ``quick`` has one
``file_exists``. With one verifier for the whole host, ``quick`` waited behind ``slow`` for as
long as its patterns took (six times the search limit: a minute at the default). Now the host
verifies a few runs at once, and ``quick`` is decided while ``slow`` is still being verified.
And a run's whole verification has a bound (``[criteria] run_verify_s``): what is not checked
by then is reported not verified, naming the bound, and the run fails.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from core.criteria import run_criteria
from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.host.hostkit import (
    HostProcess,
    assert_no_workers,
    run_row,
    wait_for_states,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

RUNAWAY = r"^(a+)+$"
VICTIM = "a" * 40 + "b"

#: The simulated worker, then the file the criteria check: what a worker could leave behind.
WORKER = (
    "import os, pathlib, sys\n"
    "from jarvis_sim.simworker import main\n"
    "code = main()\n"
    f"pathlib.Path(os.environ['JARVIS_CHECKOUT'], 'notes.txt').write_text({VICTIM!r} + '\\n')\n"
    "sys.exit(code)\n"
)


def _configure(ws: Path, criteria: str) -> None:
    write_config(ws, concurrency=2, shutdown_grace_s=1)
    text = (ws / "jarvis.toml").read_text()
    command = json.dumps([sys.executable, "-c", WORKER])
    text = text.replace("[workers]\n", f"[workers]\ncommand = {command}\n")
    (ws / "jarvis.toml").write_text(text + f"[criteria]\n{criteria}")


def _runaway(n: int) -> dict[str, Any]:
    return {"type": "content_match", "path": "notes.txt", "pattern": RUNAWAY,
            "description": f"notes.txt must match ^(a+)+$ ({n})"}  # fmt: skip


EXISTS = {"type": "file_exists", "path": "notes.txt", "description": "notes.txt must exist"}


def _submit(store: SqliteStore, run_id: str, criteria: list[dict[str, Any]]) -> None:
    doc = dispatch_doc(run_id, input="Write notes.txt. sim:ok", acceptance_criteria=criteria)
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def test_a_run_s_slow_criteria_never_hold_another_run_s_checks(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # Each search far longer than the test: `slow` is surely still being verified when `quick`
    # is decided, however loaded the machine.
    _configure(ws, "pattern_timeout_s = 600\n")
    _submit(store, "slow", [_runaway(n) for n in range(6)])
    host = HostProcess(ws)
    try:
        host.wait_started()
        wait_until(lambda: run_row(conn, "slow")["verification_state"] == "verifying",
                   HANG_GUARD_S, "run slow's verification to start", host.log)  # fmt: skip
        _submit(store, "quick", [EXISTS])
        wait_for_states(conn, {"quick": "review_requested"}, HANG_GUARD_S, host=host)
        slow = run_row(conn, "slow")
        assert (slow["state"], slow["verification_state"]) == ("running", "verifying")
        # Stopped without waiting out the searches' 600 s (the guard is far below that; a bound
        # of 15 s failed on a busy machine).
        assert host.stop() == 0
    finally:
        host.kill()
        assert_no_workers(ws)
    results = run_criteria.latest_results(store, "quick")
    assert results is not None and results["passed"] is True
    assert run_criteria.latest_results(store, "slow") is None  # stopped, never decided


def test_a_run_s_verification_ends_at_its_bound(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    _configure(ws, "pattern_timeout_s = 600\nrun_verify_s = 2\n")
    _submit(store, "bounded", [EXISTS, _runaway(1), EXISTS | {"description": "again"}])
    host = HostProcess(ws)
    try:
        host.wait_started()
        wait_for_states(conn, {"bounded": "failed"}, HANG_GUARD_S, host=host)
    finally:
        host.stop()
        assert_no_workers(ws)
    run = run_row(conn, "bounded")
    assert run["state_reason"] == (
        "acceptance criteria failed: notes.txt must match ^(a+)+$ (1); again"
    )
    results = run_criteria.latest_results(store, "bounded")
    assert results is not None and results["passed"] is False
    checked, stopped, never = results["criteria_results"]
    assert checked["passed"] is True
    bound = (
        "not verified: the run's verification reached its bound of 2 s ([criteria] run_verify_s)"
    )
    assert (stopped["passed"], stopped["output"]) == (False, bound)
    assert (never["passed"], never["output"]) == (False, bound)
