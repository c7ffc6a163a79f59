"""Optional model-based criterion extraction, falling back to the patterns on any failure.

The constraint-extraction document allows "a small language model or regex patterns". Here the
model is whatever command the operator configures (an argument list, run without a shell): it
gets the document's extraction prompt on standard input, with the task text inside the prompt as
data, and must print the criteria as JSON. The task text never reaches a command line or a shell.

The output is held to the planner contract's discipline (`core.contracts.planner`): strict JSON,
then exactly one repair pass (`extract_and_close`: cut out the first JSON object, close it if
truncated), then a schema that never triggers a repair. The prompt asks for
``{"criteria": [...]}`` rather than the document's bare array because the repair pass finds
objects; a bare array is still accepted when it is the whole output. Every criterion must
validate against `core.contracts.criteria`; a string command is split into arguments like task
text would be, and ``shell: true`` is refused, since the model only rephrases task text.

Any failure — the command cannot start, exits non-zero, runs past its time limit, prints
something that is not JSON, or names an invalid criterion — means the pattern extractor's result
is used instead, with ``source`` ``model_fallback:<reason>`` and a note saying why. One invalid
criterion rejects the whole output: a model that got one criterion wrong may have got others
subtly wrong too.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.contracts.jsondoc import decode_text, loads_strict
from core.contracts.planner import extract_and_close
from core.criteria.allowlist import approval_notes
from core.criteria.extract import (
    Extraction,
    canonical,
    command_problem,
    commands_note,
    extract_criteria,
    merge_criteria,
    unique,
    universal_criteria,
)
from core.criteria.repo_commands import infer_commands

PROMPT = '''You are analyzing a task description to extract explicit acceptance criteria.

Task description:
"""
{task}
"""

Workspace: {workspace}

Extract all verifiable acceptance criteria from the task description. Return one JSON object,
{"criteria": [...]}, holding an array of criterion objects, and nothing else.

Supported criterion types:
- file_exists: A file must exist at a specific path
- test_pass: A test command must succeed
- content_match: A file must contain a specific pattern (regex)
- command_success: A command must run successfully (exit code 0)
- no_lint_errors: Linting must pass with no errors
- changelog_updated: Changelog must have an entry for today
- backlog_updated: Backlog task must be marked complete

Every criterion has "type" and "description". file_exists has "path"; content_match,
changelog_updated and backlog_updated have "path" and "pattern"; test_pass, command_success and
no_lint_errors have "command", a JSON array of arguments (it runs without a shell). Paths are
relative to the repository root.

Example output:
{"criteria": [
  {
    "type": "file_exists",
    "path": "src/components/Header.tsx",
    "description": "Header component file must exist"
  },
  {
    "type": "test_pass",
    "command": ["npm", "test", "--", "Header.test.tsx"],
    "description": "Header component tests must pass"
  }
]}

Only extract criteria that are explicitly stated or strongly implied in the task description.
Do not invent criteria that are not mentioned.
Return {"criteria": []} if no explicit criteria are found.
'''


def build_prompt(task_text: str, workspace: str) -> str:
    """The extraction prompt for ``task_text``.

    The workspace is filled in first so that a task mentioning ``{workspace}`` keeps its text.
    """
    return PROMPT.replace("{workspace}", workspace).replace("{task}", task_text)


@dataclass(frozen=True)
class _Failure:
    reason: str
    """A short code for ``model_fallback:<reason>``."""
    detail: str
    """What happened, for the note."""


@dataclass(frozen=True)
class _Parsed:
    items: list[Any]
    repaired: bool


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # The command runs in its own session, so its process group id is its pid; killing the
    # group also ends any helpers it started, which would otherwise hold the pipes open.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


def _run(command: list[str], prompt: str, cwd: Path | None, timeout_s: float) -> bytes | _Failure:
    if not command or not all(isinstance(a, str) and a for a in command):
        return _Failure("no_command", "the model command is empty")
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        return _Failure("not_runnable", f"`{shlex.join(command)}` could not start: {exc}")
    try:
        out, err = proc.communicate(prompt.encode("utf-8"), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return _Failure("timeout", f"`{shlex.join(command)}` ran past {timeout_s:g} s")
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip()[-300:]
        return _Failure("exit_status", f"exited with status {proc.returncode}: {tail}")
    return out


def _parse(output: bytes) -> _Parsed | _Failure:
    """Strict JSON, then one repair pass, as the planner contract does."""
    first = loads_strict(output)
    if first.ok:
        value, repaired = first.value, False
    elif any(e.code == "not_json" for e in first.errors):
        decoded, _ = decode_text(output)
        candidate, problem = extract_and_close(decoded or "")
        if candidate is None:
            return _Failure("invalid_json", problem.message if problem else "no JSON object")
        second = loads_strict(candidate)
        if not second.ok:
            return _Failure("invalid_json", f"after the repair pass: {second.errors[0].message}")
        value, repaired = second.value, True
    else:
        return _Failure("invalid_json", first.errors[0].message)
    if isinstance(value, list) and not repaired:
        return _Parsed(value, False)
    if (
        isinstance(value, dict)
        and set(value) == {"criteria"}
        and isinstance(value["criteria"], list)
    ):
        return _Parsed(value["criteria"], repaired)
    return _Failure("invalid_criteria", 'the output must be {"criteria": [...]} and nothing else')


def _criterion(item: Any) -> dict[str, Any] | str:
    """One model criterion as a canonical dict, or why it is not acceptable."""
    if not isinstance(item, dict):
        return "is not an object"
    data = dict(item)
    if data.pop("shell", False) is not False:
        return "asks for a shell; criteria from task text never run through one"
    data.pop("universal", None)  # the universal checklist is added here, not by the model
    if isinstance(data.get("command"), str):
        argv, problem = command_problem(data["command"])
        if argv is None:
            return f"has a command that cannot run without a shell: {problem}"
        data["command"] = argv
    try:
        return canonical(data, universal=False)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        return f"is invalid at {where or 'the top'}: {error['msg']}"


def _criteria(items: list[Any]) -> list[dict[str, Any]] | _Failure:
    criteria: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        result = _criterion(item)
        if isinstance(result, str):
            return _Failure("invalid_criteria", f"criterion {index} {result}")
        criteria.append(result)
    return unique(criteria)


def _fallback(failure: _Failure, task_text: str, repo: Path | None, universal: bool) -> Extraction:
    patterns = extract_criteria(task_text, repo=repo, universal=universal)
    note = f"model extraction failed ({failure.reason}): {failure.detail}; used the patterns"
    return Extraction(
        patterns.criteria, f"model_fallback:{failure.reason}", [note, *patterns.notes]
    )


def extract_with_model(
    task_text: str,
    command: list[str],
    *,
    repo: Path | None,
    universal: bool,
    timeout_s: float = 60,
) -> Extraction:
    """Extract criteria by running ``command`` as the model, or fall back to the patterns.

    Args:
        task_text: The task, e.g. from `core.criteria.extract.task_text_of`; it goes to the
            model inside the prompt, on standard input.
        command: The model command as an argument list; it runs without a shell, in ``repo``
            when given, and must print the criteria as JSON on standard output.
        repo: The target repository, for the universal criteria's commands and files.
        universal: Append the universal checklist.
        timeout_s: How long the model may run before its process group is killed.

    Returns:
        ``source`` ``model`` with the model's criteria (plus the universal ones), or the pattern
        extraction with ``source`` ``model_fallback:<reason>``.
    """
    workspace = repo.name if repo is not None else "unknown"
    cwd = repo if repo is not None and repo.is_dir() else None
    output = _run(list(command), build_prompt(task_text, workspace), cwd, timeout_s)
    if isinstance(output, _Failure):
        return _fallback(output, task_text, repo, universal)
    parsed = _parse(output)
    if isinstance(parsed, _Failure):
        return _fallback(parsed, task_text, repo, universal)
    criteria = _criteria(parsed.items)
    if isinstance(criteria, _Failure):
        return _fallback(criteria, task_text, repo, universal)
    commands = infer_commands(repo)
    how = " after the repair pass" if parsed.repaired else ""
    notes = [f"model `{shlex.join(command)}` gave {len(criteria)} criteria{how}"]
    if universal:
        criteria, merged = merge_criteria(criteria, universal_criteria(commands, repo))
        notes.extend(merged)
    return Extraction(
        criteria, "model", [*approval_notes(criteria), *commands_note(commands), *notes]
    )
