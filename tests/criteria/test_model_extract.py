"""Model-based extraction with a small Python script standing in for the model."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from core.criteria.extract import extract_criteria
from core.criteria.model_extract import PROMPT, build_prompt, extract_with_model
from tests.criteria.helpers import HELPER_LIMIT_S, kill_if_alive, wait_dead

TASK = "Create src/a.py. All tests must pass."
PATTERNS = extract_criteria(TASK, universal=False).criteria


def model(tmp_path: Path, body: str) -> list[str]:
    """A model command: a script that saves its stdin and argv, then runs ``body``."""
    script = tmp_path / "model.py"
    script.write_text(
        "import json, sys, pathlib\n"
        "here = pathlib.Path(__file__).parent\n"
        "(here / 'stdin.txt').write_text(sys.stdin.read())\n"
        "(here / 'argv.json').write_text(json.dumps(sys.argv))\n" + textwrap.dedent(body)
    )
    return [sys.executable, str(script)]


def printing(tmp_path: Path, output: str) -> list[str]:
    return model(tmp_path, f"sys.stdout.write({output!r})\n")


CRITERIA: list[dict[str, Any]] = [
    {"type": "file_exists", "path": "src/b.py", "description": "b exists"},
    {"type": "test_pass", "command": "pytest tests/test_b.py", "description": "b's tests pass"},
]
EXPECTED = [
    {"type": "file_exists", "path": "src/b.py", "description": "b exists", "universal": False},
    {
        "type": "test_pass",
        "command": ["pytest", "tests/test_b.py"],
        "description": "b's tests pass",
        "universal": False,
    },
]


def test_valid_output_becomes_the_criteria(tmp_path: Path) -> None:
    command = printing(tmp_path, json.dumps({"criteria": CRITERIA}))
    result = extract_with_model(TASK, command, repo=None, universal=False)
    assert result.source == "model"
    assert result.criteria == EXPECTED
    assert any("gave 2 criteria" in n and "repair" not in n for n in result.notes)


def test_a_bare_array_is_accepted_when_it_is_the_whole_output(tmp_path: Path) -> None:
    command = printing(tmp_path, json.dumps(CRITERIA))
    result = extract_with_model(TASK, command, repo=None, universal=False)
    assert (result.source, result.criteria) == ("model", EXPECTED)


def test_output_wrapped_in_prose_and_cut_short_is_repaired_once(tmp_path: Path) -> None:
    whole = json.dumps({"criteria": CRITERIA})
    cut = whole[:-2]  # the closing ']}' never arrived
    command = printing(tmp_path, f"Here you go:\n```json\n{cut}")
    result = extract_with_model(TASK, command, repo=None, universal=False)
    assert (result.source, result.criteria) == ("model", EXPECTED)
    assert any("after the repair pass" in n for n in result.notes)


def test_an_empty_list_means_no_task_criteria(tmp_path: Path) -> None:
    command = printing(tmp_path, '{"criteria": []}')
    result = extract_with_model(TASK, command, repo=None, universal=True)
    assert result.source == "model"
    assert [c["universal"] for c in result.criteria] == [True, True, True, True]


def test_the_universal_checklist_is_merged_without_duplicates(tmp_path: Path) -> None:
    same_as_universal = {"type": "test_pass", "command": ["pytest"], "description": "tests"}
    command = printing(tmp_path, json.dumps({"criteria": [same_as_universal]}))
    result = extract_with_model(TASK, command, repo=None, universal=True)
    assert [(c["type"], c["universal"]) for c in result.criteria] == [
        ("test_pass", False),
        ("no_lint_errors", True),
        ("changelog_updated", True),
        ("backlog_updated", True),
    ]


def test_the_task_reaches_the_model_on_stdin_never_in_its_arguments(tmp_path: Path) -> None:
    hostile = 'Create a.py"; rm -rf ~; echo "$(whoami) {workspace}'
    command = printing(tmp_path, '{"criteria": []}')
    repo = tmp_path / "shop"
    repo.mkdir()
    extract_with_model(hostile, command, repo=repo, universal=False)
    assert (tmp_path / "stdin.txt").read_text() == build_prompt(hostile, "shop")
    assert hostile in (tmp_path / "stdin.txt").read_text()  # the task's own {workspace} kept
    assert json.loads((tmp_path / "argv.json").read_text()) == command[1:]


def test_the_prompt_is_the_documents_with_the_object_form() -> None:
    prompt = build_prompt("Do X.", "ws")
    assert '"""\nDo X.\n"""' in prompt
    assert "Workspace: ws" in prompt
    assert '{"criteria": [...]}' in prompt
    assert "{task}" in PROMPT and "{task}" not in prompt


FALLBACKS = [
    ("garbage", "I could not find any criteria, sorry.", "invalid_json"),
    ("truncated-in-string", '{"criteria": [{"type": "file_ex', "invalid_json"),
    ("duplicate-keys", '{"criteria": [], "criteria": []}', "invalid_json"),
    ("extra-key", '{"criteria": [], "why": "x"}', "invalid_criteria"),
    ("not-a-list", '{"criteria": {}}', "invalid_criteria"),
    ("scalar", "42", "invalid_criteria"),
    (
        "unknown-type",
        '{"criteria": [{"type": "tests_pass", "command": ["x"], "description": "d"}]}',
        "invalid_criteria",
    ),
    (
        "absolute-path",
        '{"criteria": [{"type": "file_exists", "path": "/etc/passwd", "description": "d"}]}',
        "invalid_criteria",
    ),
    (
        "shell",
        '{"criteria": [{"type": "command_success", "command": "make", "shell": true,'
        ' "description": "d"}]}',
        "invalid_criteria",
    ),
    (
        "shell-syntax",
        '{"criteria": [{"type": "command_success", "command": "make && curl x | sh",'
        ' "description": "d"}]}',
        "invalid_criteria",
    ),
    (
        "bad-regex",
        '{"criteria": [{"type": "content_match", "path": "a", "pattern": "(",'
        ' "description": "d"}]}',
        "invalid_criteria",
    ),
    (
        "no-description",
        '{"criteria": [{"type": "file_exists", "path": "a.py"}]}',
        "invalid_criteria",
    ),
    ("one-bad-of-two", json.dumps({"criteria": [CRITERIA[0], "oops"]}), "invalid_criteria"),
]


@pytest.mark.parametrize(
    ("output", "reason"), [f[1:] for f in FALLBACKS], ids=[f[0] for f in FALLBACKS]
)
def test_bad_output_falls_back_to_the_patterns(tmp_path: Path, output: str, reason: str) -> None:
    result = extract_with_model(TASK, printing(tmp_path, output), repo=None, universal=False)
    assert result.source == f"model_fallback:{reason}"
    assert result.criteria == PATTERNS
    assert result.notes[0].startswith(f"model extraction failed ({reason}): ")


def test_a_non_zero_exit_falls_back_and_keeps_the_models_complaint(tmp_path: Path) -> None:
    command = model(tmp_path, "sys.stderr.write('quota exceeded')\nsys.exit(3)\n")
    result = extract_with_model(TASK, command, repo=None, universal=False)
    assert result.source == "model_fallback:exit_status"
    assert result.criteria == PATTERNS
    assert "exited with status 3: quota exceeded" in result.notes[0]


def test_a_valid_answer_with_a_non_zero_exit_is_still_refused(tmp_path: Path) -> None:
    command = model(tmp_path, "print('{\"criteria\": []}')\nsys.exit(1)\n")
    result = extract_with_model(TASK, command, repo=None, universal=False)
    assert result.source == "model_fallback:exit_status"


def test_a_model_past_its_time_limit_is_killed_and_falls_back(tmp_path: Path) -> None:
    # The model starts a helper that would outlive it; killing the group must end both.
    pid_file = tmp_path / "helper.pid"
    command = model(
        tmp_path,
        f"""
        import subprocess, time
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pathlib.Path({str(pid_file)!r}).write_text(str(helper.pid))
        time.sleep(60)
        """,
    )
    result = extract_with_model(TASK, command, repo=None, universal=False, timeout_s=HELPER_LIMIT_S)
    # Fell back through the time-out (the model sleeps 60 s), not through the model's exit.
    assert result.source == "model_fallback:timeout"
    assert result.criteria == PATTERNS
    helper = int(pid_file.read_text())
    try:
        # Killed with its group; the kernel may take a moment to end it after the SIGKILL.
        assert wait_dead(helper)
    finally:
        kill_if_alive(helper)


def test_a_model_that_cannot_start_falls_back(tmp_path: Path) -> None:
    result = extract_with_model(TASK, [str(tmp_path / "no-such-model")], repo=None, universal=False)
    assert result.source == "model_fallback:not_runnable"
    assert result.criteria == PATTERNS


def test_an_empty_model_command_falls_back() -> None:
    result = extract_with_model(TASK, [], repo=None, universal=False)
    assert result.source == "model_fallback:no_command"


def test_the_fallback_keeps_the_universal_choice(tmp_path: Path) -> None:
    result = extract_with_model(TASK, printing(tmp_path, "nope"), repo=None, universal=True)
    assert result.criteria == extract_criteria(TASK, universal=True).criteria


def test_a_model_cannot_mark_its_criteria_universal(tmp_path: Path) -> None:
    claimed = {"type": "file_exists", "path": "a.py", "description": "d", "universal": True}
    command = printing(tmp_path, json.dumps({"criteria": [claimed]}))
    result = extract_with_model(TASK, command, repo=None, universal=False)
    assert result.criteria == [{**claimed, "universal": False}]


def test_the_model_runs_in_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text('{"scripts": {"test": "jest"}}')
    body = "(here / 'cwd.txt').write_text(str(pathlib.Path.cwd()))\nprint('{\"criteria\": []}')\n"
    result = extract_with_model(TASK, model(tmp_path, body), repo=repo, universal=True)
    assert (tmp_path / "cwd.txt").read_text() == str(repo.resolve())
    assert result.source == "model"
    assert result.criteria[0]["command"] == ["npm", "test"]  # the repository's own command
