"""A completion Jarvis composes from git, for an agent that printed none of its own.

The branch's head, the files changed since the base, and what is known of tests and risk —
every field Jarvis derived listed under ``derived``, so the completion is shown for what it is.
The gates then judge it like any other: a head that is not on the branch, or changes left
uncommitted, still fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.repos.claims import changes_between, find_repository
from core.repos.git import GitError, resolve_commit

DERIVED_NOTE = "composed by Jarvis from git: the agent printed no completion"


def compose_completion(
    checkout: Path,
    dispatch: Mapping[str, Any],
    run_id: str,
    *,
    base_commit: str | None,
    final_text: str = "",
) -> dict[str, Any]:
    """The completion git shows for the run (fields that cannot be known say so)."""
    branch = str(dispatch.get("branch") or "")
    completion: dict[str, Any] = {
        "run_id": run_id,
        "branch": branch,
        "commit_sha": "",
        "files_changed": [],
        "test_result": "not reported by the agent; Jarvis verifies the acceptance criteria",
        "risk": "unknown: not assessed by the agent",
        "pr_skipped_reason": DERIVED_NOTE,
        "derived": ["commit_sha", "files_changed", "test_result", "risk", "pr_skipped_reason"],
    }
    if final_text.strip():
        completion["summary"] = " ".join(final_text.split())[:400]
    repo = find_repository(checkout)
    if repo is None:
        return completion
    try:
        head = resolve_commit(repo, "HEAD")
        if head is None:
            return completion
        completion["commit_sha"] = head
        if base_commit and resolve_commit(repo, base_commit):
            completion["files_changed"] = [f.path for f in changes_between(repo, base_commit, head)]
    except GitError:
        pass
    return completion
