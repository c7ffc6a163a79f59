"""aider itself as a run's worker, end to end: the real program, installed from PyPI into a
virtual environment under the repository's ``.agents/`` (tests/agents/real_agents.py), run by
the real host and the runner against a scripted chat-completions server on 127.0.0.1
(tests/agents/scripted_chat.py), with the profile docs/agents.md shows. aider applies the
reply's edit and commits by itself (its commit message is a model call of its own); the run
reaches review with the gates passed, nothing of aider's own left in the checkout, every token
the server served recorded, and a steer sent while it works reaches its next turn, a new process
that restores its chat.

Nothing leaves the machine: the program's proxy is the scripted server, which refuses every
tunnel. Skipped only where pip (or venv) is missing; a failed install is an error.
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
from tests.agents.documented import documented_profile
from tests.agents.real_agents import AgentUnavailable, aider
from tests.agents.scripted_chat import (
    FILE_NAME,
    FILE_TEXT,
    STEERED_TEXT,
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
#: What aider and its model library try to reach with no switch to stop them: the public price
#: list, at start. Refused, they go on without.
REFUSED_ALLOWED = {"CONNECT raw.githubusercontent.com:443"}


@pytest.fixture(scope="session")
def program() -> Path:
    try:
        return aider()
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
    profile = documented_profile("aider", program=program, server=url.rsplit("/v1", 1)[0],
                                 home=home)  # fmt: skip
    (ws / "jarvis.toml").write_text(
        profile
        + '[workers]\ndefault = "aider"\nconcurrency = 1\n'
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


def check_review(
    ws: Path, conn: sqlite3.Connection, origin: Path, script: Script, text: str
) -> None:
    """What every run here ends with: review, the gates passed on aider's own commit, nothing
    of aider's left in the branch, and every token served recorded, its commit messages' too."""
    assert set(script.tunnels) <= REFUSED_ALLOWED, script.tunnels
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    head = run_git(origin, "rev-parse", "jarvis-r1")
    assert run_row(conn, "r1")["commit_sha"] == head
    assert run_git(origin, "show", f"jarvis-r1:{FILE_NAME}") == text.strip()
    assert run_git(origin, "log", "-1", "--format=%an", "jarvis-r1").startswith("Scripted Agent")
    # Only the file: no .gitignore edit, no history or cache of aider's.
    assert run_git(origin, "diff", "--name-only", "main", "jarvis-r1") == FILE_NAME
    # aider cannot know the sha of the commit it makes after replying: Jarvis composed the
    # completion from git.
    out = (ws / "logs" / "r1" / "attempt-1" / "stdout.log").read_text()
    completion = json.loads(out.rsplit("<completion>", 1)[1].split("</completion>", 1)[0])
    assert completion["commit_sha"] == head, completion
    assert script.side_calls, "aider asked for no commit message"
    assert script.unreported == []
    code, shown = cli(ws, "show", "r1")
    assert code == 0, shown
    usage = shown["run"]["usage"]
    assert (usage["tokens_in"], usage["tokens_out"]) == script.tokens, (usage, script.tokens)
    assert not usage.get("cost_usd")  # the meter knows no prices, nor aider this model's


def test_aider_edits_commits_and_reaches_review_against_a_scripted_model(
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

    # One reply with the edit, and one commit message.
    assert (len(script.main_calls), len(script.side_calls)) == (1, 1), script.calls
    check_review(ws, conn, origin, script, FILE_TEXT)
    found = rows(conn, "SELECT phase, summary FROM progress_events WHERE run_id = 'r1' "
                       "ORDER BY attempt, seq")  # fmt: skip
    phases = [p["phase"] for p in found]
    assert "editing" in phases and "committing" in phases, found


def test_a_steer_reaches_aider_as_a_new_turn_that_restores_its_chat(
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
    steer = "Also name the helper in the module docstring."

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

    assert steer_status() == ["acked"]
    main = script.main_calls
    assert not any(steer in json.dumps(c.body) for c in main[:1])
    # The next turn restored the chat: the task and aider's reply come before the steer.
    steered = [c for c in main if steer in last_user_text(c.body)]
    assert steered, [last_user_text(c.body)[:80] for c in main]
    history = json.dumps(steered[0].body["messages"][:-1])
    assert "Add src/retry.py with a retry helper." in history and "I'll add the helper." in history
    # Each turn committed, with a commit message of its own.
    assert len(script.side_calls) == 2, script.calls
    assert run_git(origin, "rev-list", "--count", "main..jarvis-r1") == "2"
    check_review(ws, conn, origin, script, STEERED_TEXT)
