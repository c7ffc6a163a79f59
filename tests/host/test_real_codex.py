"""Codex itself as a worker, end to end: the real program (0.171.0, installed from npm into the
repository's ``.agents/`` by tests/agents/real_agents.py), run by the real host and the runner
against a scripted Responses API server on 127.0.0.1 (tests/agents/scripted_responses.py), with
the profile docs/agents.md shows: the agent, its program, its model and the settings pointing it
at its model service. Every flag it needs to work unattended is Jarvis's to add.

The agent applies a patch in the run's worktree, runs a command that fails, commits with its
shell tool and ends with the completion block, the sha read back from its own tool output; the
run reaches review with the git gates passed, the tokens the server served are what Jarvis
recorded, and approving merges the branch. A steer sent while the agent works reaches it at its
next turn, by the runner resuming its thread, and the resumed turn's tokens count once.

Nothing leaves the machine: the agent's proxy is the scripted server too, which keeps every
tunnel asked for, and the test checks there was none. Skipped only where npm is not installed;
a failed install is an error, not a skip.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.agents.prompt import build_prompt
from core.agents.unattended import codex_args
from core.criteria import run_criteria
from core.intake import submit_dispatch
from core.repos.claims import GIT_GATES
from core.store.sqlite_store import SqliteStore
from tests.agents.real_agents import AgentUnavailable, codex
from tests.agents.scripted_model import FILE_NAME, FILE_TEXT, STEER_REPLY
from tests.agents.scripted_responses import (
    FAILING_COMMAND,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    Script,
    last_user_text,
    scripted_responses,
    steered,
    user_texts,
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
#: A model outside codex's own catalogue, as a local model service's would be.
MODEL = "scripted-model"
#: A task whose every byte must reach the model as written: quotes, a backslash, a tab,
#: blank lines, text that is not ASCII, and JSON.
TASK = (
    'Add src/retry.py with a "retry" helper.\n\n'
    '\tKeep C:\\temp out of it; naïve → fine; {"run_id": "r1"}\n'
    "- and a line that starts as an option would."
)
#: What keeps codex from calling home (analytics, plugin and app catalogues) in the test: its
#: own configuration file, in a home of its own. The profile does not need it.
#: The price of `MODEL` in the test's jarvis.toml, US dollars per million tokens.
PRICE_IN, PRICE_OUT = 1.25, 10.0
QUIET_CONFIG = "[analytics]\nenabled = false\n[features]\nplugins = false\napps = false\n"


@pytest.fixture(scope="session")
def program() -> Path:
    try:
        return codex()
    except AgentUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def model() -> Iterator[tuple[str, Script]]:
    with scripted_responses() as served:
        yield served


DOCS = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
#: Where the documented profile's model service is, replaced by the scripted server's.
DOCUMENTED_URL = "http://127.0.0.1:8080/v1"


def documented_profile() -> dict[str, Any]:
    """The ``[workers.codex]`` profile docs/agents.md shows for Codex."""
    text = DOCS.read_text().split("## Codex: its sandbox and its tokens", 1)[1]
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    found: dict[str, Any] = tomllib.loads(block)["workers"]["codex"]
    return found


def profile_toml(program: Path, url: str) -> str:
    """The documented profile, its program the installed one, pointed at ``url``: nothing
    added, nothing left out (its ``env`` is the test's, with the key's variable)."""
    profile = documented_profile()
    args = [arg.replace(DOCUMENTED_URL, url) for arg in profile["args"]]
    return (
        f'[workers.codex]\nagent = "{profile["agent"]}"\ncommand = ["{program}"]\n'
        f'model = "{profile["model"]}"\nargs = {json.dumps(args)}\n'
    )


def test_the_documented_profile_is_the_agent_its_program_model_and_model_service() -> None:
    profile = documented_profile()
    assert sorted(profile) == ["agent", "args", "command", "env", "model"]
    assert (profile["agent"], profile["command"], profile["model"]) == ("codex", ["codex"], MODEL)
    assert any(DOCUMENTED_URL in arg for arg in profile["args"])
    assert list(profile["env"]) == ["LOCAL_MODEL_KEY"]


def agent_env(ws: Path, url: str) -> dict[str, str]:
    """The agent's environment: its key, and what keeps the test apart from the machine's
    user (a home of its own), from its network (the proxy) and from its temporary folder
    (codex refuses to make its helper programs under the temporary folder, and pytest's
    folders are all under /tmp)."""
    home = ws / "agent-home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(QUIET_CONFIG)
    (ws / "agent-tmp").mkdir()
    proxy = url.removesuffix("/v1")
    return {
        "LOCAL_MODEL_KEY": "test-key",
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "TMPDIR": str(ws / "agent-tmp"),
        "HTTPS_PROXY": proxy,
        "HTTP_PROXY": proxy,
        "NO_PROXY": "127.0.0.1,localhost",
        "GIT_AUTHOR_NAME": "Scripted Agent",
        "GIT_AUTHOR_EMAIL": "agent@example.test",
        "GIT_COMMITTER_NAME": "Scripted Agent",
        "GIT_COMMITTER_EMAIL": "agent@example.test",
    }


def configure(ws: Path, origin: Path, program: Path, url: str) -> None:
    env_toml = ", ".join(f'{name} = "{value}"' for name, value in agent_env(ws, url).items())
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "codex"\nconcurrency = 1\n'
        # The test's home and temporary folder, which its environment names, are the agent's
        # to write inside the sandbox too (docs/agents.md, Confinement).
        f'writable = ["{ws / "agent-home"}", "{ws / "agent-tmp"}"]\n'
        + profile_toml(program, url)
        + f"env = {{ {env_toml} }}\n"
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        # Codex reports no cost: Jarvis prices its tokens.
        f'[prices."{MODEL}"]\nin_per_mtok = {PRICE_IN}\nout_per_mtok = {PRICE_OUT}\n'
        # A delivered steer waits for the agent's turn to end, however slow the machine.
        f"[timeouts]\nno_output_s = 120\nsteer_ack_s = {HANG_GUARD_S:g}\n"
    )


def submit(store: SqliteStore, run_id: str) -> None:
    doc = dispatch_doc(run_id, input=TASK, branch=f"jarvis-{run_id}")
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def stream_lines(ws: Path, run_id: str) -> list[dict[str, Any]]:
    """Codex's JSON lines in the run's log (the runner copies them there)."""
    found: list[dict[str, Any]] = []
    for line in (ws / "logs" / run_id / "attempt-1" / "stdout.log").read_text().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("type"), str):
            found.append(doc)
    return found


def completion_of(ws: Path, run_id: str) -> dict[str, Any]:
    out = (ws / "logs" / run_id / "attempt-1" / "stdout.log").read_text()
    found: dict[str, Any] = json.loads(
        out.rsplit("<completion>", 1)[1].split("</completion>", 1)[0]
    )
    return found


def progress(conn: sqlite3.Connection, run_id: str) -> list[tuple[str, str, str | None]]:
    found = rows(conn, "SELECT phase, summary, tool_used FROM progress_events WHERE run_id = ? "
                       "ORDER BY attempt, seq", [run_id])  # fmt: skip
    return [(r["phase"], r["summary"], r["tool_used"]) for r in found]


def test_codex_patches_commits_reaches_review_and_is_merged_against_a_scripted_model(
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

    # Asked four times (patch, a look that fails, commit, finish), and nothing else left.
    assert len(script.main_requests) == 4, [r.path for r in script.requests]
    assert script.tunnels == []
    # The prompt reached the model byte for byte as the runner built it.
    run = run_row(conn, "r1")
    built = build_prompt(json.loads(run["dispatch_json"]), run_criteria.criteria_of(run), "r1")
    assert user_texts(script.main_requests[0].body)[-1] == built
    assert TASK in built
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    # The agent's commit is on the run's branch in the configured repository, with its file.
    head = run_git(origin, "rev-parse", "jarvis-r1")
    assert run["commit_sha"] == head
    assert run_git(origin, "show", f"jarvis-r1:{FILE_NAME}") == FILE_TEXT.strip()
    assert run_git(origin, "log", "-1", "--format=%an", "jarvis-r1") == "Scripted Agent"
    steps = progress(conn, "r1")
    assert ("editing", f"add {FILE_NAME}", "file_change") in steps, steps
    assert any(p == "committing" and s.startswith("ran (exit 0)") for p, s, _ in steps), steps
    # The command that exited 1 is shown failed; the unknown model is a warning, no error.
    assert (
        "tool", f"failed (exit 1): {FAILING_COMMAND}", "command_execution"
    ) in steps, steps  # fmt: skip
    warnings = [s for p, s, _ in steps if s.startswith("warning: Model metadata")]
    assert len(warnings) == 1 and not [p for p, _, _ in steps if p == "error"], steps
    completion = completion_of(ws, "r1")
    assert completion["commit_sha"] == head and "derived" not in completion, completion
    # The tokens the server served are what Jarvis recorded.
    code, shown = cli(ws, "show", "r1")
    assert code == 0, shown
    usage = shown["run"]["usage"]
    assert (usage["tokens_in"], usage["tokens_out"]) == script.tokens, usage
    # Codex reports no cost: it was computed from the tokens and the price, and says so.
    tokens_in, tokens_out = script.tokens
    cost = (tokens_in * PRICE_IN + tokens_out * PRICE_OUT) / 1_000_000
    assert usage["cost_computed"] is True and usage["cost_usd"] == pytest.approx(cost), usage

    with running_host(ws):  # the host holding the repository merges
        code, approved = cli(ws, "approve", "r1", "--wait")
    assert code == 0 and approved["ok"], approved
    assert run_git(origin, "rev-parse", "main") == head


def test_a_steer_reaches_codex_by_resuming_its_thread_and_its_tokens_count_once(
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
    steer = "Also name the helper in the module docstring."
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
        wait_until(lambda: steer_status() == ["delivered"], HANG_GUARD_S,
                   "the steer's delivery", lambda: f"{steer_status()}\n{host.log()}")  # fmt: skip
        first.released.set()
        wait_for_states(conn, {"r1": ENDS}, HANG_GUARD_S, host=host)
        assert run_row(conn, "r1")["state"] == "review_requested", describe_runs(conn, host)

    # Four calls for the task, then one for the steer, which none of the first four saw.
    main = script.main_requests
    assert len(main) == 5, [(r.path, last_user_text(r.body)[:80]) for r in script.requests]
    assert not any(steer in json.dumps(r.body) for r in main[:4])
    assert steered(main[4].body) and last_user_text(main[4].body) == steer
    assert script.tunnels == []
    assert steer_status() == ["acked"]
    found = [s for p, s, _ in progress(conn, "r1") if p == "steering"]
    assert [s.endswith(f"acknowledged: {steer}") for s in found] == [True], found
    # The second process resumed the first one's thread.
    threads = [d["thread_id"] for d in stream_lines(ws, "r1") if d["type"] == "thread.started"]
    assert len(threads) == 2 and threads[0] == threads[1], threads
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    completion = completion_of(ws, "r1")
    assert completion["commit_sha"] == run_git(origin, "rev-parse", "jarvis-r1"), completion
    answers = [d for d in stream_lines(ws, "r1") if d["type"] == "item.completed"
               and d["item"]["type"] == "agent_message"]  # fmt: skip
    assert answers[-1]["item"]["text"].startswith(STEER_REPLY), answers
    # Both turns' tokens, each once: the resumed turn.completed is the thread's running total.
    code, shown = cli(ws, "show", "r1")
    assert code == 0, shown
    usage = shown["run"]["usage"]
    assert (usage["tokens_in"], usage["tokens_out"]) == script.tokens, usage


def test_a_token_budget_stops_codex_mid_turn(
    ws: Path,
    store: SqliteStore,
    conn: sqlite3.Connection,
    tmp_path: Path,
    program: Path,
    model: tuple[str, Script],
) -> None:
    """Codex's own stream reports tokens only when its turn ends; its session file has them per
    model call. A turn that never ends is stopped by the host's budget all the same."""
    url, script = model
    script.endless = True
    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    configure(ws, origin, program, url)
    # The turn never ends: only the budget can stop it before the hard limit does.
    toml = (
        (ws / "jarvis.toml").read_text().replace("[timeouts]\n", "[timeouts]\nhard_limit_s = 60\n")
    )
    (ws / "jarvis.toml").write_text(toml + "[budgets]\nrun_tokens = 5000\n")
    submit(store, "r1")

    with running_host(ws) as host:
        wait_for_states(conn, {"r1": ENDS}, HANG_GUARD_S, host=host)
    reason = run_row(conn, "r1")["state_reason"]
    assert reason.startswith("budget_exceeded: ") and "over the run budget of 5,000" in reason
    assert not [d for d in stream_lines(ws, "r1") if d["type"] == "turn.completed"]
    # Whole calls were counted, each once: at least the four that crossed the budget, and no
    # more than were served.
    (used,) = rows(conn, "SELECT tokens_in, tokens_out FROM run_usage WHERE run_id = 'r1'")
    calls = used["tokens_in"] // INPUT_TOKENS
    assert used["tokens_in"] == INPUT_TOKENS * calls, used
    assert used["tokens_out"] == OUTPUT_TOKENS * calls, used
    assert 4 <= calls <= len(script.main_requests), (used, len(script.main_requests))


