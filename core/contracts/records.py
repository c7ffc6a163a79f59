"""Versioned BorisBot records: task_command.v1, task_result.v1, task_event.v1 and error.v1.

A record names its contract in a version key (``schema_version``, or ``error_schema_version`` for
failures). `validate_record` reads that key, looks the version up in a `SchemaRegistry`, and runs
the registered validator. Unknown versions are rejected (``unsupported_schema_version``), as the
contract requires of replay; old versions stay readable because a registry holds any number of
versions per family.

Every rule and code is listed in docs/contracts.md. Nothing here raises on bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Final, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from core.contracts.errors import (
    ROOT,
    FieldError,
    ValidationReport,
    is_blank,
    join_path,
    preview,
    sorted_errors,
    type_name,
)
from core.contracts.fingerprint import fingerprint
from core.contracts.jsondoc import load_object
from core.contracts.pydantic_errors import from_validation_error

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

#: At most this many ``ignored_field`` warnings are listed one by one; the rest are summarised.
_MAX_IGNORED_WARNINGS = 20

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


# --------------------------------------------------------------------------------------------------
# Turning pydantic errors into FieldErrors
# --------------------------------------------------------------------------------------------------


def _union_tag_error(raw: ErrorDetails) -> FieldError:
    where = join_path(*raw["loc"])
    command = raw.get("input")
    if not isinstance(command, dict):
        return FieldError(
            where, "wrong_type", f"{where} must be an object, not {type_name(command)}."
        )
    field = join_path(where, "action")
    if "action" not in command:
        return FieldError(field, "required", f"{field} is required.")
    action = command["action"]
    if not isinstance(action, str):
        return FieldError(
            field, "wrong_type", f"{field} must be a string, not {type_name(action)}."
        )
    return FieldError(
        field,
        "unknown_action",
        f"{field} is {preview(action)}; it must be one of {', '.join(ACTIONS)}.",
    )


def _field_errors(exc: ValidationError, doc: dict[str, Any]) -> list[FieldError]:
    raws = exc.errors(include_url=False)
    out: list[FieldError] = []
    # The document is passed so the shared mapping can drop union tags from field paths.
    for raw, mapped in zip(raws, from_validation_error(exc, doc), strict=True):
        if raw["type"] in ("union_tag_invalid", "union_tag_not_found"):
            out.append(_union_tag_error(raw))
        else:
            out.append(mapped)
    return out


# --------------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------------

#: Errors, then warnings.
Verdict = tuple[list[FieldError], list[FieldError]]
#: Validates one record whose version key has already been matched.
RecordValidator = Callable[[dict[str, Any]], Verdict]
#: A cross-field rule: the raw record and the model instance (``None`` if the model failed).
RecordCheck = Callable[[dict[str, Any], Any], Verdict]


@dataclass(frozen=True, slots=True)
class RecordSpec:
    """One registered contract version."""

    version_key: str
    version: str
    validate: RecordValidator
    model: type[BaseModel] | None = None
    """The pydantic model, when the validator was built from one."""


def _ignored_fields(doc: dict[str, Any], model: type[BaseModel], version: str) -> list[FieldError]:
    known = set(model.model_fields)
    unknown = [k for k in doc if k not in known]
    warnings = [
        FieldError(
            join_path(str(k)),
            "ignored_field",
            f"{preview(str(k))} is not a field of {version} and was ignored.",
        )
        for k in unknown[:_MAX_IGNORED_WARNINGS]
    ]
    if len(unknown) > _MAX_IGNORED_WARNINGS:
        more = len(unknown) - _MAX_IGNORED_WARNINGS
        warnings.append(
            FieldError(ROOT, "ignored_field", f"{more:,} more unknown fields were ignored.")
        )
    return warnings


def validator_from_model(
    model: type[BaseModel], version: str, checks: Iterable[RecordCheck] = ()
) -> RecordValidator:
    """Build a record validator from a pydantic model plus cross-field checks.

    Args:
        model: The record's model; its ``extra`` setting decides whether unknown top-level
            fields are ignored with a warning (``allow``) or rejected (``forbid``).
        version: The version string, for messages.
        checks: Rules that span fields; each runs whether or not the model validated.

    Returns:
        A validator that never raises.
    """
    rules = tuple(checks)
    is_open = model.model_config.get("extra") == "allow"

    def validate(doc: dict[str, Any]) -> Verdict:
        errors: list[FieldError] = []
        warnings: list[FieldError] = []
        instance: BaseModel | None = None
        try:
            instance = model.model_validate(doc)
        except ValidationError as exc:
            errors.extend(_field_errors(exc, doc))
        except (TypeError, ValueError, RecursionError) as exc:  # objects JSON cannot produce
            errors.append(FieldError(ROOT, "not_json", f"The record cannot be read: {exc}."))
        if is_open:
            warnings.extend(_ignored_fields(doc, model, version))
        for rule in rules:
            more_errors, more_warnings = rule(doc, instance)
            errors.extend(more_errors)
            warnings.extend(more_warnings)
        return errors, warnings

    return validate


class SchemaRegistry:
    """Maps (version key, version) to a validator; several versions per family may coexist.

    Old versions stay registered when new ones are added, so persisted records remain readable;
    a version that is not registered is rejected with ``unsupported_schema_version``.
    """

    def __init__(self) -> None:
        self._specs: dict[tuple[str, str], RecordSpec] = {}

    def register(
        self,
        version_key: str,
        version: str,
        validator: RecordValidator,
        model: type[BaseModel] | None = None,
    ) -> None:
        """Register a validator for one version.

        Raises:
            ValueError: The version is already registered under this key (a programming error,
                not bad input).
        """
        key = (version_key, version)
        if key in self._specs:
            raise ValueError(f"{version_key}={version} is already registered")
        self._specs[key] = RecordSpec(version_key, version, validator, model)

    def register_model(
        self,
        version_key: str,
        version: str,
        model: type[BaseModel],
        checks: Iterable[RecordCheck] = (),
    ) -> None:
        """Register a pydantic model (and cross-field checks) as the validator for one version."""
        self.register(version_key, version, validator_from_model(model, version, checks), model)

    def lookup(self, version_key: str, version: str) -> RecordSpec | None:
        """The spec registered for this key and version, if any."""
        return self._specs.get((version_key, version))

    @property
    def version_keys(self) -> tuple[str, ...]:
        """The version keys in use, in the order they were first registered."""
        return tuple(dict.fromkeys(k for k, _ in self._specs))

    def supported(self, version_key: str | None = None) -> list[str]:
        """The registered versions (for one key, or all), sorted."""
        return sorted(v for k, v in self._specs if version_key is None or k == version_key)

    def copy(self) -> SchemaRegistry:
        """An independent registry with the same registrations."""
        clone = SchemaRegistry()
        clone._specs = dict(self._specs)
        return clone


# --------------------------------------------------------------------------------------------------
# Cross-field checks
# --------------------------------------------------------------------------------------------------


def _unique_command_ids(doc: dict[str, Any], _instance: Any) -> Verdict:
    commands = doc.get("commands")
    if not isinstance(commands, list):
        return [], []
    first: dict[str, int] = {}
    errors: list[FieldError] = []
    for index, command in enumerate(commands):
        if not isinstance(command, dict):
            continue
        command_id = command.get("id")
        if not isinstance(command_id, str) or is_blank(command_id):
            continue
        if command_id in first:
            field = join_path("commands", index, "id")
            errors.append(
                FieldError(
                    field,
                    "duplicate_id",
                    f"{field} {preview(command_id)} repeats commands.{first[command_id]}.id; "
                    "command ids must be unique within a task.",
                )
            )
        else:
            first[command_id] = index
    return errors, []


def _llm_error_code(doc: dict[str, Any], _instance: Any) -> Verdict:
    error_class = doc.get("error_class")
    error_code = doc.get("error_code")
    if not isinstance(error_class, str) or not isinstance(error_code, str) or is_blank(error_code):
        return [], []
    allowed = LLM_ERROR_CODES.get(error_class)
    if allowed is None or error_code in allowed:
        return [], []
    return [
        FieldError(
            "error_code",
            "not_allowed",
            f"error_code is {preview(error_code)}; with error_class {error_class} it must be "
            f"{' or '.join(allowed)}.",
        )
    ], []


def _fingerprint_matches(doc: dict[str, Any], instance: Any) -> Verdict:
    # Only a fully valid record has trustworthy inputs to recompute from.
    if not isinstance(instance, ErrorV1):
        return [], []
    expected = fingerprint(
        instance.error_class, instance.error_code, instance.step_id, instance.selector, instance.url
    )
    if instance.fingerprint == expected:
        return [], []
    if instance.selector is not None:
        return [
            FieldError(
                "fingerprint",
                "fingerprint_mismatch",
                "fingerprint does not match sha256 of error_class|error_code|step_id|selector|"
                f"normalised url (expected {expected}).",
            )
        ], []
    return [], [
        FieldError(
            "fingerprint",
            "fingerprint_mismatch",
            "fingerprint does not match the one computed with no selector; it may have been "
            "computed with a selector that the record does not store.",
        )
    ]


def build_default_registry() -> SchemaRegistry:
    """A new registry holding the four v1 contracts."""
    registry = SchemaRegistry()
    registry.register_model(
        SCHEMA_VERSION_KEY, TASK_COMMAND_V1, TaskCommandV1, checks=(_unique_command_ids,)
    )
    registry.register_model(SCHEMA_VERSION_KEY, TASK_RESULT_V1, TaskResultV1)
    registry.register_model(SCHEMA_VERSION_KEY, TASK_EVENT_V1, TaskEventV1)
    registry.register_model(
        ERROR_SCHEMA_VERSION_KEY, ERROR_V1, ErrorV1, checks=(_llm_error_code, _fingerprint_matches)
    )
    return registry


#: The registry `validate_record` uses unless given another. Prefer `build_default_registry`
#: (or ``DEFAULT_REGISTRY.copy()``) over registering into this shared instance.
DEFAULT_REGISTRY = build_default_registry()


# --------------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------------


def validate_record(
    data: bytes | str | dict[str, Any], registry: SchemaRegistry = DEFAULT_REGISTRY
) -> ValidationReport:
    """Validate one BorisBot record against the contract version it names. Never raises.

    Args:
        data: Raw JSON (bytes or text) or an already-parsed object.
        registry: Where versions are looked up; the four v1 contracts by default.

    Returns:
        A report whose ``kind`` is the record's version (``task_command.v1``, ...) when that
        version is supported, else ``unknown``.
    """
    report = ValidationReport(kind="unknown")
    doc: Any
    if isinstance(data, bytes | str):
        loaded = load_object(data)
        if not loaded.ok:
            report.errors.extend(loaded.errors)
            return report
        doc = loaded.value
    else:
        doc = data
    if not isinstance(doc, dict):
        report.errors.append(
            FieldError(ROOT, "not_object", f"A record must be a JSON object, not {type_name(doc)}.")
        )
        return report
    report.document = doc

    keys = registry.version_keys or (SCHEMA_VERSION_KEY, ERROR_SCHEMA_VERSION_KEY)
    present = [k for k in keys if not is_blank(doc.get(k))]
    if not present:
        names = " or ".join(keys)
        report.errors.append(
            FieldError(
                ROOT,
                "missing_schema_version",
                f"The record has no {names}, so its contract is unknown; supported: "
                f"{', '.join(registry.supported()) or 'none'}.",
            )
        )
        return report
    if len(present) > 1:
        report.errors.append(
            FieldError(
                ROOT,
                "ambiguous_schema_version",
                f"The record has both {' and '.join(present)}; a record names one contract.",
            )
        )
        return report
    key = present[0]
    version = doc[key]
    if not isinstance(version, str):
        report.errors.append(
            FieldError(key, "wrong_type", f"{key} must be a string, not {type_name(version)}.")
        )
        return report
    spec = registry.lookup(key, version)
    if spec is None:
        supported = registry.supported(key)
        report.errors.append(
            FieldError(
                key,
                "unsupported_schema_version",
                f"{key} {preview(version)} is not supported; supported: "
                f"{', '.join(supported) or 'none'}.",
            )
        )
        return report
    report.kind = version
    errors, warnings = spec.validate(doc)
    report.errors = sorted_errors(errors)
    report.warnings = sorted_errors(warnings)
    return report


def make_error_record(
    error_class: str,
    error_code: str,
    step_id: str,
    message: str,
    url: str = "",
    selector: str | None = None,
) -> dict[str, Any]:
    """Build an error.v1 record with its fingerprint filled in.

    Args:
        error_class: One of the error.v1 classes (see `ErrorClass`).
        error_code: The failure code; for LLM classes one of the frozen LLM codes.
        step_id: The id of the step that failed.
        message: A sentence for people.
        url: The URL the step was on, as seen (it is normalised only for the fingerprint).
        selector: The selector involved; stored in the record when given, so the fingerprint can
            be verified later.

    Returns:
        The record as a dict, ready to serialise.
    """
    record: dict[str, Any] = {
        ERROR_SCHEMA_VERSION_KEY: ERROR_V1,
        "error_class": error_class,
        "error_code": error_code,
        "step_id": step_id,
        "url": url,
        "message": message,
        "fingerprint": fingerprint(error_class, error_code, step_id, selector, url),
    }
    if selector is not None:
        record["selector"] = selector
    return record
