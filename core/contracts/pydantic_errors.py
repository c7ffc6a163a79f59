"""Map pydantic's validation errors onto our stable `FieldError` codes.

Pydantic's error ``type`` strings are an implementation detail of pydantic and have changed between
releases; scripts depend on our codes, so the mapping lives here, in one place. Rules written as
custom validators raise ``PydanticCustomError(code, message)`` and keep their own code.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from core.contracts.errors import ROOT, FieldError, join_path, type_name

_WRONG_TYPE = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "typed_dict_type": "an object",
    "model_class_type": "an object",
}


def _path(loc: tuple[int | str, ...]) -> str:
    return join_path(*loc)


_ABSENT = object()


def _document_path(loc: tuple[int | str, ...], doc: Any) -> tuple[int | str, ...]:
    """``loc`` without the parts that are not in the document.

    Tagged unions put the tag into the location (``commands.0.navigate.params``); the tag is not a
    field of the document, so it is dropped by walking the location through the document itself.
    """
    if doc is _ABSENT:
        return loc
    kept: list[int | str] = []
    node = doc
    for index, part in enumerate(loc):
        if isinstance(node, dict) and isinstance(part, str):
            is_last = index == len(loc) - 1
            if part in node:
                kept.append(part)
                node = node[part]
            elif not is_last and any(v == part for v in node.values()):
                continue  # a union tag (followed by the field inside that member), not a field
            else:
                kept.append(part)  # a missing or unknown field: keep it, and stop walking
                node = _ABSENT
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            kept.append(part)
            node = node[part]
        else:
            kept.append(part)
            node = _ABSENT
    return tuple(kept)


def _one(err: ErrorDetails, doc: Any = _ABSENT) -> FieldError:
    kind = err["type"]
    loc = _document_path(tuple(err["loc"]), doc)
    field = _path(loc)
    given: Any = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return FieldError(field, "required", f"{field} is required.")
    if kind == "extra_forbidden":
        return FieldError(field, "unknown_field", f"{field} is not a field of this contract.")
    if kind in _WRONG_TYPE:
        return FieldError(
            field,
            "wrong_type",
            f"{field} must be {_WRONG_TYPE[kind]}, not {type_name(given)}.",
        )
    if kind in ("string_too_short", "too_short"):
        return FieldError(field, "empty", f"{field} must not be empty.")
    if kind in ("string_too_long", "too_long"):
        limit = ctx.get("max_length", "the limit")
        return FieldError(field, "too_long", f"{field} is longer than {limit}.")
    if kind in ("literal_error", "enum"):
        expected = ctx.get("expected", "one of the allowed values")
        return FieldError(field, "not_allowed", f"{field} must be {expected}.")
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return FieldError(field, "out_of_range", f"{field} {err['msg'].lower()}.")
    if kind == "union_tag_invalid":
        expected = ctx.get("expected_tags", "a known value")
        tag = ctx.get("discriminator", "the tag")
        return FieldError(field, "not_allowed", f"{field}: {tag} must be one of {expected}.")
    if kind == "union_tag_not_found":
        tag = str(ctx.get("discriminator", "the tag")).strip("'")
        return FieldError(
            join_path(field, tag), "required", f"{join_path(field, tag)} is required."
        )
    if kind == "string_pattern_mismatch":
        return FieldError(field, "bad_format", f"{field} has the wrong format.")
    # Custom rule errors carry our own code and message; name the field unless the message does.
    message = err["msg"]
    if loc and loc[-1] == "[key]":
        # A mapping's key broke a rule (pydantic marks the location `[key]`): the field is the
        # key, and the message, which quotes the key, is said of the mapping.
        return FieldError(_path(loc[:-1]), kind, f"{_path(loc[:-2])}: {message}")
    leaf = field.rsplit(".", 1)[-1]
    if field != ROOT and message.startswith("must "):
        message = f"{field} {message}"
    elif field != ROOT and not message.startswith(leaf):
        message = f"{field}: {message}"
    return FieldError(field, kind, message)


def from_validation_error(exc: ValidationError, document: Any = _ABSENT) -> list[FieldError]:
    """All of a pydantic error's problems as `FieldError`s (pydantic collects them all).

    Args:
        exc: the error pydantic raised.
        document: the validated input; when given, union tags are removed from field paths.
    """
    return [_one(e, document) for e in exc.errors(include_url=False)]
