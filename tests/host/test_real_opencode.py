"""OpenCode itself as a run's worker, end to end: the real program, installed from npm into the
repository's ``.agents/`` (tests/agents/real_agents.py), run by the real host and the runner
against a scripted chat-completions server on 127.0.0.1 (tests/agents/scripted_chat.py), with
the profile docs/agents.md shows. OpenCode writes a file in the run's checkout, runs a command
that fails, commits with its bash tool and ends with the completion block, the sha read back
from its own tool result; the run reaches review with the gates passed, every token the server
served is recorded, and a steer sent while it works reaches its next turn.

Nothing leaves the machine: the program's proxy is the scripted server, which refuses every
tunnel. Skipped only where npm (or node) is missing; a failed install is an error.
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
from tests.agents.documented import documented_profile
from tests.agents.real_agents import AgentUnavailable, opencode
from tests.agents.scripted_chat import (
    FAILING_COMMAND,
    FILE_NAME,
    FILE_TEXT,
    STEER_REPLY,
    Script,
    last_user_text,
    scripted_chat,
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
#: What OpenCode tries to reach with no switch to stop it: the registry, for the plugin package
#: it installs into its configuration folder in the background. Refused, it goes on without.
REFUSED_ALLOWED = {"CONNECT registry.npmjs.org:443"}


@pytest.fixture(scope="session")
def program() -> Path:
    try:
        return opencode()
    except AgentUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def model() -> Iterator[tuple[str, Script]]:
    with scripted_chat() as served:
        yield served


def configure(ws: Path, origin: Path, program: Path, url: str) -> None:
    """The workspace's jarvis.toml: the profile docs/agents.md shows, and the repository."""
    home = ws / "agent-home"
    home.mkdir()
    profile = documented_profile("opencode", program=program, server=url.rsplit("/v1", 1)[0],
                                 home=home)  # fmt: skip
    (ws / "jarvis.toml").write_text(
        profile
        + '[workers]\ndefault = "opencode"\nconcurrency = 1\n'
        # The test's home, which its environment names, is the agent's to write inside the
        # sandbox too (docs/agents.md, Confinement).
        + f'writable = ["{home}"]\n'
        + f'[repos."{REPO}"]\npath = "{origin}"\n'
        # A delivered steer waits for the agent's turn to end, however slow the machine.
        + f"[timeouts]\nno_output_s = 120\nsteer_ack_s = {HANG_GUARD_S:g}\n"
    )


def submit(store: SqliteStore, run_id: str) -> None:
    doc = dispatch_doc(run_id, input="Add src/retry.py with a retry helper.",
                       branch=f"jarvis-{run_id}")  # fmt: skip
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def stream_lines(ws: Path, run_id: str) -> list[dict[str, Any]]:
    """OpenCode's JSON lines in the run's log (the runner copies them there)."""
    found: list[dict[str, Any]] = []
    for line in (ws / "logs" / run_id / "attempt-1" / "stdout.log").read_text().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            found.append(doc)
    return found


def check_review(ws: Path, conn: sqlite3.Connection, origin: Path, script: Script) -> None:
    """What every run here ends with: review, the gates passed, the agent's own completion,
    nothing left outside, and the tokens served all recorded."""
    assert set(script.tunnels) <= REFUSED_ALLOWED, script.tunnels
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    head = run_git(origin, "rev-parse", "jarvis-r1")
    assert run_row(conn, "r1")["commit_sha"] == head
    assert run_git(origin, "show", f"jarvis-r1:{FILE_NAME}") == FILE_TEXT.strip()
    assert run_git(origin, "log", "-1", "--format=%an", "jarvis-r1") == "Scripted Agent"
    assert run_git(origin, "diff", "--name-only", "main", "jarvis-r1") == FILE_NAME
    out = (ws / "logs" / "r1" / "attempt-1" / "stdout.log").read_text()
    completion = json.loads(out.rsplit("<completion>", 1)[1].split("</completion>", 1)[0])
    assert completion["commit_sha"] == head and "derived" not in completion, completion
    # Every call OpenCode made reported its usage, and Jarvis recorded all of it. It asked for
    # no session title: that call's tokens it reports nowhere.
    assert script.unreported == [] and script.side_calls == []
    code, shown = cli(ws, "show", "r1")
    assert code == 0, shown
    usage = shown["run"]["usage"]
    assert (usage["tokens_in"], usage["tokens_out"]) == script.tokens, (usage, script.tokens)
    assert not usage.get("cost_usd")  # a model its configuration gives no price: none reported


