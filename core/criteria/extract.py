"""Extract acceptance criteria from a task's text with patterns, and add the universal ones.

The constraint-extraction document: at dispatch time, parse the task for explicit criteria
(files to create, tests that must pass, content a file must hold, commands that must succeed,
lint and type checks, dependencies), convert them to structured criteria, and append the
universal checklist (tests, lint, changelog, backlog) unless ``universal_criteria`` is false.

Patterns are deliberately conservative: a criterion that is not there costs a reviewer a minute,
while a wrong one fails a finished task. So:

* A file becomes ``file_exists`` only after a creation verb ("create", "add a new file", "write")
  or before "must exist"; merely mentioning a file asks for nothing.
* A path must look like a file (a known extension or a well-known name such as ``Makefile``).
  Abbreviations ("e.g.", "i.e."), version numbers ("v1.2.3", "Python 3.12"), product names
  ("Node.js") and anything inside a URL or an e-mail address never qualify; a sentence's final
  period is not part of a path.
* Paths must be relative and stay inside the repository; others are skipped with a note.
* A command is taken only from backticks or quotes, next to "run" or "must pass/succeed", and
  becomes an argument list; anything needing a shell (``| ; & > < $``, a backquote, globs,
  ``VAR=value`` prefixes) is skipped with a note. No criterion from task text ever sets ``shell``.
* Fenced code blocks are ignored: they show code, they do not state requirements.

Each rule that fires or declines for a reason says so in ``notes``, for the dispatch log.

The rules read text prepared by `core.criteria.extract_text` (white space collapsed, quotes and
addresses stood in for by one character each), and every pattern here has a bounded reach, so
extraction is linear in the task's length whatever its shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.criteria import extract_commands, extract_content, extract_files
from core.criteria.allowlist import approval_notes
from core.criteria.extract_base import (
    BACKLOG_FILES,
    BACKLOG_PATTERN,
    CHANGELOG_FILES,
    CHANGELOG_PATTERN,
    Context,
    Found,
    canonical,
    command_problem,
    first_existing,
    shown,
)
from core.criteria.extract_text import FoundPath, read_blocks
from core.criteria.repo_commands import RepoCommands, infer_commands

__all__ = [
    "CHANGELOG_FILES",
    "BACKLOG_FILES",
    "Extraction",
    "canonical",
    "command_problem",
    "commands_note",
    "extract_criteria",
    "merge_criteria",
    "pattern_criteria",
    "task_text_of",
    "unique",
    "universal_criteria",
]


@dataclass(frozen=True)
class Extraction:
    """Criteria extracted for one task, how they were found, and why each was or was not."""

    criteria: list[dict[str, Any]]
    """Plain dicts, each valid for `core.contracts.criteria.Criterion`."""
    source: str
    """``patterns``, ``model`` or ``model_fallback:<reason>``."""
    notes: list[str]
    """Why things were added or skipped, for the log."""


# --------------------------------------------------------------------------------------------
# Gathering the task text
# --------------------------------------------------------------------------------------------


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def task_text_of(dispatch: Mapping[str, Any]) -> str:
    """All the task text in a dispatch, one paragraph per piece; never raises.

    Reads a Jarvis dispatch's ``input`` and ``acceptance_tests``, an OpenClaw request's ``goal``
    (title, description, acceptance criteria, test plan) and a free ``task`` or ``description``
    string. Pieces of the wrong type are ignored. Paragraphs are separated by blank lines so that
    no pattern reads across two pieces.
    """
    if not isinstance(dispatch, Mapping):
        return ""
    pieces: list[str] = []
    for key in ("input", "task", "description"):
        pieces.extend(_texts(dispatch.get(key)))
    goal = dispatch.get("goal")
    if isinstance(goal, Mapping):
        for key in ("title", "description", "acceptance_criteria", "test_plan"):
            pieces.extend(_texts(goal.get(key)))
    elif isinstance(goal, str):
        pieces.extend(_texts(goal))
    pieces.extend(_texts(dispatch.get("acceptance_tests")))
    return "\n\n".join(p.strip() for p in pieces)


# --------------------------------------------------------------------------------------------
# Putting it together
# --------------------------------------------------------------------------------------------


def _key(criterion: Mapping[str, Any]) -> tuple[Any, ...]:
    command = criterion.get("command")
    return (
        criterion["type"],
        criterion.get("path"),
        criterion.get("pattern"),
        tuple(command) if isinstance(command, list) else command,
        criterion.get("cwd"),
    )


def pattern_criteria(
    task_text: str, commands: RepoCommands, repo: Path | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The criteria the patterns find in ``task_text``, in reading order, without duplicates."""
    found = Found()
    text = task_text if isinstance(task_text, str) else ""
    blocks, fenced = read_blocks(text)
    if fenced:
        found.notes.append("ignored fenced code blocks: they show code, not requirements")
    ctx = Context(commands, repo)
    last: FoundPath | None = None
    for block in blocks:
        extract_content.contents(found, block, last)
        extract_content.dependencies(found, block, ctx)
        extract_commands.commands(found, block)
        extract_files.files(found, block)
        extract_commands.tests_in_words(found, block, ctx)
        extract_commands.lint_in_words(found, block, ctx)
        extract_commands.bookkeeping(found, block, ctx)
        extract_commands.tests_written(found, block)
        last = block.last_path_before(len(block.plain)) or last
    if found.tests_asked and not any(c["type"] == "test_pass" for _, c in found.items):
        suite = {"type": "test_pass", "command": commands.test, "description": "Tests must pass"}
        found.add(found.tests_asked[0], suite)
        found.notes.append("tests are to be written and no test command was named: the suite runs")
    ordered = [criterion for _, criterion in sorted(found.items, key=lambda item: item[0])]
    # "Add an entry to docs/CHANGELOG.md": the changelog criterion checks that file already.
    booked = {c["path"] for c in ordered if c["type"] in ("changelog_updated", "backlog_updated")}
    ordered = [c for c in ordered if not (c["type"] == "file_exists" and c["path"] in booked)]
    return unique(ordered), found.notes


