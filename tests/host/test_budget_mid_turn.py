"""A budget stops an agent while its turn is under way: the runner reports the tokens the
agent's stream has reported so far, with every progress event, and the host interrupts the run
once they cross the budget, whether or not the agent would ever end its turn.

The agent is the stand-in ``claude`` (tests/agents/fake_claude.py) in ``FAKE:spend`` mode: it
calls its model again and again and never ends its turn; each call's usage is on the call's
assistant lines, as Claude Code prints it, and no ``result`` (where the turn's totals are)
ever comes.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo
from tests.host.hostkit import rows, run_row, running_host, wait_for_states
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

FAKE = Path(__file__).parents[1] / "agents" / "fake_claude.py"
REPO = "acme-labs/fleet-engine"


def test_a_run_over_its_token_budget_is_stopped_mid_turn(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "claude"\n'
        f'[workers.claude]\nagent = "claude-code"\ncommand = ["{sys.executable}", "{FAKE}"]\n'
        'env = { FAKE_STREAM_INTERVAL_MS = "20" }\n'
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        # The turn never ends: only the budget can stop it before this bound does.
        "[timeouts]\nno_output_s = 60\nhard_limit_s = 60\n"
        "[budgets]\nrun_tokens = 5000\ninterrupt_grace_s = 30\n"
    )
    doc = dispatch_doc("r1", input="Read every module. FAKE:spend", branch="jarvis-r1")
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()

    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
    reason = run_row(conn, "r1")["state_reason"]
    assert reason.startswith("budget_exceeded: ") and "over the run budget of 5,000" in reason
    # No result ever came: what stopped it was what its stream reported along the way.
    log = (ws / "logs" / "r1" / "attempt-1" / "stdout.log").read_text()
    assert '"type": "result"' not in log
    # Each model call counted once, though its usage was on two lines: the figures are those
    # of some number of whole calls, and no more than a few past the budget.
    (used,) = rows(conn, "SELECT tokens_in, tokens_out FROM run_usage WHERE run_id = 'r1'")
    calls = used["tokens_out"] // 40
    assert used["tokens_out"] == 40 * calls
    assert used["tokens_in"] == sum(900 + n for n in range(1, calls + 1)), used
    assert 5000 < used["tokens_in"] + used["tokens_out"] < 5000 + 10 * 1000, used
