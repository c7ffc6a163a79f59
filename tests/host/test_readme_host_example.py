"""The README's host example, end to end: it ends as the README says.

    jarvis host --workspace ./ws &
    jarvis dispatch sample_runs/dispatches/valid-backend-fix.json --workspace ./ws
    jarvis runs --workspace ./ws                        # queued → running → review_requested

The real host with its default configuration (the simulated worker at its default pace) and the
real command line. A NanoClaw dispatch names its own acceptance tests, so it gets no universal
checklist unless the workspace asks; when it does, the simulated worker's change satisfies it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.repos.claims import GIT_GATES
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import cli, run_row, running_host, wait_until

pytestmark = pytest.mark.slow

SAMPLE = (
    Path(__file__).resolve().parents[2] / "sample_runs" / "dispatches" / "valid-backend-fix.json"
)
RUN = "task-20260222-014"
#: The simulated worker's own default pace (README users set nothing).
DEFAULT_INTERVAL = "100,500"


def _state(ws: Path) -> str | None:
    code, listed = cli(ws, "runs")
    assert code == 0, listed
    return next((r["state"] for r in listed["runs"] if r["run_id"] == RUN), None)


def _run_the_example(ws: Path) -> None:
    with running_host(ws, interval=DEFAULT_INTERVAL) as host:
        code, done = cli(ws, "dispatch", str(SAMPLE))
        assert (code, done["outcome"]) == (0, "enqueued"), done
        wait_until(
            lambda: _state(ws) in ("review_requested", "failed", "failed_contract"),
            90,
            "the run to end",
            host.log,
        )


def test_the_readme_host_example_ends_review_requested(ws: Path) -> None:
    _run_the_example(ws)
    assert _state(ws) == "review_requested"
    # No repository is configured: the README says the run is unverified, not passed.
    code, shown = cli(ws, "show", RUN)
    assert code == 0 and shown["run"]["unverified"] == "no repository in the run's checkout"
    code, shown = cli(ws, "criteria", RUN)
    assert code == 0
    assert (shown["universal_criteria"], shown["criteria"]) == (False, [])


def test_with_the_workspace_checklist_on_the_simulated_change_passes_it(ws: Path) -> None:
    (ws / "jarvis.toml").write_text("[criteria]\nuniversal = true\n")
    _run_the_example(ws)
    code, shown = cli(ws, "criteria", RUN)
    assert code == 0 and shown["universal_criteria"] is True
    assert [c["type"] for c in shown["criteria"]] == [
        "test_pass", "no_lint_errors", "changelog_updated", "backlog_updated"
    ]  # fmt: skip
    assert _state(ws) == "review_requested", _describe(ws)
    checkout = ws / "checkouts" / RUN
    # The test file the worker changed is a test, not a changelog entry.
    assert (checkout / "tests" / "test_retry.py").read_text().startswith('"""Simulated change')
    assert "- [x]" in (checkout / "BACKLOG.md").read_text()


def _describe(ws: Path) -> str:
    conn = sqlite3.connect(ws / "jarvis.db")
    try:
        row = conn.execute("SELECT results_json FROM verification_results").fetchall()
        return f"{run_row(_row_factory(conn), RUN)['state_reason']}\n{row}"
    finally:
        conn.close()


def _row_factory(conn: sqlite3.Connection) -> sqlite3.Connection:
    conn.row_factory = sqlite3.Row
    return conn


def test_the_readme_real_repository_example_merges_on_approve(ws: Path, tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "fleet-engine.git", bare=True)
    code, added = cli(ws, "repo", "add", "acme-labs/fleet-engine", str(bare))
    assert code == 0, added
    _run_the_example(ws)
    assert _state(ws) == "review_requested", _describe(ws)
    code, shown = cli(ws, "show", RUN)
    assert shown["run"]["unverified"] is None
    git_gates = [g for g in shown["run"]["gates"] if g["name"] in GIT_GATES]
    assert [g["status"] for g in git_gates] == ["passed"] * len(GIT_GATES), git_gates
    with running_host(ws):  # the host holding the repository merges
        code, approved = cli(ws, "approve", RUN, "--wait")
    assert code == 0 and approved["merge"]["done"] == "fast_forward", approved
    assert run_git(bare, "rev-parse", "main") == run_git(bare, "rev-parse", "jarvis-retry-counter")


def test_the_readme_many_hosts_example_shows_the_host_with_its_lanes(ws: Path, pg_url: str) -> None:
    """jarvis host --db URL --name build-01 --lanes jarvis-worker-1,jarvis-worker-2
    jarvis hosts --db URL      # every host, its lanes, heartbeat, lease"""
    args = ["--db", pg_url, "--name", "build-01", "--lanes", "jarvis-worker-1,jarvis-worker-2"]
    with running_host(ws, extra_args=args):
        code, listed = cli(ws, "hosts", "--db", pg_url)
        assert code == 0, listed
        (host,) = listed["hosts"]
        assert (host["name"], host["state"]) == ("build-01", "live")
        assert host["lanes"] == ["jarvis-worker-1", "jarvis-worker-2"]
        code, done = cli(ws, "dispatch", str(SAMPLE), "--db", pg_url)
        assert (code, done["outcome"]) == (0, "enqueued"), done
        wait_until(
            lambda: cli(ws, "runs", "--db", pg_url)[1]["runs"][0]["state"] == "review_requested",
            90,
            "the run to reach review on the PostgreSQL store",
        )
    assert not (ws / "jarvis.db").exists()
