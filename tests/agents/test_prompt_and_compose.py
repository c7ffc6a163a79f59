"""The agent's prompt says the task, how it is judged and how to finish; a completion composed
from git says what git shows and marks every field Jarvis derived."""

from __future__ import annotations

import json
from pathlib import Path

from core.agents.compose import DERIVED_NOTE, compose_completion
from core.agents.prompt import MAX_TASK_CHARS, build_prompt
from core.contracts.completion import extract_completion
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import commit, make_repo, run_git


def test_the_prompt_names_the_branch_tests_criteria_and_the_completion_fields() -> None:
    doc = dispatch_doc("r1", input="Fix the retry counter.", branch="jarvis-retry")
    criteria = [{"type": "file_exists", "path": "CHANGELOG.md", "description": "changelog kept"}]
    prompt = build_prompt(doc, criteria, "r1")
    assert "branch jarvis-retry" in prompt and "Fix the retry counter." in prompt
    assert "- pytest tests/test_retry.py" in prompt  # the sample's acceptance tests
    assert "- changelog kept" in prompt
    example = extract_completion(prompt).completion
    assert example is not None and example["run_id"] == "r1" and "pr_url" in example


def test_a_huge_task_is_cut_in_the_prompt() -> None:
    doc = dispatch_doc("r1", input="x" * (MAX_TASK_CHARS * 2))
    assert len(build_prompt(doc, [], "r1")) < MAX_TASK_CHARS + 3000


def test_a_composed_completion_is_what_git_shows_marked_derived(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "checkout")
    base = run_git(repo, "rev-parse", "HEAD")
    head = commit(repo, {"src/new.py": "x = 1\n", "README.md": "# changed\n"})
    doc = dispatch_doc("r1", branch="jarvis-retry")
    found = compose_completion(repo, doc, "r1", base_commit=base, final_text="All done.\n")
    assert found["commit_sha"] == head
    assert sorted(found["files_changed"]) == ["README.md", "src/new.py"]
    assert found["pr_skipped_reason"] == DERIVED_NOTE and found["summary"] == "All done."
    assert set(found["derived"]) >= {"commit_sha", "files_changed", "test_result", "risk"}
    json.dumps(found)  # printable as the completion block


def test_with_no_repository_the_composed_completion_claims_no_commit(tmp_path: Path) -> None:
    found = compose_completion(tmp_path, dispatch_doc("r1"), "r1", base_commit=None)
    assert (found["commit_sha"], found["files_changed"]) == ("", [])