def test_opencode_edits_commits_and_reaches_review_against_a_scripted_model(
    ws: Path,
    store: SqliteStore,
    conn: sqlite3.Connection,
    tmp_path: Path,
    program: Path,
    model: tuple[str, Script],
) -> None:
    url, script = model
    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    configure(ws, origin, program, url)
    submit(store, "r1")

    with running_host(ws) as host:
        wait_for_states(conn, {"r1": ENDS}, HANG_GUARD_S, host=host)
        assert run_row(conn, "r1")["state"] == "review_requested", describe_runs(conn, host)

    # Four calls: write, the failing command, the commit, the answer.
    assert len(script.main_calls) == 4, [c.path for c in script.calls]
    check_review(ws, conn, origin, script)
    # The prompt reached the model as Jarvis built it: no quote escaped.
    prompt = last_user_text(script.main_calls[0].body)
    assert '"run_id": "r1"' in prompt and '\\"' not in prompt, prompt[-400:]
    found = rows(conn, "SELECT phase, summary, tool_used FROM progress_events "
                       "WHERE run_id = 'r1' ORDER BY attempt, seq")  # fmt: skip
    phases = [(p["phase"], p["tool_used"]) for p in found]
    assert ("editing", "write") in phases and ("committing", "bash") in phases, phases
    failed = [p["summary"] for p in found if p["summary"].startswith("failed: ")]
    assert failed == [f"failed: run: {FAILING_COMMAND}: exit code 128: fatal: "
                      "'refs/heads/no-such-branch' - not a valid ref"], found  # fmt: skip


def test_a_steer_reaches_opencode_by_resuming_its_session_at_its_next_turn(
    ws: Path,
    store: SqliteStore,
    conn: sqlite3.Connection,
    tmp_path: Path,
    program: Path,
    model: tuple[str, Script],
) -> None:
    url, script = model
    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    configure(ws, origin, program, url)
    first = script.hold(0)  # the agent's first call waits at the server: it is mid-turn
    submit(store, "r1")
    steer = 'Also name the helper in the "retry" module docstring.'

    def steer_status() -> list[str]:
        return [s["status"] for s in rows(conn, "SELECT status FROM steering_events "
                                                "WHERE run_id = 'r1'")]  # fmt: skip

    with running_host(ws) as host:
        wait_until(first.arrived.is_set, HANG_GUARD_S, "the agent's first model call", host.log)
        code, sent = cli(ws, "steer", "r1", steer)
        assert code == 0, sent
        wait_until(lambda: steer_status() == ["delivered"], HANG_GUARD_S,
                   "the steer's delivery", lambda: f"{steer_status()}\n{host.log()}")  # fmt: skip
        first.released.set()
        wait_for_states(conn, {"r1": ENDS}, HANG_GUARD_S, host=host)
        assert run_row(conn, "r1")["state"] == "review_requested", describe_runs(conn, host)

    # Four calls for the task, then one for the steer, which none of the four saw.
    main = script.main_calls
    assert len(main) == 5, [last_user_text(c.body)[:80] for c in main]
    assert not any(steer in json.dumps(c.body) for c in main[:4])
    assert last_user_text(main[4].body) == steer  # byte for byte, its quotes too
    assert steer_status() == ["acked"]
    # The second turn resumed the first one's session.
    sessions = {d["sessionID"] for d in stream_lines(ws, "r1") if "sessionID" in d}
    assert len(sessions) == 1, sessions
    texts = [d["part"]["text"] for d in stream_lines(ws, "r1") if d.get("type") == "text"]
    assert texts[-1].startswith(STEER_REPLY), texts
    check_review(ws, conn, origin, script)
