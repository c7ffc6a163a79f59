"""Usage figures that cannot overflow or lie, under a real host.

A worker reports what it likes: figures past any store's sum, a first event dated 2099 that
once pinned a run's figures at zero while it spent $50, counts of 2^63 - 1 from a fake agent.
The host stays up, every figure it stores can be summed, the largest cumulative figure stands
whatever the events' dates, and a run whose usage could not be read does not pass a budget.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from core.ipc.payloads import USAGE_TOKENS_MAX
from core.store.sqlite_store import SqliteStore
from tests.cli.conftest import jarvis
from tests.gitrepo import make_repo
from tests.host.hostkit import cli, dispatch, run_row, running_host, wait_for_states
from tests.processes import HANG_GUARD_S

#: A worker that writes the progress events of $REPORTS_<run id> (a JSON list of ``[timestamp
#: or null, usage]``) one after the other, then prints an (empty) completion and exits at once.
#: A budget's SIGINT does not cut it short: every report is written, whenever the host reads
#: the first ones (a loaded machine once stopped it after two, and the test saw $20, not $50).
REPORTER = f"""#!{sys.executable}
import json, os, signal, time
from pathlib import Path
from core.ipc.worker_env import iso_ms, write_json_atomic
signal.signal(signal.SIGINT, signal.SIG_IGN)
progress = Path(os.environ["JARVIS_PROGRESS_DIR"])
reports = json.loads(os.environ["REPORTS_" + os.environ["JARVIS_RUN_ID"]])
for seq, (stamp, usage) in enumerate(reports, start=1):
    now = time.time_ns() // 1_000_000
    write_json_atomic(progress / f"{{now}}-{{seq}}.json", {{
        "kind": "worker_progress", "run_id": os.environ["JARVIS_RUN_ID"],
        "group_folder": os.environ["JARVIS_LANE"], "timestamp": stamp or iso_ms(now),
        "phase": "editing", "summary": f"turn {{seq}}", "seq": seq, "usage": usage,
    }})
print("<completion>{{}}</completion>", flush=True)
"""


Reports = list[tuple[str | None, object]]


def reporter(ws: Path, reports: dict[str, Reports], budgets: str = "") -> None:
    (ws / "bin").mkdir(exist_ok=True)
    program = ws / "bin" / "reporter"
    program.write_text(REPORTER)
    program.chmod(0o755)
    env = ", ".join(f"REPORTS_{run} = {json.dumps(json.dumps(r))}" for run, r in reports.items())
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "reporter"\nconcurrency = 1\n'
        '[workers.reporter]\nagent = "command"\ncommand = ["./bin/reporter"]\n'
        f"env = {{ {env} }}\n"
        "[timeouts]\nno_output_s = 60\n" + budgets
    )


def test_an_event_dated_2099_cannot_pin_a_runs_cost_below_its_budget(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # Its first report claims the far future with nothing spent; the later ones, dated now,
    # climb to $50. The worker exits as soon as it has said so.
    reports: Reports = [
        ("2099-01-01T00:00:00.000Z", {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0}),
    ]
    reports += [(None, {"tokens_in": 1000 * n, "cost_usd": 10 * n}) for n in range(1, 6)]
    reporter(ws, {"r1": reports}, "[budgets]\nrun_cost_usd = 1\n")
    dispatch(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
    reason = run_row(conn, "r1")["state_reason"]
    assert reason.startswith("budget_exceeded: ") and "over the run budget of $1" in reason
    code, shown = cli(ws, "show", "r1")
    assert code == 0
    assert shown["run"]["usage"] == {
        "tokens_in": 5000, "tokens_out": 0, "cost_usd": 50.0, "cost_computed": False,
        "unreadable": None,
    }  # fmt: skip


def test_figures_past_what_a_store_can_sum_leave_the_host_up_and_fail_the_budget(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # 2^62 tokens an attempt: two attempts once overflowed every sum, and the loop died.
    reports: dict[str, Reports] = {"r1": [(None, {"tokens_in": 2**62})]}
    reports["r2"] = [(None, {"tokens_in": 10})]
    reporter(ws, reports, "[budgets]\nworkspace_tokens = 1000000\n")
    dispatch(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
        assert cli(ws, "retry", "r1")[0] == 0
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
        reason = run_row(conn, "r1")["state_reason"]
        assert "its usage could not be read (usage.tokens_in " in reason
        assert "cannot be shown to be within the workspace budget of 1,000,000 tokens" in reason
        code, shown = cli(ws, "show", "r1")
        assert code == 0 and shown["run"]["usage"]["tokens_in"] == 0
        assert "1,000,000,000,000" in shown["run"]["usage"]["unreadable"]
        # The host is alive and still works: a run reporting plain figures reaches its end.
        dispatch(store, "r2")
        wait_for_states(conn, {"r2": "failed_contract"}, HANG_GUARD_S, host=host)
        code, listed = cli(ws, "hosts")
        assert code == 0 and [h["state"] for h in listed["hosts"]] == ["live"]
    readable = jarvis("show", "r1", "--workspace", ws)
    assert readable.code == 0 and "usage could not be read: usage.tokens_in" in readable.stdout


@pytest.mark.slow
@pytest.mark.parametrize("budget", ["", "[budgets]\nrun_tokens = 1000000\n"])
def test_an_agent_reporting_2_63_tokens_has_unreadable_usage_that_passes_no_budget(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, tmp_path: Path, budget: str
) -> None:
    from tests.host.test_agent_runs import FAKE, REPO, enqueue

    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "claude"\n'
        f'[workers.claude]\nagent = "claude-code"\ncommand = ["{sys.executable}", "{FAKE}"]\n'
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        "[timeouts]\nno_output_s = 60\n" + budget
    )
    enqueue(store, "r1", "FAKE:usage-overflow")
    wanted = "failed" if budget else "review_requested"
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": wanted}, HANG_GUARD_S, host=host)
    code, shown = cli(ws, "show", "r1")
    unreadable = shown["run"]["usage"]["unreadable"]
    assert code == 0 and f"{USAGE_TOKENS_MAX:,}" in unreadable
    if budget:
        reason = run_row(conn, "r1")["state_reason"]
        assert "its usage could not be read" in reason
        assert "within the run budget of 1,000,000 tokens" in reason
