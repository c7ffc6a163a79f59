"""The BorisBot records' versions and models: the version keys, the frozen failure taxonomy,
the compatibility policy (open records, closed commands, strict types), the field rules, and the
pydantic model of each version. `core.contracts.records` registers and validates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Final, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
)
from pydantic_core import PydanticCustomError

# --------------------------------------------------------------------------------------------------
# Version keys, versions and the frozen failure taxonomy
# --------------------------------------------------------------------------------------------------

SCHEMA_VERSION_KEY: Final = "schema_version"
ERROR_SCHEMA_VERSION_KEY: Final = "error_schema_version"

TASK_COMMAND_V1: Final = "task_command.v1"
TASK_RESULT_V1: Final = "task_result.v1"
TASK_EVENT_V1: Final = "task_event.v1"
ERROR_V1: Final = "error.v1"

ErrorClass = Literal[
    "navigation_validation",
    "selector_not_found",
    "selector_ambiguous",
    "interaction_failed",
    "timeout",
    "capability_rejected",
    "cost_rejected",
    "llm_provider",
    "llm_invalid_output",
]

ERROR_CLASS_LLM_PROVIDER: Final = "llm_provider"
ERROR_CLASS_LLM_INVALID_OUTPUT: Final = "llm_invalid_output"

#: Frozen LLM failure codes.
LLM_PROVIDER_UNHEALTHY: Final = "LLM_PROVIDER_UNHEALTHY"
LLM_TIMEOUT: Final = "LLM_TIMEOUT"
LLM_OUTPUT_INVALID: Final = "LLM_OUTPUT_INVALID"

#: For the LLM error classes, the only error codes the contract allows.
LLM_ERROR_CODES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        ERROR_CLASS_LLM_PROVIDER: (LLM_PROVIDER_UNHEALTHY, LLM_TIMEOUT),
        ERROR_CLASS_LLM_INVALID_OUTPUT: (LLM_OUTPUT_INVALID,),
    }
)

# --------------------------------------------------------------------------------------------------
# Compatibility policy: decided here, and only here.
#
# The contract says changes are additive and persisted records must stay readable, so a record's
# top level is OPEN: fields this version does not know are ignored (and reported as warnings with
# code ``ignored_field``), which lets a newer producer add an optional field without a new
# version. What gets *executed* is CLOSED: a command object and its per-action ``params`` reject
# unknown fields (``unknown_field``), because silently ignoring a parameter the producer meant
# (a misspelt ``fallback_selectors``, a new ``force: true``) would run something other than what
# was asked. Types are strict everywhere: no "5" for 5, no true for 1, no 1.0 for 1.
# --------------------------------------------------------------------------------------------------

OPEN_RECORD = ConfigDict(frozen=True, strict=True, extra="allow", use_attribute_docstrings=True)
CLOSED_OBJECT = ConfigDict(frozen=True, strict=True, extra="forbid", use_attribute_docstrings=True)


# --------------------------------------------------------------------------------------------------
# Field rules
# --------------------------------------------------------------------------------------------------

# Our own validators raise PydanticCustomError(code, "must ..."); the shared mapping keeps the code
# and puts the field path in front of the message.


def _non_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty", "must not be empty or only white space.")
    return value


def _http_url(value: str) -> str:
    _non_blank(value)
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:  # e.g. an unclosed IPv6 bracket
        host = None
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
        raise PydanticCustomError("bad_url", "must be an absolute http or https URL with a host.")
    return value


def _sha256_hex(value: str) -> str:
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise PydanticCustomError("bad_format", "must be 64 lowercase hex digits (a sha256).")
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]
HttpUrlStr = Annotated[str, AfterValidator(_http_url)]
Sha256Hex = Annotated[str, AfterValidator(_sha256_hex)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveInt = Annotated[int, Field(gt=0)]

# --------------------------------------------------------------------------------------------------
# task_command.v1
# --------------------------------------------------------------------------------------------------

Action = Literal["navigate", "click", "type", "wait_for_url", "get_text", "get_title"]
ACTIONS: tuple[str, ...] = get_args(Action)


class NavigateParams(BaseModel):
    """Parameters of ``navigate``."""

    model_config = CLOSED_OBJECT
    url: HttpUrlStr
    """Where to go: an absolute http or https URL."""


class ClickParams(BaseModel):
    """Parameters of ``click``."""

    model_config = CLOSED_OBJECT
    selector: NonBlank
    """The element to click."""
    fallback_selectors: list[NonBlank] | None = None
    """Tried in order when replay runs with ``--allow-fallback`` and ``selector`` fails."""


class TypeParams(BaseModel):
    """Parameters of ``type``."""

    model_config = CLOSED_OBJECT
    selector: NonBlank
    """The element to type into."""
    text: str
    """What to type; may be empty."""
    fallback_selectors: list[NonBlank] | None = None
    """Tried in order when replay runs with ``--allow-fallback`` and ``selector`` fails."""


class WaitForUrlParams(BaseModel):
    """Parameters of ``wait_for_url``."""

    model_config = CLOSED_OBJECT
    url: NonBlank
    """The URL (or URL part) to wait for; a match target, so not required to be absolute."""
    timeout_ms: PositiveInt | None = None
    """How long to wait, in milliseconds; the runner's default when absent."""


