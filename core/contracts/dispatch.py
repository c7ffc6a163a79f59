"""The Jarvis worker dispatch: the strict JSON a dispatcher hands a ``jarvis-worker-*`` lane.

Rules come from the dispatch contract and the architecture's P0 invariants (which win where they
disagree: ``context_intent`` is required, ``request_id`` optional). Field-local rules live on the
model as annotated types, so pydantic reports every failing field at once; rules that relate
fields live in `_cross_field_errors`, which reads the raw document defensively so it can run even
when some fields have the wrong type. Together they report every problem, not the first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from core.contracts.criteria import Criteria
from core.contracts.errors import (
    FieldError,
    ValidationReport,
    preview,
    sorted_errors,
)
from core.contracts.jsondoc import as_object
from core.contracts.names import branch_problem, ref_problem, repo_problem, run_id_problem
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.screenshot_ban import screenshot_errors

KIND = "jarvis_dispatch"

TaskType = Literal["analyze", "implement", "fix", "refactor", "test", "release", "research", "code"]
TASK_TYPES: tuple[str, ...] = get_args(TaskType)

#: The completion fields every dispatch must ask for (architecture P0 invariant 5), besides one of
#: `PR_FIELDS`.
P0_COMPLETION_FIELDS = ("run_id", "branch", "commit_sha", "files_changed", "test_result", "risk")
PR_FIELDS = ("pr_url", "pr_skipped_reason")


def _check(problem: tuple[str, str] | None) -> None:
    if problem:
        raise PydanticCustomError(problem[0], problem[1])


def _run_id(value: str) -> str:
    _check(run_id_problem(value))
    return value


def _repo(value: str) -> str:
    _check(repo_problem(value))
    return value


def _branch(value: str) -> str:
    _check(branch_problem(value))
    return value


def _base_branch(value: str) -> str:
    problem = ref_problem(value)
    if problem:
        raise PydanticCustomError("base_branch_format", problem)
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty", "must not be blank.")
    return value


def _unique(values: list[str]) -> list[str]:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise PydanticCustomError(
                "duplicate_item", "{value} is listed more than once.", {"value": preview(value)}
            )
        seen.add(value)
    return values


RunId = Annotated[str, AfterValidator(_run_id)]
Text = Annotated[str, AfterValidator(_not_blank)]
NonEmptyTexts = Annotated[list[Text], Field(min_length=1)]


class OutputContract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    required_fields: Annotated[NonEmptyTexts, AfterValidator(_unique)]
    """Completion fields the worker must return; must include every P0 completion field."""
    browser_evidence_required: bool | None = None
    """Explicit override of the browser-evidence requirement that ``ui_impacting`` implies."""


class JarvisDispatch(BaseModel):
    """A validated worker dispatch."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    run_id: RunId
    """Canonical run identity, chosen by the dispatcher; retries keep it."""
    task_type: TaskType
    context_intent: Literal["fresh", "continue"]
    """Session intent: start a fresh worker session or continue an earlier one."""
    input: Text
    """The task, in words."""
    repo: Annotated[str, AfterValidator(_repo)]
    branch: Annotated[str, AfterValidator(_branch)]
    base_branch: Annotated[str, AfterValidator(_base_branch)] | None = None
    """Where the run's branch starts (default: the repository's configured ``base_ref``)."""
    acceptance_tests: NonEmptyTexts
    output_contract: OutputContract
    ui_impacting: bool | None = None
    """When true, browser evidence is required unless the output contract says otherwise."""
    priority: Literal["low", "normal", "high", "urgent"] | None = None
    request_id: Text | None = None
    session_id: Annotated[Text, Field(max_length=128)] | None = None
    parent_run_id: RunId | None = None
    """The run this one follows up on, for lineage."""
    project_key: Text | None = None
    """NanoClaw's key for the project's memory, when it is not the repository; kept, unused."""
    acceptance_criteria: Criteria | None = None
    universal_criteria: bool | None = None

    @property
    def browser_evidence_required(self) -> bool:
        override = self.output_contract.browser_evidence_required
        return override if override is not None else self.ui_impacting is True


