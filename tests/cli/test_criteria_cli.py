"""`jarvis criteria` and `jarvis verify` as a script would use them (run in process, see
tests/jarvis_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.criteria import run_criteria
from core.lifecycle import Action, RunState
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from jarvis_cli.criteria import VERIFY_FAILED
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run

TASK = (
    'Create `src/app.py` for the new endpoint. README.md must contain "## Usage". '
    "Follow e.g. the style of v1.2.3 and see https://example.com/docs/setup.py for context.\n"
)
HOSTILE = "\x1b]0;owned\x07\x1b[2J\u009b31m[bold red]done[/]"
EXISTS = {"type": "file_exists", "path": "out.txt", "description": "out.txt must exist"}
LOG_DONE = {"type": "content_match", "path": "log.txt", "pattern": "done",
            "description": "the log says done"}  # fmt: skip
UNLISTED = {"type": "command_success", "command": ["deploy-check", "--dry-run"],
            "description": "the deploy check passes"}  # fmt: skip


def flat(text: str) -> str:
    """Readable output without white space and table borders, so wrapped cells read whole."""
    return "".join(ch for ch in text if not ch.isspace() and ch != "│")


def types(out: dict[str, Any], *, universal: bool) -> list[str]:
    return [c["type"] for c in out["criteria"] if c["universal"] is universal]


# -- extract ------------------------------------------------------------------------------------


def test_extract_from_a_plain_text_file(tmp_path: Path) -> None:
    task = tmp_path / "task.txt"
    task.write_text(TASK)
    result = jarvis("criteria", "extract", task, "--json")
    assert result.code == 0
    out = result.json()
    assert set(out) == {"criteria", "source", "notes", "errors"} and out["errors"] == []
    assert out["source"] == "patterns"
    assert types(out, universal=False) == ["file_exists", "content_match"]
    assert out["criteria"][0] == {
        "type": "file_exists", "path": "src/app.py",
        "description": "src/app.py must exist", "universal": False,
    }  # fmt: skip
    assert out["criteria"][1]["path"] == "README.md" and out["criteria"][1]["pattern"] == "## Usage"
    # Neither "e.g.", the version nor the URL's file name became a criterion.
    assert not {c.get("path") for c in out["criteria"]} & {"e.g", "v1.2.3", "setup.py"}
    assert types(out, universal=True) == [
        "test_pass", "no_lint_errors", "changelog_updated", "backlog_updated"
    ]  # fmt: skip
    assert all({"type", "description", "universal"} <= set(c) for c in out["criteria"])


def test_extract_from_stdin_and_readable_output() -> None:
    out = jarvis("criteria", "extract", "-", "--json", stdin=TASK.encode()).json()
    assert types(out, universal=False) == ["file_exists", "content_match"]
    readable = jarvis("criteria", "extract", "-", stdin=TASK.encode())
    assert readable.code == 0 and "src/app.py" in readable.stdout  # the table wraps the rest
    assert "source: patterns" in readable.stdout


def test_extract_from_dispatches_reads_their_task_and_universal_flag(tmp_path: Path) -> None:
    jarvis_doc = {"run_id": "r1", "input": "Create docs/guide.md", "universal_criteria": False}
    out = jarvis("criteria", "extract", "-", "--json", stdin=json.dumps(jarvis_doc).encode()).json()
    assert [(c["type"], c["path"]) for c in out["criteria"]] == [("file_exists", "docs/guide.md")]
    openclaw = {"goal": {"title": "Notes", "description": "Add a new file NOTES.md"}}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(openclaw))
    out = jarvis("criteria", "extract", path, "--json").json()
    assert out["criteria"][0]["path"] == "NOTES.md"
    assert types(out, universal=True)  # no flag in the dispatch: the checklist is on
    # Text that merely looks like JSON is read as text, and says so.
    out = jarvis("criteria", "extract", "-", "--json", stdin=b"{ create out.txt").json()
    assert any("plain task text" in note for note in out["notes"])


def test_repo_decides_the_inferred_commands(tmp_path: Path) -> None:
    task = tmp_path / "task.txt"
    task.write_text("The tests must pass.")
    node = tmp_path / "node"
    node.mkdir()
    (node / "package.json").write_text(json.dumps({"scripts": {"test": "vitest run"}}))
    out = jarvis("criteria", "extract", task, "--repo", node, "--json").json()
    assert out["criteria"][0]["command"] == ["npm", "test"]
    python = tmp_path / "python"
    python.mkdir()
    (python / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = []\n'
        '[project.optional-dependencies]\ndev = ["pytest", "flake8"]\n'
    )
    out = jarvis("criteria", "extract", task, "--repo", python, "--json").json()
    assert out["criteria"][0]["command"] == ["pytest"]
    lint = next(c for c in out["criteria"] if c["type"] == "no_lint_errors")
    assert lint["command"] == ["flake8"]
    assert "commands from pyproject.toml" in out["notes"][0]
    assert jarvis("criteria", "extract", task, "--repo", task, "--json").code == 2


def test_no_universal_leaves_the_checklist_out() -> None:
    out = jarvis("criteria", "extract", "-", "--no-universal", "--json", stdin=TASK.encode()).json()
    assert types(out, universal=True) == []
    assert types(out, universal=False) == ["file_exists", "content_match"]
    # --no-universal wins over a dispatch that asks for the checklist.
    doc = json.dumps({"input": "Create a.md", "universal_criteria": True}).encode()
    out = jarvis("criteria", "extract", "-", "--no-universal", "--json", stdin=doc).json()
    assert types(out, universal=True) == []


def test_a_model_command_that_fails_falls_back_to_the_patterns() -> None:
    out = jarvis("criteria", "extract", "-", "--json", "--model-command", "false",
                 stdin=TASK.encode()).json()  # fmt: skip
    assert out["source"] == "model_fallback:exit_status"
    assert types(out, universal=False) == ["file_exists", "content_match"]


def test_bad_input_is_a_structured_error_never_a_traceback(tmp_path: Path) -> None:
    big = jarvis("criteria", "extract", "-", "--json", stdin=b"x" * (1024 * 1024 + 1))
    assert big.code == 1 and [e["code"] for e in big.json()["errors"]] == ["too_large"]
    assert set(big.json()["errors"][0]) == {"field", "code", "message"}
    missing = jarvis("criteria", "extract", tmp_path / "nope.txt", "--json")
    assert missing.code == 2 and missing.json()["error"]["code"] == "not_found"
    folder = jarvis("criteria", "extract", tmp_path, "--json")
    assert folder.code == 2 and folder.json()["error"]["code"] == "is_directory"
    for result in (big, missing, folder):
        assert "Traceback" not in result.stderr
    mixed = jarvis("criteria", "extract", "-", "--workspace", tmp_path, "--json", stdin=b"x")
    assert mixed.code == 2 and mixed.json()["error"]["code"] == "usage"


# -- a run's criteria ---------------------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    store = SqliteStore(root / "jarvis.db")
    try:
        make_run(store, "queued-1", RunState.QUEUED, acceptance_criteria=[EXISTS])
        make_run(store, "running-1", RunState.RUNNING, acceptance_criteria=[EXISTS])
        make_run(store, "running-2", RunState.RUNNING, acceptance_criteria=[EXISTS, LOG_DONE])
        make_run(store, "waiting-1", RunState.RUNNING, acceptance_criteria=[UNLISTED])
        make_run(store, "bare-1", RunState.RUNNING)
    finally:
        store.close()
    return root


def cli(ws: Path, *args: str | Path) -> tuple[int, Any]:
    result = jarvis(*args, "--workspace", ws, "--json")
    return result.code, result.json()


def checkout(ws: Path, run_id: str) -> Path:
    folder = run_criteria.checkout_dir(ws, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_list_add_and_remove_while_queued(ws: Path) -> None:
    code, out = cli(ws, "criteria", "queued-1")
    assert code == 0 and out["ok"] and out["refusal"] is None
    assert out["universal_criteria"] is False and out["criteria_source"] == "dispatch"
    assert out["verification_state"] is None and out["approved_commands"] == []
    assert out["criteria"] == [{"index": 0, **EXISTS, "universal": False}]

    added = json.dumps(UNLISTED)
    code, out = cli(ws, "criteria", "queued-1", "--add", added, "--operator", "ana")
    assert code == 0 and [c["index"] for c in out["criteria"]] == [0, 1]
    assert out["criteria"][1]["approval_key"] == json.dumps(UNLISTED["command"])
    assert out["criteria_source"] == "operator"

    code, out = cli(ws, "criteria", "queued-1", "--remove", "0")
    assert code == 0 and [c["type"] for c in out["criteria"]] == ["command_success"]

    readable = jarvis("criteria", "queued-1", "--workspace", ws)
    assert readable.code == 0 and "command_success" in readable.stdout
    assert "deploy-check" in readable.stdout and "operator" in readable.stdout


def test_changes_are_refused_unless_queued_or_valid(ws: Path) -> None:
    code, out = cli(ws, "criteria", "running-1", "--add", json.dumps(LOG_DONE))
    assert code == 1 and not out["ok"] and out["refusal"]["code"] == "not_queued"
    assert "before it starts" in out["refusal"]["message"]
    assert len(out["criteria"]) == 1  # unchanged, and still listed
    code, out = cli(ws, "criteria", "running-1", "--remove", "0")
    assert code == 1 and out["refusal"]["code"] == "not_queued"

    bad = {"type": "file_exists", "path": "../escape", "description": "out of the repo"}
    code, out = cli(ws, "criteria", "queued-1", "--add", json.dumps(bad))
    assert code == 1 and out["refusal"]["code"] == "invalid_criterion"
    assert out["refusal"]["field"].startswith("criterion")
    code, out = cli(ws, "criteria", "queued-1", "--add", "not json")
    assert code == 1 and out["refusal"]["code"] == "invalid_criterion"
    code, out = cli(ws, "criteria", "queued-1", "--remove", "5")
    assert code == 1 and out["refusal"]["code"] == "bad_index"
    code, out = cli(ws, "criteria", "nope")
    assert code == 1 and out["refusal"]["code"] == "not_found"
    code, out = cli(ws, "criteria", "queued-1", "--add", "{}", "--remove", "0")
    assert code == 2 and out["error"]["code"] == "usage"


# -- verify -------------------------------------------------------------------------------------


def test_verify_passes_when_the_checkout_satisfies_the_criteria(ws: Path) -> None:
    (checkout(ws, "running-1") / "out.txt").write_text("made")
    code, out = cli(ws, "verify", "running-1")
    assert code == 0 and out["passed"] is True
    assert set(out) >= {"verified_at", "passed", "criteria_results"}
    assert out["criteria_results"][0]["output"] == "file exists: out.txt"
    readable = jarvis("verify", "running-1", "--workspace", ws)
    assert readable.code == 0 and "✓" in readable.stdout and "out.txt must exist" in readable.stdout


def test_verify_fails_with_its_own_exit_code_and_names_the_criterion(ws: Path) -> None:
    checkout(ws, "running-1")
    code, out = cli(ws, "verify", "running-1")
    assert VERIFY_FAILED not in (0, 1, 2)
    assert code == VERIFY_FAILED and out["passed"] is False
    assert out["criteria_results"][0]["output"] == "missing: out.txt"
    readable = jarvis("verify", "running-1", "--workspace", ws)
    assert readable.code == VERIFY_FAILED
    assert "✗" in readable.stdout and "out.txt must exist" in readable.stdout
    assert "missing: out.txt" in readable.stdout


def test_worker_text_in_the_output_is_printed_inert(ws: Path) -> None:
    folder = checkout(ws, "running-2")
    (folder / "out.txt").write_text("made")
    (folder / "log.txt").write_text(f"step one\n{HOSTILE}\n")
    for args in (("--json",), ()):
        result = jarvis("verify", "running-2", "--workspace", ws, *args)
        assert result.code == 0
        for ch in ("\x1b", "\x07", "\u009b"):
            assert ch not in result.stdout and ch not in result.stderr
    readable = flat(jarvis("verify", "running-2", "--workspace", ws).stdout)
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m[boldred]done[/]" in readable


def test_approve_is_refused_unless_a_command_waits(ws: Path) -> None:
    code, out = cli(ws, "verify", "running-1", "--approve", '["deploy-check", "--dry-run"]')
    assert code == 1 and out == {
        "ok": False,
        "refusal": {"code": "illegal_transition", "field": "run_id",
                    "message": "Run running-1 is running; a command can be approved for it only "
                               "when it is running (awaiting_approval)."},
    }  # fmt: skip
    code, out = cli(ws, "verify", "bare-1")
    assert code == 1 and out["refusal"]["code"] == "no_criteria"
    code, out = cli(ws, "verify", "nope")
    assert code == 1 and out["refusal"]["code"] == "not_found"


def test_a_waiting_command_is_approved_then_verified(ws: Path) -> None:
    # What the worker left: commands are run on it (an empty checkout runs none).
    (checkout(ws, "waiting-1") / "app.py").write_text("x = 1\n")
    store = SqliteStore(ws / "jarvis.db")
    try:  # where the host leaves a run whose gates passed: verification is due
        looked = host_move(store, "waiting-1", Action.AWAIT_VERIFICATION)["version"]
    finally:
        store.close()
    readable = jarvis("verify", "waiting-1", "--workspace", ws)
    assert readable.code == VERIFY_FAILED and "…" in readable.stdout
    assert "--approve" in readable.stdout
    code, out = cli(ws, "verify", "waiting-1", "--approve", "deploy-check --other")
    assert code == 1 and out["refusal"]["code"] == "unknown_command"
    # Verified, the run moved on (pending → awaiting_approval): a version read before is stale.
    code, out = cli(ws, "verify", "waiting-1", "--approve", "deploy-check --dry-run",
                    "--expect-version", str(looked))  # fmt: skip
    assert code == 1 and out["refusal"]["code"] == "stale_version"
    assert "running (awaiting_approval)" in out["refusal"]["message"]
    code, out = cli(ws, "verify", "waiting-1", "--approve", "deploy-check --dry-run",
                    "--operator", "ana")  # fmt: skip
    # Approved, the command runs (there is no such program here) and decides the run.
    assert code == VERIFY_FAILED and "command not found" in out["criteria_results"][0]["output"]
    code, out = cli(ws, "criteria", "waiting-1")
    assert out["state"] == "failed" and out["approved_commands"] == [
        json.dumps(UNLISTED["command"])
    ]  # fmt: skip
