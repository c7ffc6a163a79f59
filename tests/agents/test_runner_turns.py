"""How the runner starts an agent's turn, whatever the agent: in the run's checkout with ``$PWD``
saying so, the prompt reaching it byte for byte, and a steer delivered at the next turn.

A stand-in program (tests/agents/fake_agent.py) records how each turn was started; the runner
(`python -m core.agents.runner`) is run as the host runs it, from a folder that is not the
checkout and with that folder's ``$PWD`` inherited: OpenCode takes its directory from ``$PWD``,
so an agent that inherited the host's once edited and committed in the host's folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.agents.prompt import build_prompt
from core.agents.runner import MAX_STEER_TURNS
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

FAKE = Path(__file__).with_name("fake_agent.py")
ROOT = Path(__file__).resolve().parents[2]
#: A prompt no command line of OpenCode's carries as it is: quotes (escaped when a word holds a
#: space), words yargs reads as numbers or options, runs of spaces and a trailing one.
AWKWARD = 'Say "hi" to {"run_id": "x"}  2 0x10 -5 --flag -- "q"\n\tand  the  end.'


def start(tmp_path: Path, agent: str, *, task: str = "Add a retry helper.",
          steer: str | None = None) -> tuple[list[dict[str, Any]], Path, str]:  # fmt: skip
    """Run the runner once for ``agent``; what each turn recorded, the checkout, its stdout."""
    checkout = make_repo(tmp_path / "checkout", {"README.md": "# x\n"})
    elsewhere = tmp_path / "host-folder"
    elsewhere.mkdir()
    record = tmp_path / "record.jsonl"
    ipc = tmp_path / "ipc"
    steer_file = ipc / "steer" / "r1.json"
    steer_file.parent.mkdir(parents=True)
    if steer is not None:
        steer_file.write_text(json.dumps({"steer_id": "s1", "run_id": "r1", "message": steer}))
    profile = {"name": "p", "agent": agent, "command": [sys.executable, str(FAKE)]}
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PWD": str(elsewhere),  # what the host's own shell left it
        "JARVIS_RUN_ID": "r1",
        "JARVIS_LANE": "jarvis-worker-1",
        "JARVIS_PROGRESS_DIR": str(ipc / "progress" / "r1"),
        "JARVIS_STEER_FILE": str(steer_file),
        "JARVIS_ACK_FILE": str(ipc / "steer" / "r1.acked.json"),
        "JARVIS_DISPATCH": json.dumps(dispatch_doc("r1", input=task, branch="jarvis-r1")),
        "JARVIS_WORKER_PROFILE": json.dumps(profile),
        "JARVIS_CHECKOUT": str(checkout),
        "FAKE_RECORD": str(record),
        "FAKE_FORMAT": agent,
    }
    done = subprocess.run(
        [sys.executable, "-m", "core.agents.runner", "--profile", "p"], cwd=elsewhere, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    turns = [json.loads(line) for line in record.read_text().splitlines()]
    return turns, checkout, done.stdout


@pytest.mark.parametrize("agent", ["opencode", "aider"])
def test_every_agent_runs_in_the_checkout_with_pwd_saying_so(tmp_path: Path, agent: str) -> None:
    turns, checkout, _ = start(tmp_path, agent)
    assert [(t["cwd"], t["pwd"]) for t in turns] == [(str(checkout), str(checkout))]


def test_opencode_gets_the_prompt_byte_for_byte_on_its_stdin(tmp_path: Path) -> None:
    turns, _, _ = start(tmp_path, "opencode", task=AWKWARD)
    (turn,) = turns
    dispatch = dispatch_doc("r1", input=AWKWARD, branch="jarvis-r1")
    assert turn["stdin"] == build_prompt(dispatch, [], "r1"), turn
    assert AWKWARD in turn["stdin"]
    # Nothing of the prompt on the command line, where `run` would quote and escape it.
    assert not any("run_id" in word for word in turn["argv"]), turn["argv"]


def test_aider_is_given_a_session_so_a_steer_reaches_its_next_turn(tmp_path: Path) -> None:
    turns, _, out = start(tmp_path, "aider", steer="Also name the helper in its docstring.")
    assert len(turns) == 2 <= 1 + MAX_STEER_TURNS, turns
    first, second = turns
    assert "--restore-chat-history" not in first["argv"]
    assert "--restore-chat-history" in second["argv"]
    # Both turns keep one chat history, outside the checkout.
    history = {w.split("=", 1)[1] for t in turns for w in t["argv"]
               if w.startswith("--chat-history-file=")}  # fmt: skip
    assert len(history) == 1, turns
    ack = json.loads((tmp_path / "ipc" / "steer" / "r1.acked.json").read_text())
    assert ack["steer_id"] == "s1"
    assert "steer s1 acknowledged" in " ".join(
        json.loads(p.read_text())["summary"]
        for p in (tmp_path / "ipc" / "progress" / "r1").glob("*.json")
    )
    assert out.count("<completion>") == 1