class GetTextParams(BaseModel):
    """Parameters of ``get_text``."""

    model_config = CLOSED_OBJECT
    selector: NonBlank
    """The element whose text to read."""
    fallback_selectors: list[NonBlank] | None = None
    """Tried in order when replay runs with ``--allow-fallback`` and ``selector`` fails."""


class GetTitleParams(BaseModel):
    """Parameters of ``get_title``: none, so ``params`` must be ``{}``."""

    model_config = CLOSED_OBJECT


class NavigateCommand(BaseModel):
    """Open a URL."""

    model_config = CLOSED_OBJECT
    id: NonBlank
    """Unique within the task."""
    action: Literal["navigate"]
    params: NavigateParams


class ClickCommand(BaseModel):
    """Click an element."""

    model_config = CLOSED_OBJECT
    id: NonBlank
    """Unique within the task."""
    action: Literal["click"]
    params: ClickParams


class TypeCommand(BaseModel):
    """Type text into an element."""

    model_config = CLOSED_OBJECT
    id: NonBlank
    """Unique within the task."""
    action: Literal["type"]
    params: TypeParams


class WaitForUrlCommand(BaseModel):
    """Wait until the page URL matches."""

    model_config = CLOSED_OBJECT
    id: NonBlank
    """Unique within the task."""
    action: Literal["wait_for_url"]
    params: WaitForUrlParams


class GetTextCommand(BaseModel):
    """Read an element's text."""

    model_config = CLOSED_OBJECT
    id: NonBlank
    """Unique within the task."""
    action: Literal["get_text"]
    params: GetTextParams


class GetTitleCommand(BaseModel):
    """Read the page title."""

    model_config = CLOSED_OBJECT
    id: NonBlank
    """Unique within the task."""
    action: Literal["get_title"]
    params: GetTitleParams


# A discriminated union on the ``action`` tag: pydantic picks the member from the tag, so errors
# speak about that action's params only. Unknown, missing or non-string tags are explained by
# `_union_tag_error`.
Command = Annotated[
    NavigateCommand
    | ClickCommand
    | TypeCommand
    | WaitForUrlCommand
    | GetTextCommand
    | GetTitleCommand,
    Field(discriminator="action"),
]


class TaskCommandV1(BaseModel):
    """A task to run: an ordered list of browser commands."""

    model_config = OPEN_RECORD
    schema_version: Literal["task_command.v1"]
    task_id: NonBlank
    """The task this is; not blank."""
    commands: Annotated[list[Command], Field(min_length=1)]
    """At least one command; ids unique within the task."""
    idempotency_key: NonBlank | None = None
    """Makes enqueue retry-safe (see core.contracts.idempotency); ``null`` counts as absent."""


# --------------------------------------------------------------------------------------------------
# task_result.v1, task_event.v1, error.v1
# --------------------------------------------------------------------------------------------------


class TaskResultV1(BaseModel):
    """The outcome of a task."""

    model_config = OPEN_RECORD
    schema_version: Literal["task_result.v1"]
    task_id: NonBlank
    """The task this is the result of."""
    status: Literal["completed", "failed", "rejected"]
    duration_ms: NonNegativeInt
    """Wall time in milliseconds; an integer (not a boolean, not 1.0)."""
    steps: list[dict[str, Any]]
    """Per-step details; each an object whose contents this contract does not fix."""


class TaskEventV1(BaseModel):
    """The payload of one task event."""

    model_config = OPEN_RECORD
    schema_version: Literal["task_event.v1"]
    command_id: NonBlank
    """The command the event is about (a string, e.g. ``"2"``)."""
    status: NonBlank
    """Free-form status such as ``ok``; not blank."""
    duration_ms: NonNegativeInt
    """Milliseconds; an integer ≥ 0."""


class ErrorV1(BaseModel):
    """A classified failure with its fingerprint."""

    model_config = OPEN_RECORD
    error_schema_version: Literal["error.v1"]
    error_class: ErrorClass
    error_code: NonBlank
    """Free-form for most classes; one of the frozen LLM codes for the LLM classes."""
    step_id: str
    url: str
    """The URL the step was on; may be empty."""
    message: str
    fingerprint: Sha256Hex
    """sha256 of ``error_class|error_code|step_id|selector_or_empty|normalized_url``."""
    selector: str | None = None
    """The selector involved, when the producer stored it; used to verify the fingerprint."""
