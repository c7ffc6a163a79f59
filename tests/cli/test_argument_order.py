"""Options may come before or after a command's positional arguments, as with any command."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import jarvis

TASK = "Create `src/app.py` for the new endpoint.\n"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_runs/dispatches/valid-backend-fix.json"


def test_criteria_extract_takes_its_options_before_the_path(tmp_path: Path) -> None:
    task = tmp_path / "task.txt"
    task.write_text(TASK)
    before = jarvis("criteria", "extract", "--no-universal", "--json", task)
    after = jarvis("criteria", "extract", task, "--no-universal", "--json")
    assert before.code == 0, before.stderr
    assert before.json() == after.json()
    assert [c["universal"] for c in before.json()["criteria"]] == [False]
    repo_first = jarvis("criteria", "extract", "--repo", tmp_path, "--json", task)
    assert repo_first.code == 0, repo_first.stderr
    assert repo_first.json()["criteria"][0]["path"] == "src/app.py"


def test_criteria_extract_refuses_the_run_options_and_a_missing_path(tmp_path: Path) -> None:
    task = tmp_path / "task.txt"
    task.write_text(TASK)
    wrong = jarvis("criteria", "extract", "--workspace", tmp_path, task, "--json")
    assert wrong.code == 2 and wrong.json()["error"]["code"] == "usage"
    assert "--workspace" in wrong.json()["error"]["message"]
    missing = jarvis("criteria", "extract", "--no-universal", "--json")
    assert missing.code == 2 and missing.json()["error"]["code"] == "usage"
    # A run's form refuses the extract options just as clearly.
    listing = jarvis("criteria", "r1", "--repo", tmp_path, "--json")
    assert listing.code == 2 and "--repo" in listing.json()["error"]["message"]
    late = jarvis("criteria", "--json", "extract")
    assert late.code == 2 and "right after" in late.json()["error"]["message"]


def test_the_shared_options_work_before_the_command_too(tmp_path: Path) -> None:
    """`jarvis --workspace ./ws runs`, as people who script a CLI write it."""
    ws = tmp_path / "ws"
    made = jarvis("dispatch", "--workspace", ws, "--json", SAMPLE)
    assert made.code == 0, made.stderr
    before = jarvis("--workspace", ws, "--json", "runs")
    after = jarvis("runs", "--workspace", ws, "--json")
    assert before.code == after.code == 0, before.stderr
    assert before.json() == after.json()
    assert [r["run_id"] for r in before.json()["runs"]] == [made.json()["run_id"]]
    joined = jarvis(f"--workspace={ws}", "show", made.json()["run_id"], "--json")
    assert joined.code == 0, joined.stderr
    assert made.json()["run_id"] in joined.stdout
    # An action under a command (`repo list`) takes them as well.
    listed = jarvis("--workspace", ws, "repo", "list", "--json")
    assert listed.code == 0, listed.stderr


def test_an_unknown_option_is_said_with_its_commands_usage() -> None:
    wrong = jarvis("runs", "--bogus")
    assert wrong.code == 2
    assert wrong.stderr.splitlines()[0].startswith("usage: jarvis runs ")
    assert "unrecognized arguments: --bogus" in wrong.stderr
    nested = jarvis("repo", "list", "--bogus")
    assert nested.code == 2 and nested.stderr.startswith("usage: jarvis repo list ")


def test_jarvis_says_its_version() -> None:
    said = jarvis("--version")
    assert said.code == 0
    assert said.stdout.strip().startswith("jarvis ") and said.stdout.strip() != "jarvis "


def test_the_shared_options_alone_open_that_workspaces_console() -> None:
    from jarvis_cli import shared_options_after_command as moved

    assert moved(["--workspace", "ws"]) == ["tui", "--workspace", "ws"]
    assert moved(["--db", "u", "hosts"]) == ["hosts", "--db", "u"]
    assert moved(["--json", "verify", "r1", "--", "--workspace"]) == [
        "verify", "r1", "--json", "--", "--workspace"
    ]  # fmt: skip
    assert moved(["runs", "--workspace", "ws"]) == ["runs", "--workspace", "ws"]
