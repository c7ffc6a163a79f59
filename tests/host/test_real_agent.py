"""A real agent program as a worker, end to end: Claude Code, installed from npm into the
repository's ``.agents/`` (tests/agents/real_agents.py), run by the real host and the runner
against a scripted model server on 127.0.0.1 (tests/agents/scripted_model.py). The agent
itself writes a file in the run's worktree, commits it with its Bash tool and ends with the
completion block, the sha read back from its own tool result; the run reaches review with the
git gates passed, and the tokens the server reported are what Jarvis recorded. A steer sent
while the agent works reaches it at its next turn, by the runner resuming its session.

Nothing leaves the machine: the agent's proxy is the scripted server too, which keeps every
tunnel asked for, and the test checks there was none. Skipped only where npm (or node) is not
installed; a failed install is an error, not a skip.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.intake import submit_dispatch
from core.repos.claims import GIT_GATES
from core.store.sqlite_store import SqliteStore
from tests.agents.real_agents import AgentUnavailable, claude_code
from tests.agents.scripted_model import (
    FILE_NAME,
    FILE_TEXT,
    STEER_REPLY,
    Request,
    Script,
    last_user_text,
    scripted_model,
    steered,
)
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import (
    cli,
    describe_runs,
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_until,
)
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
        # A delivered steer waits for the agent's turn to end, however slow the machine.
        f"[timeouts]\nno_output_s = 120\nsteer_ack_s = {HANG_GUARD_S:g}\n"
    )


def submit(store: SqliteStore, run_id: str) -> None:
    doc = dispatch_doc(run_id, input="Add src/retry.py with a retry helper.",
                       branch=f"jarvis-{run_id}")  # fmt: skip
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def stream_lines(ws: Path, run_id: str) -> list[dict[str, Any]]:
    """The agent's stream-json lines in the run's log (the runner copies them there)."""
    found: list[dict[str, Any]] = []
    for line in (ws / "logs" / run_id / "attempt-1" / "stdout.log").read_text().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            found.append(doc)
    return found


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
    submit(store, "r1")

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


def session_of(request: Request) -> str | None:
    """The session id Claude Code puts in a model call's metadata, if it put one."""
    metadata = request.body.get("metadata")
    raw = metadata.get("user_id") if isinstance(metadata, dict) else None
    try:
        doc = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    found = doc.get("session_id") if isinstance(doc, dict) else None
    return found if isinstance(found, str) else None


#: Two steers: plain words, and words that start as a path would. Claude Code takes a prompt
#: starting with ``/`` as one of its own commands (``Unknown command: /docs``) unless the adapter
#: keeps it from being read as one.
STEERS = [
    "Also name the helper in the module docstring.",
    "/docs first: name the helper in the module docstring.",
]


@pytest.mark.parametrize("steer", STEERS, ids=["words", "slash"])
def test_a_steer_reaches_claude_code_by_resuming_its_session_at_its_next_turn(
    steer: str,
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
    # The agent's first call to the model waits at the server: the agent is mid-turn.
    first = script.hold(0)
    submit(store, "r1")

    def steer_status() -> list[str]:
        return [s["status"] for s in rows(conn, "SELECT status FROM steering_events "
                                                "WHERE run_id = 'r1'")]  # fmt: skip

    with running_host(ws) as host:
        wait_until(first.arrived.is_set, HANG_GUARD_S, "the agent's first model call", host.log)
        code, sent = cli(ws, "steer", "r1", steer)
        assert code == 0, sent
        # The host has written the steer for the worker; only then may the turn end.
        wait_until(lambda: steer_status() == ["delivered"], HANG_GUARD_S,
                   "the steer's delivery", lambda: f"{steer_status()}\n{host.log()}")  # fmt: skip
        first.released.set()
        wait_for_states(conn, {"r1": ENDS}, HANG_GUARD_S, host=host)
        assert run_row(conn, "r1")["state"] == "review_requested", describe_runs(conn, host)

    # Three calls for the task, then one for the steer, and none of the first three saw it:
    # the steer went in at the turn boundary, not into the turn under way.
    main = script.main_requests
    assert len(main) == 4, [(r.path, last_user_text(r.body)[:80]) for r in script.requests]
    assert not any(steer in json.dumps(r.body) for r in main[:3])
    assert steered(main[3].body) and steer in last_user_text(main[3].body), main[3].body
    assert script.tunnels == []
    # The receipt went acked, and the runner said so in a progress event.
    assert steer_status() == ["acked"]
    found = rows(conn, "SELECT phase, summary FROM progress_events WHERE run_id = 'r1' "
                       "AND phase = 'steering'")  # fmt: skip
    assert [f["summary"].endswith(f"acknowledged: {steer}") for f in found] == [True], found
    # The second turn resumed the first one's session, not a new one: the agent says so, and
    # so do its calls to the model.
    sessions = [d["session_id"] for d in stream_lines(ws, "r1") if d.get("type") == "system"
                and d.get("subtype") == "init"]  # fmt: skip
    assert len(sessions) == 2 and sessions[0] == sessions[1], sessions
    assert {session_of(r) for r in main} == {sessions[0]}
    # The run's completion is the resumed turn's own answer, and the git gates passed.
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    results = [d for d in stream_lines(ws, "r1") if d.get("type") == "result"]
    assert len(results) == 2 and results[1]["result"].startswith(STEER_REPLY), results
    out = (ws / "logs" / "r1" / "attempt-1" / "stdout.log").read_text()
    completion = json.loads(out.rsplit("<completion>", 1)[1].split("</completion>", 1)[0])
    head = run_git(origin, "rev-parse", "jarvis-r1")
    assert completion["commit_sha"] == head and "derived" not in completion, completion
    # Both turns' tokens were kept: what the server reported for every call.
    code, shown = cli(ws, "show", "r1")
    assert code == 0, shown
    usage = shown["run"]["usage"]
    assert (usage["tokens_in"], usage["tokens_out"]) == script.tokens, usage
    # Each turn's process priced its own calls; the run's cost is both.
    costs = [r["total_cost_usd"] for r in results]
    assert all(c > 0 for c in costs) and usage["cost_usd"] == pytest.approx(sum(costs)), usage
