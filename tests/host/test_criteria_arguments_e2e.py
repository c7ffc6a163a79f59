"""A real host never runs, unattended, an allowlisted tool pointed outside the run's checkout.

Task text asks for ``make -C <folder outside the checkout> x``, where a Makefile would leave a
marker file if it ever ran. The real host extracts the criterion, a simulated worker finishes,
and the host's verification stops at ``awaiting_approval`` with the marker absent; only an
operator's approval of that exact command runs it.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from pathlib import Path

import pytest

from core.criteria import run_criteria
from core.criteria.allowlist import command_key
from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.host.hostkit import (
    describe_runs,
    journal,
    run_row,
    running_host,
    wait_for_states,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow


def test_make_in_a_folder_outside_the_checkout_waits_for_approval(
    tmp_path: Path, ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "pwned"
    (evil / "Makefile").write_text(f"x:\n\ttouch {marker}\n")
    command = ["make", "-C", str(evil), "x"]
    write_config(ws, concurrency=1)
    doc = dispatch_doc("crit-outside", input=f"Fix the retry counter. Run `{shlex.join(command)}`."
                                              " sim:ok")  # fmt: skip
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()
    run = run_row(conn, "crit-outside")
    assert [c["command"] for c in json.loads(run["criteria_json"])] == [command]
    notes = journal(conn, "crit-outside", "created")[0]["criteria"]["notes"]
    waits = f"`{shlex.join(command)}` waits for an operator's approval"
    assert any(note.startswith(waits) for note in notes), notes

    with running_host(ws) as host:
        wait_until(
            lambda: run_row(conn, "crit-outside")["verification_state"] == "awaiting_approval",
            HANG_GUARD_S, "the run to wait for approval", lambda: describe_runs(conn, host),
        )  # fmt: skip
        assert not marker.exists()
        results = run_criteria.latest_results(store, "crit-outside")
        assert results is not None and results["passed"] is False
        [outcome] = results["criteria_results"]
        assert outcome["output"] == (
            f"needs approval: `{shlex.join(command)}` names a path outside the checkout "
            f"({str(evil)!r})"
        )
        waiting = run_row(conn, "crit-outside")
        assert waiting["state"] == "running"
        assert waiting["state_reason"] == "a criterion's command waits for an operator's approval"
        assert not marker.exists()

        # An operator who read the command lets it run; only then does the Makefile run.
        allowed = run_criteria.approve_command(store, "crit-outside", command_key(command), "ops")
        assert allowed.ok, allowed
        wait_for_states(conn, {"crit-outside": "review_requested"}, HANG_GUARD_S, host=host)
    assert marker.exists()