def unique(criteria: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``criteria`` without repeats (same type, path, pattern, command and cwd), first kept."""
    seen: set[tuple[Any, ...]] = set()
    kept: list[dict[str, Any]] = []
    for criterion in criteria:
        if _key(criterion) not in seen:
            seen.add(_key(criterion))
            kept.append(criterion)
    return kept


def universal_criteria(commands: RepoCommands, repo: Path | None) -> list[dict[str, Any]]:
    """The document's universal checklist as criteria, with the repository's own commands."""
    changelog = first_existing(repo, CHANGELOG_FILES)
    backlog = first_existing(repo, BACKLOG_FILES)
    raw: list[dict[str, Any]] = [
        {
            "type": "test_pass",
            "command": commands.test,
            "description": "All existing tests must pass",
        },
        {
            "type": "no_lint_errors",
            "command": commands.lint,
            "description": "No linting or type errors",
        },
        {
            "type": "changelog_updated",
            "path": changelog,
            "pattern": CHANGELOG_PATTERN,
            "description": "Changelog entry added for today",
        },
        {
            "type": "backlog_updated",
            "path": backlog,
            "pattern": BACKLOG_PATTERN,
            "description": "Backlog task marked complete",
        },
    ]
    return [canonical(c, universal=True) for c in raw]


def merge_criteria(
    task: list[dict[str, Any]], universal: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Task criteria, then the universal ones the task did not already ask for.

    The task's copy wins a tie: it was asked for explicitly, so it must stay even when a later
    dispatch turns the universal checklist off.
    """
    taken = {_key(c) for c in task}
    merged = list(task)
    notes: list[str] = []
    for criterion in universal:
        if _key(criterion) in taken:
            notes.append(f"universal {criterion['type']} already asked for by the task; kept once")
        else:
            merged.append(criterion)
    return merged, notes


def commands_note(commands: RepoCommands) -> list[str]:
    """Log lines saying which commands were inferred, from which file, and what was unreadable."""
    both = f"test `{shown(commands.test)}`, lint `{shown(commands.lint)}`"
    return [f"commands from {commands.source}: {both}", *commands.notes]


def extract_criteria(
    task_text: str, *, repo: Path | None = None, universal: bool = True
) -> Extraction:
    """Extract criteria from ``task_text`` with patterns, plus the universal ones; never raises.

    Args:
        task_text: The task, e.g. from `task_text_of`.
        repo: The target repository's root, used to infer test and lint commands and to find
            its changelog, backlog and dependency manifest. ``None`` uses the defaults.
        universal: Append the universal checklist (tests, lint, changelog, backlog).

    Returns:
        The criteria, task-derived first in reading order, with ``source`` ``patterns``.
    """
    commands = infer_commands(repo)
    task, notes = pattern_criteria(task_text, commands, repo)
    if universal:
        task, merge_notes = merge_criteria(task, universal_criteria(commands, repo))
        notes.extend(merge_notes)
    return Extraction(task, "patterns", [*approval_notes(task), *commands_note(commands), *notes])
