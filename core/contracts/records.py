"""Versioned BorisBot records: task_command.v1, task_result.v1, task_event.v1 and error.v1.

A record names its contract in a version key (``schema_version``, or ``error_schema_version`` for
failures). `validate_record` reads that key, looks the version up in a `SchemaRegistry`, and runs
the registered validator. Unknown versions are rejected (``unsupported_schema_version``), as the
contract requires of replay; old versions stay readable because a registry holds any number of
versions per family.

Every rule and code is listed in docs/contracts.md. Nothing here raises on bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import (
    BaseModel,
    ValidationError,
)
from pydantic_core import ErrorDetails

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
from core.contracts.record_models import (
    ACTIONS,
    ERROR_SCHEMA_VERSION_KEY,
    ERROR_V1,
    LLM_ERROR_CODES,
    LLM_OUTPUT_INVALID,
    LLM_PROVIDER_UNHEALTHY,
    LLM_TIMEOUT,
    OPEN_RECORD,
    SCHEMA_VERSION_KEY,
    TASK_COMMAND_V1,
    TASK_EVENT_V1,
    TASK_RESULT_V1,
    ErrorClass,
    ErrorV1,
    NonBlank,
    TaskCommandV1,
    TaskEventV1,
    TaskResultV1,
)

#: What callers import from here: the registry and validation, and the names of the models
#: (`core.contracts.record_models`) they have always found here.
__all__ = [
    "DEFAULT_REGISTRY",
    "ErrorClass",
    "LLM_OUTPUT_INVALID",
    "LLM_PROVIDER_UNHEALTHY",
    "LLM_TIMEOUT",
    "NonBlank",
    "OPEN_RECORD",
    "RecordSpec",
    "SchemaRegistry",
    "build_default_registry",
    "make_error_record",
    "validate_record",
    "validator_from_model",
]

#: At most this many ``ignored_field`` warnings are listed one by one; the rest are summarised.
_MAX_IGNORED_WARNINGS = 20

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