def test_codex_commits_in_a_checkout_holding_its_own_git_directory(
    tmp_path: Path, program: Path, model: tuple[str, Script]
) -> None:
    """The layout a run's own repository has (``<checkout>/.git``), which codex's
    ``workspace-write`` keeps read only: with Jarvis's flags, the commit lands."""
    url, script = model
    origin = make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)
    checkout = tmp_path / "checkout"
    run_git(tmp_path, "clone", "-q", "--branch", "main", str(origin), str(checkout))
    run_git(checkout, "checkout", "-q", "-b", "jarvis-r2")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": "/usr/bin:/bin", **agent_env(ws, url)}
    provider = f'{{ name = "local", base_url = "{url}", env_key = "LOCAL_MODEL_KEY" }}'
    argv = [str(program), "exec", "--json", "--skip-git-repo-check", f"--model={MODEL}",
            *codex_args(checkout, [], "none"), "-c", 'model_provider="local"',
            "-c", f"model_providers.local={provider}", "--", "Add the helper."]  # fmt: skip
    done = subprocess.run(argv, cwd=checkout, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=HANG_GUARD_S)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert run_git(checkout, "show", f"HEAD:{FILE_NAME}") == FILE_TEXT.strip(), done.stdout
    assert len(script.main_requests) == 4
