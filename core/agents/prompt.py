"""The prompt a coding agent gets for a run: the task, how it will be judged, and how to finish.

Built from the dispatch and the run's acceptance criteria, in plain words: the agent works in
its worktree on the run's branch, commits there (never pushes), and ends with the completion
block the gates read (docs/contracts.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.contracts.dispatch import P0_COMPLETION_FIELDS

#: A task text longer than this is cut in the prompt (the dispatch keeps it whole).
MAX_TASK_CHARS = 20_000


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def required_fields(dispatch: Mapping[str, Any]) -> list[str]:
    contract = dispatch.get("output_contract")
    listed = _strings(contract.get("required_fields")) if isinstance(contract, dict) else []
    return [*P0_COMPLETION_FIELDS, *(f for f in listed if f not in P0_COMPLETION_FIELDS)]


def build_prompt(
    dispatch: Mapping[str, Any],
    criteria: Sequence[Mapping[str, Any]],
    run_id: str,
    dispatch_file: Path | None = None,
) -> str:
    """The prompt; a task past `MAX_TASK_CHARS` is cut, and the agent is told where the whole
    dispatch is (``dispatch_file``), since a prompt is one argument of its command line."""
    task = str(dispatch.get("input") or dispatch.get("task") or "").strip()
    if (whole := len(task)) > MAX_TASK_CHARS:
        task = task[:MAX_TASK_CHARS] + " […]"
        if dispatch_file is not None:
            task += (
                f"\n(The task is cut here: it is {whole:,} characters long. Read it whole, "
                f"as the `input` field of the JSON file {dispatch_file}, before you start.)"
            )
    branch = str(dispatch.get("branch") or "")
    repo = str(dispatch.get("repo") or "the repository")
    parts = [
        f"You are working on {repo}, in a git worktree checked out on branch {branch}. "
        "Work only in this folder.",
        f"Task:\n{task}",
    ]
    tests = _strings(dispatch.get("acceptance_tests"))
    if tests:
        parts.append("Acceptance tests (run them before you finish):\n" +
                     "\n".join(f"- {t}" for t in tests))  # fmt: skip
    described = [str(c.get("description") or c.get("type")) for c in criteria]
    if described:
        parts.append("Jarvis will verify these criteria afterwards:\n" +
                     "\n".join(f"- {d}" for d in described))  # fmt: skip
    fields = required_fields(dispatch)
    example: dict[str, Any] = {
        "run_id": run_id,
        "branch": branch,
        "commit_sha": "<the full sha of your last commit>",
        "files_changed": ["<every file your commits changed>"],
        "test_result": "<what the acceptance tests said>",
        "risk": "<low|medium|high: why>",
    }
    for name in fields:
        example.setdefault(name, f"<{name.replace('_', ' ')}>")
    if "pr_url" not in fields and "pr_skipped_reason" not in example:
        example["pr_skipped_reason"] = "<why there is no pull request>"
    parts.append(
        f"When you are done: commit every change on branch {branch} (do not push, do not "
        "switch branches), then end your answer with exactly one completion block, with "
        f"these fields ({', '.join(fields)}):\n<completion>\n"
        + json.dumps(example, indent=2)
        + "\n</completion>"
    )
    return "\n\n".join(parts)
