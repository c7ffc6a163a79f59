"""planner.v1: strict parsing of an LLM planner's output, with exactly one repair pass.

The contract: accept a strict JSON object only; perform one repair pass (extract the JSON object
and close missing braces); if still invalid, fail with ``LLM_OUTPUT_INVALID``; extra or missing
fields are rejected. In order:

1. Strict JSON (`core.contracts.jsondoc.loads_strict`): no NaN, no duplicate keys, UTF-8, size and
   depth caps.
2. Only when step 1 failed to *parse* (code ``not_json``), the repair pass, once: take the text from
   the first ``{`` to its matching close, scanning with awareness of strings and escapes so braces
   inside strings do not count; everything around it (prose, ``` fences) is dropped. If the text
   ends before the object closes, the missing ``}``/``]`` are appended in stack order. Output that
   ends inside a string is not repairable (the string's end is unknowable). Then strict parsing
   again; no second repair.
3. The schema, which never triggers a repair: exactly ``planner_schema_version`` (``planner.v1``),
   ``intent`` (non-blank string) and ``proposed_actions`` (array); each action exactly ``action``,
   ``target`` and ``input``, all strings.

Input that is not UTF-8, too large, or has duplicate keys is invalid without repair: the repair
pass only fixes framing, and would return the same bytes. A JSON value that parses but is not an
object is likewise invalid without repair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from core.contracts.errors import ROOT, FieldError, sorted_errors, type_name
from core.contracts.jsondoc import decode_text, loads_strict
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.record_models import LLM_OUTPUT_INVALID, NonBlank

PLANNER_SCHEMA_VERSION_KEY = "planner_schema_version"
PLANNER_V1 = "planner.v1"

_CLOSED = ConfigDict(frozen=True, strict=True, extra="forbid", use_attribute_docstrings=True)

# One token of the repair scan: a complete string (possessive, so a long string cannot cause
# backtracking), a lone quote (a string that never closes), or a brace or bracket.
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|"|[{}\[\]]', re.DOTALL)
_CLOSER = {"{": "}", "[": "]"}


def _planner_version(value: str) -> str:
    if value != PLANNER_V1:
        raise PydanticCustomError("unsupported_schema_version", f"must be {PLANNER_V1}.")
    return value


class PlannedAction(BaseModel):
    """One proposed action: exactly these three string fields."""

    model_config = _CLOSED
    action: str
    """What to do; a string (the planner contract does not fix its values)."""
    target: str
    """What to do it to; may be empty (e.g. for a page-level action)."""
    input: str
    """The value to use; may be empty."""


class PlannerV1(BaseModel):
    """A planner.v1 document: exactly these three fields."""

    model_config = _CLOSED
    planner_schema_version: Annotated[str, AfterValidator(_planner_version)]
    intent: NonBlank
    """What the plan is for; not empty or only white space."""
    proposed_actions: list[PlannedAction]
    """The actions, in order; may be empty."""


@dataclass(frozen=True, slots=True)
class PlannerResult:
    """The verdict on one planner output."""

    ok: bool
    plan: dict[str, Any] | None
    """The validated plan object when ``ok``."""
    error_code: Literal["LLM_OUTPUT_INVALID"] | None
    """``LLM_OUTPUT_INVALID`` whenever ``ok`` is false."""
    repaired: bool
    """True only when the repair pass was used and the result is ``ok``."""
    errors: tuple[FieldError, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "plan": self.plan,
            "error_code": self.error_code,
            "repaired": self.repaired,
            "errors": [e.to_json() for e in self.errors],
        }


def _invalid(errors: list[FieldError]) -> PlannerResult:
    return PlannerResult(False, None, LLM_OUTPUT_INVALID, False, tuple(errors))


def extract_and_close(text: str) -> tuple[str | None, FieldError | None]:
    """The repair pass: cut out the first JSON object and close it if the text was truncated.

    Args:
        text: The raw planner output.

    Returns:
        The candidate JSON text, or ``None`` and the reason there is none (``no_json_object``,
        ``truncated_in_string``). The candidate is not guaranteed to parse.
    """
    start = text.find("{")
    if start < 0:
        return None, FieldError(ROOT, "no_json_object", "The output contains no JSON object.")
    stack: list[str] = []
    for match in _TOKEN.finditer(text, start):
        token = match.group()
        if token == '"':
            return None, FieldError(
                ROOT,
                "truncated_in_string",
                "The output ends inside a string, so the repair pass cannot close it.",
            )
        if token in _CLOSER:
            stack.append(_CLOSER[token])
        elif token in ("}", "]"):
            if not stack or stack[-1] != token:
                # Mismatched, so malformed rather than truncated: hand the text so far to the
                # strict parser, which says exactly where it goes wrong.
                return text[start : match.end()], None
            stack.pop()
            if not stack:
                return text[start : match.end()], None
    return text[start:].rstrip() + "".join(reversed(stack)), None


def _schema_errors(value: dict[str, Any]) -> list[FieldError]:
    try:
        PlannerV1.model_validate(value)
    except ValidationError as exc:
        return sorted_errors(from_validation_error(exc, value))
    except (TypeError, ValueError, RecursionError) as exc:  # defensive: JSON input cannot do this
        return [FieldError(ROOT, "not_json", f"The plan cannot be read: {exc}.")]
    return []


def parse_planner_output(text: str | bytes) -> PlannerResult:
    """Parse and validate an LLM planner's output against planner.v1. Never raises.

    Args:
        text: The raw output, as text or bytes (bytes must be UTF-8).

    Returns:
        ``ok`` with the plan, or ``LLM_OUTPUT_INVALID`` with the errors that say why.
    """
    if not isinstance(text, str | bytes):
        return _invalid(
            [FieldError(ROOT, "wrong_type", f"Planner output must be text, not {type_name(text)}.")]
        )
    first = loads_strict(text)
    repaired = False
    if first.ok:
        value = first.value
    elif any(e.code == "not_json" for e in first.errors):
        decoded, _ = decode_text(text)  # it decoded once already, or the code would differ
        candidate, problem = extract_and_close(decoded or "")
        if candidate is None:
            return _invalid([*first.errors, *([problem] if problem else [])])
        second = loads_strict(candidate)
        if not second.ok:
            return _invalid(
                [
                    *first.errors,
                    *(
                        FieldError(e.field, "repair_failed", f"After the repair pass: {e.message}")
                        for e in second.errors
                    ),
                ]
            )
        value = second.value
        repaired = True
    else:
        return _invalid(list(first.errors))
    if not isinstance(value, dict):
        return _invalid(
            [
                FieldError(
                    ROOT,
                    "not_object",
                    f"Planner output must be a JSON object, not {type_name(value)}.",
                )
            ]
        )
    errors = _schema_errors(value)
    if errors:
        return _invalid(errors)
    return PlannerResult(True, value, None, repaired, ())
