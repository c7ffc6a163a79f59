"""Recognise which kind of dispatch a document is, and validate it as that kind.

Three dispatch shapes reach the engine: the Jarvis worker dispatch, the OpenClaw worker request,
and the constraint-extraction dispatch record. Operators lint all three with one command, so the
kind is recognised from fields only that kind has; ``as_kind`` overrides the guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from core.contracts.criteria import validate_dispatch_record
from core.contracts.dispatch import validate_dispatch
from core.contracts.errors import ValidationReport
from core.contracts.jsondoc import load_object

DispatchKind = Literal["auto", "jarvis_dispatch", "openclaw_request", "dispatch_record"]


def recognise(doc: Mapping[str, Any]) -> str:
    """The dispatch kind a parsed object looks like (Jarvis when nothing else fits)."""
    if "run_id" in doc:
        return "jarvis_dispatch"
    if "task_id" in doc and ("role" in doc or "goal" in doc or "scope" in doc):
        return "openclaw_request"
    if "workspace" in doc and "task" in doc:
        return "dispatch_record"
    return "jarvis_dispatch"


def validate_any_dispatch(
    data: bytes | str | Mapping[str, Any], *, as_kind: DispatchKind = "auto"
) -> ValidationReport:
    """Validate a dispatch of any kind; the report's ``kind`` says which it was taken for."""
    kind: str = as_kind
    if kind == "auto":
        if isinstance(data, Mapping):
            kind = recognise(data)
        else:
            loaded = load_object(data)
            if not loaded.ok:
                return ValidationReport("jarvis_dispatch", list(loaded.errors))
            data = loaded.value
            kind = recognise(loaded.value)
    if kind == "openclaw_request":
        from core.contracts.openclaw_request import validate_request

        return validate_request(data if not isinstance(data, Mapping) else dict(data))
    if kind == "dispatch_record":
        return validate_dispatch_record(data)
    return validate_dispatch(data)
