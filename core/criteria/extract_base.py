"""What every extraction rule shares: the criteria found so far, and how one is built.

A rule (`core.criteria.extract_files`, `extract_content`, `extract_commands`) reads a block of
task text and adds to a `Found`: each criterion is validated as it is added, so a rule can never
store an invalid one, and each rule that fires or declines for a reason leaves a note.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.contracts.criteria import Criterion
from core.criteria.repo_commands import RepoCommands

CRITERION: TypeAdapter[Any] = TypeAdapter(Criterion)

CHANGELOG_FILES = ("CHANGELOG.md", "CHANGES.md", "HISTORY.md", "CHANGELOG.rst", "NEWS.md")
BACKLOG_FILES = ("BACKLOG.md", "TODO.md", "backlog.md", "todo.md", "docs/BACKLOG.md")
#: A dated entry. The document's ``## \d{4}-\d{2}-\d{2}`` assumes its own changelog layout; a
#: repository's changelog often heads entries "## [1.2.0] - 2026-02-15", which still has a date.
CHANGELOG_PATTERN = r"\d{4}-\d{2}-\d{2}"
BACKLOG_PATTERN = r"\[x\]"  # as the document says: a ticked task-list box

_FIELD_ORDER = ("type", "path", "pattern", "command", "cwd", "timeout_s", "description")


def canonical(criterion: Mapping[str, Any], *, universal: bool) -> dict[str, Any]:
    """Validate ``criterion`` and return it as a plain dict with defaults left out.

    Raises:
        pydantic.ValidationError: when it is not a valid criterion.
    """
    model = CRITERION.validate_python({**criterion, "universal": universal})
    dumped = model.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    ordered = {key: dumped[key] for key in _FIELD_ORDER if key in dumped}
    ordered.update((k, v) for k, v in dumped.items() if k not in ordered)
    ordered["universal"] = universal
    return ordered


def literal(text: str) -> str:
    """A regular expression matching ``text`` exactly, escaping only what ``re`` needs.

    ``re.escape`` also escapes spaces and ``#``, which makes a stored pattern such as
    ``## Installation`` unreadable for the person reviewing the criteria.
    """
    return _REGEX_SPECIAL.sub(r"\\\g<0>", text)


_REGEX_SPECIAL = re.compile(r"[.^$*+?{}\[\]\\|()]")


_SHELL_CHARS = "|;&><$`"
_SETS_VARIABLE = re.compile(r"[A-Za-z_]\w{0,255}=")


def command_problem(text: str) -> tuple[list[str] | None, str | None]:
    """Split ``text`` into an argument list, or say why it cannot run without a shell."""
    bad = sorted(ch for ch in set(_SHELL_CHARS + "\n") if ch in text)
    if bad:
        shown = " ".join("newline" if ch == "\n" else ch for ch in bad)
        return None, f"it uses shell syntax ({shown}), and criteria never run through a shell"
    if any(ch in text for ch in "*?["):
        return None, "it uses a glob, which only a shell would expand"
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        return None, f"it cannot be split into arguments ({exc})"
    if not argv:
        return None, "it is empty"
    if _SETS_VARIABLE.match(argv[0]):
        return None, "it sets an environment variable, which only a shell would do"
    return argv, None


@dataclass
class Found:
    """Criteria and notes collected from the task text, with where each was found."""

    items: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tests_asked: list[int] = field(default_factory=list)
    """Where the task asks for tests to be written (the suite must pass, unless it names a
    test command of its own)."""

    def add(self, at: int, criterion: dict[str, Any]) -> None:
        try:
            self.items.append((at, canonical(criterion, universal=False)))
        except ValidationError as exc:  # a rule produced something invalid: log, never store
            self.notes.append(f"dropped {criterion.get('type')}: {exc.errors()[0]['msg']}")

    def skip(self, what: str, why: str) -> None:
        self.notes.append(f"skipped {what}: {why}")


@dataclass(frozen=True)
class Context:
    """What the rules know besides the text: the repository's commands and root."""

    commands: RepoCommands
    repo: Path | None


def shown(argv: list[str]) -> str:
    """An argument list as a person would type it."""
    return shlex.join(argv)


def first_existing(repo: Path | None, names: tuple[str, ...]) -> str:
    """The first of ``names`` that is a file in ``repo``; the first name if none is."""
    if repo is not None:
        for name in names:
            if (repo / name).is_file():
                return name
    return names[0]
