"""Run ids: what the dispatch contract allows (64 characters, no white space), less only what
could leave a folder or act on an operator's screen; and their form inside a git ref."""

from __future__ import annotations

import re

import pytest

from core.contracts.names import run_id_problem, run_ref_part


@pytest.mark.parametrize(
    "run_id",
    ["nc:run:a8", "task-20260317-001", "a..b", "run*?[1]", "é-run", "x@host+1", "a" * 64, "7"],
)
def test_ids_the_contract_allows_are_taken(run_id: str) -> None:
    assert run_id_problem(run_id) is None


@pytest.mark.parametrize(
    ("run_id", "code"),
    [
        ("", "empty"),
        ("a" * 65, "run_id_too_long"),
        ("a b", "run_id_whitespace"),
        ("a\u2003b", "run_id_whitespace"),
        ("../x", "run_id_unsafe"),
        ("..", "run_id_unsafe"),
        ("a/b", "run_id_unsafe"),
        ("a\\b", "run_id_unsafe"),
        (".hidden", "run_id_unsafe"),
        ("-rf", "run_id_unsafe"),
        ("t1.acked", "run_id_unsafe"),
        ("a\x1b[2Jb", "run_id_unsafe"),
        ("a\u202eb", "run_id_unsafe"),
        ("a\x00b", "run_id_unsafe"),
    ],
)
def test_ids_that_could_leave_a_folder_or_act_on_a_screen_are_refused(
    run_id: str, code: str
) -> None:
    problem = run_id_problem(run_id)
    assert problem is not None and problem[0] == code, problem


def test_a_ref_part_is_the_id_when_git_takes_it_and_never_shared_by_two_ids() -> None:
    assert run_ref_part("task-1") == "task-1"
    assert run_ref_part("v1.2") == "v1.2"
    ids = ["nc:run:a8", "nc%3Arun%3Aa8", "a..b", "a%2E%2Eb", "x.lock", "é", "a.b.", "run*?[1]"]
    parts = [run_ref_part(i) for i in ids]
    assert len(set(parts)) == len(ids)
    for part in parts:  # git check-ref-format's rules for one component
        assert not re.search(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{", part), part
        assert not part.startswith(".") and not part.endswith((".lock", ".")), part
