"""Errors as data: every validator reports problems as `FieldError`s, never by raising.

A `FieldError` names the offending field as a dotted path (``output_contract.required_fields.2``),
a stable snake_case ``code`` that scripts may depend on, and a one-sentence ``message`` for people.
Messages may quote a short, inert preview of the offending value (see `preview`), never the raw
value, so a hostile document cannot smuggle escape sequences into an operator's terminal through
an error message, nor a secret into what the store keeps of a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.contracts.secrets_scan import mask_secrets

#: The field path used for problems that concern the whole document.
ROOT = "$"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
# Field paths are one line, so tab and newline are escaped there too.
_PATH_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_PREVIEW_LIMIT = 60


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one field of a document."""

    field: str
    """Dotted path to the field (list indexes as numbers), or ``$`` for the whole document."""
    code: str
    """Stable snake_case identifier; documented in docs/contracts.md."""
    message: str
    """A sentence that says what is wrong and, where it helps, what would be right."""

    def to_json(self) -> dict[str, str]:
        return {"field": self.field, "code": self.code, "message": self.message}


@dataclass(slots=True)
class ValidationReport:
    """The verdict on one document: valid exactly when there are no errors."""

    kind: str
    """What the document was validated as, e.g. ``jarvis_dispatch`` or ``task_command.v1``."""
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[FieldError] = field(default_factory=list)
    """Problems worth a look that do not make the document invalid."""
    document: dict[str, Any] | None = None
    """The parsed document when it was a JSON object, for callers that go on to use it."""

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "kind": self.kind,
            "errors": [e.to_json() for e in self.errors],
            "warnings": [w.to_json() for w in self.warnings],
        }


def join_path(*parts: str | int) -> str:
    """Join path segments into a dotted field path, dropping the root marker.

    Keys come from the document, so control characters in them are escaped here: a field path is
    printed as-is by every renderer.
    """
    kept = [str(p) for p in parts if p != ROOT and p != ""]
    return _escape_controls(".".join(kept), _PATH_CONTROL) if kept else ROOT


def _escape_controls(text: str, pattern: re.Pattern[str] = _CONTROL) -> str:
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def preview(value: Any, limit: int = _PREVIEW_LIMIT) -> str:
    """A short, quoted, inert rendering of a value for use inside an error message.

    Control characters (including ESC and the C1 range) are shown as ``\\xNN`` escapes, so the
    preview can be printed to a terminal as-is. Secrets are masked first: once escaped, a key
    split by a colour code is text no scanner reads as a key, and once cut, half of one.
    """
    text = mask_secrets(value if isinstance(value, str) else repr(value))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = _escape_controls(text)
    return f"'{text}'" if isinstance(value, str) else text


def type_name(value: Any) -> str:
    """The JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_blank(value: Any) -> bool:
    """Missing, null, or a string of only white space: all count as absent."""
    return value is None or (isinstance(value, str) and not value.strip())


def sorted_errors(errors: Iterable[FieldError]) -> list[FieldError]:
    """De-duplicate and order errors by field then code, so output is stable across runs."""
    unique = set(errors)
    if not unique:
        return []
    return sorted(unique, key=lambda e: (e.field, e.code, e.message))
