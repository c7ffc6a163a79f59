"""Acceptance criteria and the dispatch record that carries them (models only).

From the constraint-extraction document: criteria are extracted from a task at dispatch time,
stored with the dispatch, and verified mechanically at completion. Extraction and verification are
built elsewhere; these models say what a well-formed criterion, record and verification result
is, so that everything that stores or shows them agrees.

Two deliberate tightenings of the document, both for safety when criteria are later run:
paths must be relative and stay inside the repository, and a ``command`` may be an argument list
(run without a shell) — a string command runs through a shell only when ``shell`` is true.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from core.contracts.errors import ValidationReport, sorted_errors
from core.contracts.jsondoc import as_object
from core.contracts.names import relative_path_problem
from core.contracts.patterns import pattern_problem
from core.contracts.pydantic_errors import from_validation_error

CRITERION_TYPES = (
    "file_exists",
    "test_pass",
    "content_match",
    "command_success",
    "no_lint_errors",
    "changelog_updated",
    "backlog_updated",
)

MAX_CRITERIA: Final = 50
"""The most acceptance criteria a run may carry. Each is verified in turn with a time limit of
its own, so a run listing thousands would hold a verifier for days; no real task needs 50."""


def _safe_path(value: str) -> str:
    problem = relative_path_problem(value.replace("{workspace}", "w"))
    if problem:
        raise PydanticCustomError(problem[0], problem[1])
    return value


def _compiles(value: str) -> str:
    # Through the one module that handles patterns from outside; it also caps their length.
    problem = pattern_problem(value)
    if problem is not None:
        raise PydanticCustomError(
            "bad_pattern",
            "pattern is not a valid regular expression: {reason}.",
            {"reason": problem},
        )
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty", "must not be blank.")
    return value


def _argv_not_empty(value: str | list[str]) -> str | list[str]:
    if isinstance(value, list):
        if not value or not value[0].strip():
            raise PydanticCustomError("empty", "must not be an empty argument list.")
    elif not value.strip():
        raise PydanticCustomError("empty", "must not be blank.")
    return value


Text = Annotated[str, AfterValidator(_not_blank)]
SafePath = Annotated[str, AfterValidator(_safe_path)]
Pattern = Annotated[str, AfterValidator(_compiles)]
Command = Annotated[str | list[str], AfterValidator(_argv_not_empty)]
Timestamp = Annotated[datetime, Field(strict=False)]


class _Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    description: Text
    """What a person should read: why this criterion exists."""
    universal: bool = False
    """True for criteria added by the universal checklist rather than taken from the task."""


class _CommandCriterion(_Criterion):
    command: Command
    """An argument list (preferred: no shell) or a string (run with a shell only if ``shell``)."""
    shell: bool = False
    """Run a string command through a shell. Off by default: task text never meets a shell."""
    cwd: SafePath = "."
    """Where to run, relative to the repository root."""
    timeout_s: Annotated[int, Field(gt=0, le=3600)] = 300
    """Per-criterion time limit in seconds."""


class FileExists(_Criterion):
    type: Literal["file_exists"]
    path: SafePath


class TestPass(_CommandCriterion):
    __test__ = False  # not a pytest test class, despite the name
    type: Literal["test_pass"]
    pattern: Pattern | None = None
    """Optional: the output must also match this regular expression."""


class ContentMatch(_Criterion):
    type: Literal["content_match"]
    path: SafePath
    pattern: Pattern


class CommandSuccess(_CommandCriterion):
    type: Literal["command_success"]


class NoLintErrors(_CommandCriterion):
    type: Literal["no_lint_errors"]


class ChangelogUpdated(_Criterion):
    type: Literal["changelog_updated"]
    path: SafePath
    pattern: Pattern


class BacklogUpdated(_Criterion):
    type: Literal["backlog_updated"]
    path: SafePath
    pattern: Pattern


Criterion = Annotated[
    FileExists
    | TestPass
    | ContentMatch
    | CommandSuccess
    | NoLintErrors
    | ChangelogUpdated
    | BacklogUpdated,
    Field(discriminator="type"),
]


def _at_most_the_cap(value: object) -> object:
    # Before the items are validated: counting is cheap, compiling 10,000 patterns is not.
    if isinstance(value, list) and len(value) > MAX_CRITERIA:
        raise PydanticCustomError(
            "too_many_criteria",
            "acceptance_criteria lists {count} criteria; a run may have at most {cap}.",
            {"count": len(value), "cap": MAX_CRITERIA},
        )
    return value


Criteria = Annotated[list[Criterion], BeforeValidator(_at_most_the_cap)]
"""A dispatch's acceptance criteria: at most `MAX_CRITERIA`."""


class CriterionResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    criterion: dict[str, Any]
    passed: bool
    output: str
    duration_ms: Annotated[int, Field(ge=0)] | None = None
    not_checked: bool = False
    """Ours: the criterion was not run (a command with no repository to run it in)."""


class VerificationResults(BaseModel):
    """The document's ``verification_results`` shape, plus the override's who and when."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    verified_at: Timestamp
    passed: bool
    criteria_results: list[CriterionResult]
    override_applied: bool = False
    override_reason: str | None = None
    overridden_at: Timestamp | None = None
    overridden_by: str | None = None

    @model_validator(mode="after")
    def _override_needs_reason(self) -> VerificationResults:
        if self.override_applied and (
            self.override_reason is None or not self.override_reason.strip()
        ):
            raise PydanticCustomError(
                "override_reason_required",
                "an applied override must carry a non-blank override_reason.",
            )
        return self


class DispatchRecord(BaseModel):
    """The constraint-extraction document's enhanced dispatch record."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: Text
    workspace: Text
    workspace_path: Text
    task: Text
    complexity: Literal["low", "medium", "high"] | None = None
    priority: Literal["low", "normal", "medium", "high", "urgent"] | None = None
    model: str | None = None
    status: Literal["pending", "running", "completed", "failed"]
    created_at: Timestamp
    updated_at: Timestamp
    acceptance_criteria: Criteria = Field(default_factory=list)
    universal_criteria: bool = True
    """Append the universal checklist (tests, lint, changelog, backlog) at verification."""
    verification_results: VerificationResults | None = None


RECORD_KIND = "dispatch_record"


def validate_dispatch_record(data: bytes | str | Mapping[str, Any]) -> ValidationReport:
    """Validate a constraint-extraction dispatch record, collecting every problem."""
    report = ValidationReport(RECORD_KIND)
    loaded = as_object(data)
    if not loaded.ok:
        report.errors.extend(loaded.errors)
        return report
    doc: dict[str, Any] = loaded.value
    report.document = doc
    try:
        DispatchRecord.model_validate(doc)
    except ValidationError as exc:
        report.errors = sorted_errors(from_validation_error(exc, doc))
    return report
