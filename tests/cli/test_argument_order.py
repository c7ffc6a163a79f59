"""Options may come before or after a command's positional arguments, as with any command."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import jarvis

TASK = "Create `src/app.py` for the new endpoint.\n"


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