def evidence_required(doc: Mapping[str, Any]) -> bool:
    """Whether a dispatch requires browser evidence.

    An explicit ``output_contract.browser_evidence_required`` boolean wins; otherwise
    ``ui_impacting: true`` requires it.
    """
    contract = doc.get("output_contract")
    override = contract.get("browser_evidence_required") if isinstance(contract, dict) else None
    if isinstance(override, bool):
        return override
    return doc.get("ui_impacting") is True


def _string_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _required_fields(doc: Mapping[str, Any]) -> list[str]:
    contract = doc.get("output_contract")
    return _string_list(contract.get("required_fields")) if isinstance(contract, dict) else []


def _cross_field_errors(doc: Mapping[str, Any], listed: list[str]) -> Iterator[FieldError]:
    contract = doc.get("output_contract")
    listed_set = set(listed)
    if isinstance(contract, dict) and isinstance(contract.get("required_fields"), list) and listed:
        missing = [f for f in P0_COMPLETION_FIELDS if f not in listed_set]
        if not listed_set & set(PR_FIELDS):
            missing.append("pr_url or pr_skipped_reason")
        if missing:
            yield FieldError(
                "output_contract.required_fields",
                "required_fields_incomplete",
                "output_contract.required_fields must include the completion fields "
                f"{', '.join(missing)}.",
            )

    intent = doc.get("context_intent")
    if intent == "fresh" and doc.get("session_id") is not None:
        yield FieldError(
            "session_id",
            "session_id_with_fresh_intent",
            "A 'fresh' dispatch must not include session_id; use context_intent 'continue' to "
            "resume a session.",
        )
    if intent == "continue" and isinstance(contract, dict) and "session_id" not in listed_set:
        yield FieldError(
            "output_contract.required_fields",
            "session_id_not_required",
            "A 'continue' dispatch must list session_id in output_contract.required_fields.",
        )

    parent = doc.get("parent_run_id")
    if isinstance(parent, str) and parent == doc.get("run_id"):
        yield FieldError("parent_run_id", "parent_is_self", "parent_run_id must name another run.")

    yield from screenshot_errors(doc.get("input"), "input", subject="a dispatch")
    yield from screenshot_errors(
        doc.get("acceptance_tests"), "acceptance_tests", subject="acceptance tests"
    )


def _warnings(doc: Mapping[str, Any], listed: list[str]) -> Iterator[FieldError]:
    if evidence_required(doc) and listed and "browser_evidence" not in listed:
        yield FieldError(
            "output_contract.required_fields",
            "browser_evidence_not_listed",
            "Browser evidence is required but not listed in required_fields; the completion "
            "gate requires it anyway, so list it to tell the worker.",
        )
    tests = _string_list(doc.get("acceptance_tests"))
    if len(set(tests)) != len(tests):
        yield FieldError(
            "acceptance_tests", "duplicate_item", "acceptance_tests lists the same test twice."
        )


def validate_dispatch(data: bytes | str | Mapping[str, Any]) -> ValidationReport:
    """Validate a Jarvis worker dispatch.

    Args:
        data: the raw document (bytes or text, parsed as strict JSON) or an already-parsed object.

    Returns:
        A report whose ``errors`` hold every problem found; valid when there are none.
    """
    report = ValidationReport(KIND)
    loaded = as_object(data)
    if not loaded.ok:
        report.errors.extend(loaded.errors)
        return report
    doc: dict[str, Any] = loaded.value
    report.document = doc
    errors: list[FieldError] = []
    try:
        JarvisDispatch.model_validate(doc)
    except ValidationError as exc:
        errors.extend(from_validation_error(exc, doc))
    listed = _required_fields(doc)
    errors.extend(_cross_field_errors(doc, listed))
    report.errors = sorted_errors(errors)
    report.warnings = sorted_errors(_warnings(doc, listed))
    return report


def parse_dispatch(
    data: bytes | str | Mapping[str, Any],
) -> tuple[JarvisDispatch | None, ValidationReport]:
    """Validate and, when valid, return the typed dispatch alongside the report."""
    report = validate_dispatch(data)
    if not report.valid or report.document is None:
        return None, report
    return JarvisDispatch.model_validate(report.document), report
