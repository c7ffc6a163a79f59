"""The prompt a NanoClaw runner gets for a Jarvis run, laid out as NanoClaw's host lays it out.

NanoClaw's host (``buildWorkerDispatchPrompt`` in ``src/index.ts``) does not hand its worker the
dispatch JSON: it writes an instruction text, with ``Run ID:`` … ``Browser evidence required:``
lines, the task, the numbered acceptance tests, the completion rules and the required fields.
This is that text, with the lines that describe NanoClaw's own workspace replaced by what holds
under Jarvis: the run's worktree *is* the working directory, already on the run's branch, and
Jarvis's gates always want a real commit (no ``n/a`` placeholder for ``ping-`` runs). The
criteria Jarvis will verify afterwards are listed, as in Jarvis's own agent prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.agents.prompt import MAX_TASK_CHARS, required_fields
from core.contracts.dispatch import evidence_required


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _flag(value: bool) -> str:
    return "true" if value else "false"


def worker_prompt(
    dispatch: Mapping[str, Any],
    criteria: Sequence[Mapping[str, Any]],
    run_id: str,
    *,
    workdir: str,
) -> str:
    """The runner's ``prompt``.

    Args:
        workdir: the working directory as the runner sees it (``/workspace/group`` in a
            container, the worktree's path for a plain process).
    """
    task = str(dispatch.get("input") or "").strip()
    if len(task) > MAX_TASK_CHARS:
        task = task[:MAX_TASK_CHARS] + " […]"
    branch = str(dispatch.get("branch") or "")
    repo = str(dispatch.get("repo") or "")
    fields = required_fields(dispatch)
    if "pr_url" not in fields and "pr_skipped_reason" not in fields:
        fields.append("pr_url")
    session_rule = (
        '- REQUIRED: include "session_id": "<current-session-id>" in completion output.'
        if "session_id" in fields
        else '- OPTIONAL: include "session_id": "<current-session-id>" to help follow-up '
        "dispatch continuity."
    )
    tests = _strings(dispatch.get("acceptance_tests"))
    described = [str(c.get("description") or c.get("type")) for c in criteria]
    lines = [
        "You are a Jarvis worker.",
        "Execute exactly one dispatch task and return a strict completion contract.",
        f"Run ID: {run_id}",
        f"Request ID: {dispatch.get('request_id') or 'n/a'}",
        f"Task Type: {dispatch.get('task_type')}",
        f"Repository: {repo}",
        f"Branch: {branch}",
        f"Priority: {dispatch.get('priority') or 'normal'}",
        f"UI impacting: {_flag(dispatch.get('ui_impacting') is True)}",
        f"Browser evidence required: {_flag(evidence_required(dispatch))}",
        "",
        "CRITICAL: Container lifecycle - this container will EXIT after completing this task.",
        "- The container runs once and shuts down when done.",
        session_rule,
        "- Andy will pass this session_id to the next worker to continue the conversation.",
        "",
        "Task instructions:",
        task,
        "",
        "Branch execution rules:",
        f"- {workdir} is a git checkout of {repo}, already checked out on branch {branch}: "
        "edit and commit there.",
        "- Do not switch branches, do not push.",
        "",
        "Acceptance tests (all required):",
        *(f"{n}. {test}" for n, test in enumerate(tests, 1)),
    ]
    if described:
        lines += ["", "Jarvis will verify these criteria afterwards:"]
        lines += [f"- {d}" for d in described]
    lines += [
        "",
        "Completion output rules (strict):",
        "- Return exactly one <completion>...</completion> block.",
        "- The block body must be valid JSON.",
        "- Do not include markdown fences.",
        "- Do not include narrative text before or after the <completion> block.",
        f"- Execute commands from {workdir} only; do not use other directories.",
        f'- completion.run_id must exactly equal "{run_id}".',
        f'- completion.branch must exactly equal "{branch}".',
        "- completion.commit_sha must be the full git SHA of your last commit on the branch.",
        "- files_changed must be a JSON array of changed file paths.",
        '- OPTIONAL: Add "session_id": "<session-id>" if you want follow-up tasks to continue '
        "this session.",
        '- OPTIONAL: Add "learnings": ["..."] with 1-3 genuinely new insights discovered during '
        "this task.",
        "",
        "Required completion fields:",
        *(f"- {name}" for name in fields),
    ]
    return "\n".join(lines)
