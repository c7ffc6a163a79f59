"""A real agent program as a worker, end to end: Claude Code, installed from npm into the
repository's ``.agents/`` (tests/agents/real_agents.py), run by the real host and the runner
against a scripted model server on 127.0.0.1 (tests/agents/scripted_model.py). The agent
itself writes a file in the run's worktree, commits it with its Bash tool and ends with the
completion block, the sha read back from its own tool result; the run reaches review with the
git gates passed, and the tokens the server reported are what Jarvis recorded.

Nothing leaves the machine: the agent's proxy is the scripted server too, which keeps every
tunnel asked for, and the test checks there was none. Skipped only where npm (or node) is not
installed; a failed install is an error, not a skip.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.intake import submit_dispatch
from core.repos.claims import GIT_GATES
from core.store.sqlite_store import SqliteStore
from tests.agents.real_agents import AgentUnavailable, claude_code
from tests.agents.scripted_model import FILE_NAME, FILE_TEXT, Script, scripted_model
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import cli, describe_runs, rows, run_row, running_host, wait_for_states
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

REPO = "acme-labs/fleet-engine"
ENDS = {"review_requested", "failed_contract", "failed"}


@pytest.fixture(scope="session")
def claude() -> Path:
    try:
        return claude_code()
    except AgentUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def model() -> Iterator[tuple[str, Script]]:
    with scripted_model() as served:
        yield served


def configure(ws: Path, origin: Path, claude: Path, url: str) -> None:
    home = ws / "agent-home"
    home.mkdir()
    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "test-key",
        # No update checks, telemetry, error reports or other calls home; and a home of its
        # own, so no user's settings or login are read.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        # Anything that would still leave the machine goes to the scripted server, which
        # keeps it.
        "HTTPS_PROXY": url,
        "HTTP_PROXY": url,
        "NO_PROXY": "127.0.0.1,localhost",
        # The agent's commits need an author.
        "GIT_AUTHOR_NAME": "Scripted Agent",
        "GIT_AUTHOR_EMAIL": "agent@example.test",
        "GIT_COMMITTER_NAME": "Scripted Agent",
        "GIT_COMMITTER_EMAIL": "agent@example.test",
    }
    env_toml = ", ".join(f'{name} = "{value}"' for name, value in env.items())
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "claude"\nconcurrency = 1\n'
        f'[workers.claude]\nagent = "claude-code"\ncommand = ["{claude}"]\n'
        # Edits without asking; Bash allowed by name (a root user may not bypass permissions).
        'args = ["--permission-mode=acceptEdits", "--allowedTools=Bash"]\n'
        f"env = {{ {env_toml} }}\n"
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        "[timeouts]\nno_output_s = 120\n"
    )


def test_claude_code_edits_commits_and_reaches_review_against_a_scripted_model(
    ws: Path,
    store: SqliteStore,
    conn: sqlite3.Connection,
    tmp_path: Path,
    claude: Path,
    model: tuple[str, Script],
) -> None:
    url, script = model
    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    configure(ws, origin, claude, url)
    doc = dispatch_doc("r1", input="Add src/retry.py with a retry helper.", branch="jarvis-r1")
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()

    with running_host(ws) as host:
        # Any end, so a run that fails says why at once; then it must be review.
        wait_for_states(conn, {"r1": ENDS}, HANG_GUARD_S, host=host)
        assert run_row(conn, "r1")["state"] == "review_requested", describe_runs(conn, host)

    # The model was asked three times (write, commit, finish), and nothing else left.
    assert len(script.main_requests) == 3, [r.path for r in script.requests]
    assert script.tunnels == []
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    # The agent's commit is on the run's branch in the configured repository, with its file.
    head = run_git(origin, "rev-parse", "jarvis-r1")
    assert run_row(conn, "r1")["commit_sha"] == head
    assert run_git(origin, "show", f"jarvis-r1:{FILE_NAME}") == FILE_TEXT.strip()
    assert run_git(origin, "log", "-1", "--format=%an", "jarvis-r1") == "Scripted Agent"
    found = rows(conn, "SELECT phase, tool_used FROM progress_events WHERE run_id = 'r1' "
                       "ORDER BY attempt, seq")  # fmt: skip
    phases = [(p["phase"], p["tool_used"]) for p in found]
    assert ("editing", "Write") in phases and ("committing", "Bash") in phases, phases
    # The completion was the agent's own (nothing derived), and its tokens were kept.
    out = (ws / "logs" / "r1" / "attempt-1" / "stdout.log").read_text()
    assert '"claude_code_version"' in out
    completion = json.loads(out.rsplit("<completion>", 1)[1].split("</completion>", 1)[0])
    assert completion["commit_sha"] == head and "derived" not in completion, completion
    code, shown = cli(ws, "show", "r1")
    assert code == 0, shown
    tokens_in, tokens_out = script.tokens
    usage = shown["run"]["usage"]
    assert (usage["tokens_in"], usage["tokens_out"]) == (tokens_in, tokens_out), usage
    assert usage["cost_usd"] > 0  # priced by the agent from its own table
