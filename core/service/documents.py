"""The documents the engine speaks, checked through the front door: dispatches, completions,
OpenClaw requests and result folders, versioned records, planner output, fingerprints.

The light checks are here as the engine has them; the heavier ones (their models, the risk
gate) are imported when first asked for, so a command that does not check them never pays.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.contracts.completion import MAX_OUTPUT_BYTES, evaluate_completion
from core.contracts.dispatch_kinds import recognise, validate_any_dispatch
from core.contracts.errors import ValidationReport
from core.contracts.jsondoc import MAX_DOCUMENT_BYTES, decode_text, loads_strict

if TYPE_CHECKING:
    from core.contracts.planner import PlannerResult

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_OUTPUT_BYTES",
    "ValidationReport",
    "decode_text",
    "error_classes",
    "evaluate_completion",
    "fingerprint",
    "gate_results",
    "loads_strict",
    "normalize_url",
    "parse_planner_output",
    "recognise",
    "validate_any_dispatch",
    "validate_dispatch",
    "validate_record",
    "validate_request",
]


def validate_dispatch(data: bytes) -> ValidationReport:
    """A Jarvis dispatch (`core.contracts.dispatch`)."""
    from core.contracts.dispatch import validate_dispatch as check

    return check(data)


def validate_request(data: bytes) -> ValidationReport:
    """An OpenClaw worker request (`core.contracts.openclaw_request`)."""
    from core.contracts.openclaw_request import validate_request as check

    return check(data)


def gate_results(request: bytes, folder: Path) -> Any:
    """An OpenClaw result folder through the scope and risk gate (`core.contracts.risk_gate`)."""
    from core.contracts.risk_gate import gate_results as gate

    return gate(request, folder)


def validate_record(data: bytes) -> ValidationReport:
    """A versioned record (`core.contracts.records`)."""
    from core.contracts.records import validate_record as check

    return check(data)


def parse_planner_output(data: str | bytes) -> PlannerResult:
    """Raw planner model output (`core.contracts.planner`)."""
    from core.contracts.planner import parse_planner_output as parse

    return parse(data)


def error_classes() -> tuple[str, ...]:
    """The error classes an error.v1 record may name."""
    from typing import get_args

    from core.contracts.records import ErrorClass

    return tuple(get_args(ErrorClass))


def fingerprint(*fields: Any) -> str:
    """An error.v1 fingerprint (`core.contracts.fingerprint.fingerprint`)."""
    from core.contracts.fingerprint import fingerprint as make

    return make(*fields)


def normalize_url(url: str | None) -> str:
    from core.contracts.fingerprint import normalize_url as normal

    return normal(url)
