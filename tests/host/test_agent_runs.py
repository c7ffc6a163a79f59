"""A coding agent as a worker, end to end: the real host, the runner and the Claude Code adapter,
with a stand-in ``claude`` (tests/agents/fake_claude.py) that really edits and commits in the
run's worktree and reports it in Claude Code's stream-json. Its progress becomes events, its
completion is gated against git, its tokens and cost are kept, a steer reaches it at its next
turn, and an agent that prints no completion gets one composed from git, marked derived."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from core.intake import submit_dispatch
from core.repos.claims import GIT_GATES
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import cli, rows, run_row, running_host, wait_for_states, wait_until
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

FAKE = Path(__file__).parents[1] / "agents" / "fake_claude.py"
REPO = "acme-labs/fleet-engine"


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)


def configure(ws: Path, origin: Path) -> None:
    # The test reads what the fake agent records, in a folder its sandbox lets it write.
    (ws / "records").mkdir(parents=True, exist_ok=True)
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "claude"\nconcurrency = 2\n'
        f'[workers.claude]\nagent = "claude-code"\ncommand = ["{sys.executable}", "{FAKE}"]\n'
        'model = "fake-model"\nargs = ["--permission-mode=acceptEdits"]\nwritable = ["records"]\n'
        f'env = {{ FAKE_ARGV_FILE = "{ws / "records" / "argv.json"}" }}\n'
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        "[timeouts]\nno_output_s = 60\nsteer_ack_s = 60\n"
    )


def enqueue(store: SqliteStore, run_id: str, mode: str = "") -> None:
    doc = dispatch_doc(run_id, input=f"Retry twice in src/retry.py. {mode}".strip(),
                       branch=f"jarvis-{run_id}")  # fmt: skip
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def progress(conn: sqlite3.Connection, run_id: str) -> list[tuple[str, str, str | None]]:
    found = rows(conn, "SELECT phase, summary, tool_used FROM progress_events WHERE run_id = ? "
                       "ORDER BY attempt, seq", [run_id])  # fmt: skip
    return [(r["phase"], r["summary"], r["tool_used"]) for r in found]


def test_an_agent_run_reaches_review_with_git_checked_gates_and_its_usage(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    head = run_git(origin, "rev-parse", "jarvis-r1")
    assert run_row(conn, "r1")["commit_sha"] == head
    phases = [(phase, tool) for phase, _, tool in progress(conn, "r1")]
    assert ("editing", "Edit") in phases and ("committing", "Bash") in phases
    code, shown = cli(ws, "show", "r1")
    assert shown["run"]["usage"] == {
        "tokens_in": 2700, "tokens_out": 400, "cost_usd": 0.0123, "cost_computed": False,
        "unreadable": None,
    }  # fmt: skip
    # The profile's model, args and environment reached the agent; the prompt came last.
    argv = json.loads((ws / "records" / "argv.json").read_text())
    assert "--model=fake-model" in argv and "--permission-mode=acceptEdits" in argv
    assert argv[-2] == "--" and "Retry twice in src/retry.py." in argv[-1]


def test_an_agent_that_prints_no_completion_gets_one_composed_from_git(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1", "FAKE:silent")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
    out = (ws / "logs" / "r1" / "attempt-1" / "stdout.log").read_text()
    block = out.rsplit("<completion>", 1)[1].split("</completion>", 1)[0]
    composed = json.loads(block)
    assert composed["commit_sha"] == run_git(origin, "rev-parse", "jarvis-r1")
    assert composed["files_changed"] == ["src/retry.py"]
    assert "commit_sha" in composed["derived"] and "files_changed" in composed["derived"]


def test_garbage_from_the_agent_is_reported_and_the_run_goes_on(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1", "FAKE:garbage")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
    errors = [summary for phase, summary, _ in progress(conn, "r1") if phase == "error"]
    assert errors, progress(conn, "r1")
    assert not any("\x1b" in summary for _, summary, _ in progress(conn, "r1"))


def test_a_steer_reaches_the_agent_at_its_next_turn(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1", "FAKE:await-steer")
    with running_host(ws) as host:
        wait_until(lambda: progress(conn, "r1"), HANG_GUARD_S, "the agent to start", host.log)
        code, sent = cli(ws, "steer", "r1", "also update the changelog")
        assert code == 0, sent
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
    steers = rows(conn, "SELECT status FROM steering_events WHERE run_id = 'r1'")
    assert [s["status"] for s in steers] == ["acked"]
    summaries = [summary for _, summary, _ in progress(conn, "r1")]
    assert any("acknowledged: also update the changelog" in s for s in summaries)
    code, shown = cli(ws, "show", "r1")
    # The resumed turn's tokens are added to the first's.
    assert shown["run"]["usage"]["tokens_in"] == 2700 + 50


def test_a_100_mib_line_is_skipped_unread_and_the_run_goes_on(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1", "FAKE:hugeline")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
    errors = [s for phase, s, _ in progress(conn, "r1") if phase == "error"]
    assert errors == ["skipped an output line over 1,048,576 bytes"]
    # The log holds what was read, not the line: the runner never held it.
    assert (ws / "logs" / "r1" / "attempt-1" / "stdout.log").stat().st_size < 1024 * 1024


def test_an_agent_that_never_answers_ends_its_run_and_the_host_lives(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    toml = (ws / "jarvis.toml").read_text().replace("no_output_s = 60", "no_output_s = 2")
    (ws / "jarvis.toml").write_text(toml)
    enqueue(store, "r1", "FAKE:hang")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
        assert run_row(conn, "r1")["state_reason"] == "no output for 2 s"
        assert host.proc.poll() is None
