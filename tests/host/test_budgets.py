"""Tokens and cost, as an agent reports them with its progress, kept per attempt and summed per
run; a run that crosses its budget is interrupted, then stopped, and ends failed with
budget_exceeded; a workspace over its budget starts nothing new."""

from __future__ import annotations

import re
import sqlite3
import sys
from pathlib import Path

from core.store.sqlite_store import SqliteStore
from tests.cli.conftest import jarvis
from tests.host.hostkit import (
    cli,
    dispatch,
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_for_sweeps,
)
from tests.processes import HANG_GUARD_S

#: A worker that spends: each event reports 1,000 more tokens and 1 cent more, until stopped.
#: It notes SIGINT (an agent would wrap up) and leaves on it.
SPENDER = f"""#!{sys.executable}
import os, signal, sys, time
from pathlib import Path
from core.ipc.worker_env import iso_ms, write_json_atomic
progress = Path(os.environ["JARVIS_PROGRESS_DIR"])
stop = []
signal.signal(signal.SIGINT, lambda s, f: stop.append(s))
# SPEND_EVENTS bounds the first attempt only: a later one spends until it is stopped.
first = os.environ.get("JARVIS_ATTEMPT", "1") == "1"
limit = int(os.environ.get("SPEND_EVENTS", "1000000")) if first else 1000000
for seq in range(1, limit + 1):
    if stop:
        print("interrupted: wrapping up", flush=True)
        sys.exit(130)
    now = time.time_ns() // 1_000_000
    write_json_atomic(progress / f"{{now}}-{{seq}}.json", {{
        "kind": "worker_progress", "run_id": os.environ["JARVIS_RUN_ID"],
        "group_folder": os.environ["JARVIS_LANE"], "timestamp": iso_ms(now),
        "phase": "editing", "summary": f"turn {{seq}}", "seq": seq,
        "usage": {{"tokens_in": 800 * seq, "tokens_out": 200 * seq, "cost_usd": 0.01 * seq}},
    }})
    time.sleep(0.02)
print("<completion>{{}}</completion>", flush=True)
"""


def spender(ws: Path, config: str, events: int | None = None) -> None:
    (ws / "bin").mkdir(exist_ok=True)
    program = ws / "bin" / "spender"
    program.write_text(SPENDER)
    program.chmod(0o755)
    env = f'env = {{ SPEND_EVENTS = "{events}" }}\n' if events else ""
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "spender"\nconcurrency = 2\n'
        f'[workers.spender]\nagent = "command"\ncommand = ["./bin/spender"]\n{env}'
        "[timeouts]\nno_output_s = 60\n" + config
    )


def test_a_run_over_its_token_budget_is_interrupted_and_fails(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    spender(ws, "[budgets]\nrun_tokens = 5000\ninterrupt_grace_s = 30\n")
    dispatch(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
    reason = run_row(conn, "r1")["state_reason"]
    assert reason.startswith("budget_exceeded: stopped, ")
    assert "over the run budget of 5,000" in reason
    (failure,) = rows(conn, "SELECT error_class, error_code FROM failures WHERE run_id = 'r1'")
    assert (failure["error_class"], failure["error_code"]) == ("cost_rejected", "BUDGET_EXCEEDED")
    # SIGINT came first, and the worker wrapped up on it (well within the 30 s grace).
    log = ws / "logs" / "r1" / "attempt-1" / "stdout.log"
    assert "interrupted: wrapping up" in log.read_text()
    code, shown = cli(ws, "show", "r1")
    usage = shown["run"]["usage"]
    assert code == 0 and usage["tokens_in"] + usage["tokens_out"] > 5000
    assert usage["tokens_in"] == 4 * usage["tokens_out"]  # the latest figures, not a sum of them
    readable = jarvis("show", "r1", "--workspace", ws)
    assert "used  " in readable.stdout and " out · $0." in readable.stdout


def test_usage_is_summed_over_attempts_and_a_workspace_over_budget_starts_nothing(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # Three events a run: $0.03 an attempt; the workspace may spend $0.045 in all.
    spender(ws, "[budgets]\nworkspace_cost_usd = 0.045\n", events=3)
    dispatch(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed_contract"}, HANG_GUARD_S, host=host)
        code, shown = cli(ws, "show", "r1")
        assert shown["run"]["usage"] == {
            "tokens_in": 2400, "tokens_out": 600, "cost_usd": 0.03, "cost_computed": False,
            "unreadable": None,
        }  # fmt: skip
        assert cli(ws, "retry", "r1")[0] == 0
        # The second attempt crosses the workspace's budget at its second event: it is stopped
        # then, or a few events later when they came before the host's next look (one every
        # 20 ms; the budget is looked at between batches).
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
        reason = run_row(conn, "r1")["state_reason"]
        spent = re.search(r"the workspace has spent \$(0\.\d\d)00, over its budget", reason)
        assert spent is not None, reason
        code, shown = cli(ws, "show", "r1")
        usage = shown["run"]["usage"]
        assert usage["tokens_in"] - 2400 == 4 * (usage["tokens_out"] - 600) > 0
        # Counted once each: what it had spent when stopped, and no more than it spent in all.
        assert 0.05 <= float(spent[1]) <= usage["cost_usd"] + 1e-9
        dispatch(store, "r2")
        wait_for_sweeps(ws, 2, host)  # the scheduler has had its chances at r2
        assert run_row(conn, "r2")["state"] == "queued"
        assert "over its budget of $0.045: no new run starts" in host.log()


def test_a_run_over_its_wall_time_budget_is_interrupted_and_fails(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # The spender never ends by itself; only its one-second budget stops it.
    spender(ws, "[budgets]\nrun_wall_s = 1\ninterrupt_grace_s = 30\n")
    dispatch(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
    reason = run_row(conn, "r1")["state_reason"]
    assert reason.startswith("budget_exceeded: stopped, running for ")
    assert reason.endswith("over the run budget of 1 s")
    log = ws / "logs" / "r1" / "attempt-1" / "stdout.log"
    assert "interrupted: wrapping up" in log.read_text()  # SIGINT first, as for tokens


def test_a_workspace_over_its_wall_time_stops_its_runs_and_starts_nothing(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # Two spenders that never end by themselves work side by side; the workspace may have its
    # workers work 2 s in all, so the pair crosses it after about 1 s each.
    spender(ws, "[budgets]\nworkspace_wall_s = 2\ninterrupt_grace_s = 30\n")
    dispatch(store, "r1")
    dispatch(store, "r2")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed", "r2": "failed"}, HANG_GUARD_S, host=host)
        for run_id in ("r1", "r2"):
            run = run_row(conn, run_id)
            assert run["state_reason"].startswith("budget_exceeded: stopped, the workspace's ")
            assert run["state_reason"].endswith("over its budget of 2 s")
            assert run["worked_s"] > 0
            log = ws / "logs" / run_id / "attempt-1" / "stdout.log"
            assert "interrupted: wrapping up" in log.read_text()
        assert sum(run_row(conn, r)["worked_s"] for r in ("r1", "r2")) > 2
        dispatch(store, "r3")
        wait_for_sweeps(ws, 2, host)
        assert run_row(conn, "r3")["state"] == "queued"
        assert "over its budget of 2 s: no new run starts" in host.log()
