"""Strict JSON loading that turns every way a document can be broken into a `FieldError`.

"Strict" here means RFC 8259 JSON and nothing more: no NaN or Infinity, no duplicate keys (which
JSON parsers resolve differently, so a duplicate is an ambiguity an attacker can use), valid UTF-8,
a size cap, and a nesting cap. Nothing in this module raises on bad input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.contracts.errors import ROOT, FieldError, preview, type_name

#: Documents larger than this are refused before parsing. A dispatch or record is a few KiB; a
#: megabyte is already absurd, and refusing early keeps a hostile 50 MB input cheap.
MAX_DOCUMENT_BYTES = 1024 * 1024
#: Deeper nesting than this is refused. Real contracts nest four or five levels.
MAX_DEPTH = 64

_BOM = "\ufeff"
_JSON_STARTS = set('{["-0123456789tfn')


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _BadConstant(ValueError):
    pass


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def _reject_constant(name: str) -> Any:
    raise _BadConstant(name)


# One decoder for every call: building it per call is a measurable share of a validation.
_DECODER = json.JSONDecoder(object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)


@dataclass(frozen=True, slots=True)
class Loaded:
    """The result of loading: a value, or the errors that kept it from being one."""

    value: Any
    errors: tuple[FieldError, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def decode_text(
    data: bytes | str, *, limit: int = MAX_DOCUMENT_BYTES
) -> tuple[str | None, list[FieldError]]:
    """Decode bytes as UTF-8 (a leading BOM is dropped), enforcing the size cap."""
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if size > limit:
        return None, [
            FieldError(ROOT, "too_large", f"The document is over the {limit:,}-byte limit.")
        ]
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, [
                FieldError(
                    ROOT,
                    "not_utf8",
                    f"The document is not UTF-8 text (invalid byte at offset {exc.start}).",
                )
            ]
    else:
        text = data
    if text.startswith(_BOM):
        text = text[1:]
    return text, []


def _depth_exceeds(value: Any, limit: int) -> bool:
    # Iterative so that a deeply nested value cannot exhaust the Python stack here either.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return False


def loads_strict(data: bytes | str, *, limit: int = MAX_DOCUMENT_BYTES) -> Loaded:
    """Parse one strict JSON value.

    Returns:
        A `Loaded` whose ``errors`` say why the input is not strict JSON, if it is not.
    """
    text, errors = decode_text(data, limit=limit)
    if text is None:
        return Loaded(None, tuple(errors))
    if not text.strip():
        return Loaded(None, (FieldError(ROOT, "empty", "The document is empty."),))
    try:
        value = _DECODER.decode(text)
    except _DuplicateKey as exc:
        return Loaded(
            None,
            (
                FieldError(
                    ROOT,
                    "duplicate_key",
                    f"The key {preview(exc.key)} appears twice in one object; JSON readers "
                    "disagree on which wins, so it is refused.",
                ),
            ),
        )
    except _BadConstant as exc:
        return Loaded(
            None,
            (FieldError(ROOT, "not_json", f"{exc.args[0]} is not a JSON value."),),
        )
    except RecursionError:
        return Loaded(
            None,
            (FieldError(ROOT, "too_deep", f"The document nests deeper than {MAX_DEPTH} levels."),),
        )
    except json.JSONDecodeError as exc:
        if text.lstrip()[:1] not in _JSON_STARTS:
            return Loaded(
                None,
                (
                    FieldError(
                        ROOT, "not_json", "The document is plain text; it must be strict JSON."
                    ),
                ),
            )
        return Loaded(
            None,
            (
                FieldError(
                    ROOT,
                    "not_json",
                    f"The document is not valid JSON: {exc.msg} (line {exc.lineno}, "
                    f"column {exc.colno}).",
                ),
            ),
        )
    except ValueError as exc:  # e.g. integer strings beyond Python's digit limit
        return Loaded(
            None, (FieldError(ROOT, "not_json", f"The document is not valid JSON: {exc}."),)
        )
    # Nesting needs an opening bracket per level, so a document with few brackets (every real
    # contract) cannot be too deep and skips the walk, which would otherwise dominate the cost.
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth_exceeds(value, MAX_DEPTH):
        return Loaded(
            None,
            (FieldError(ROOT, "too_deep", f"The document nests deeper than {MAX_DEPTH} levels."),),
        )
    return Loaded(value, ())


def as_object(data: bytes | str | Mapping[str, Any]) -> Loaded:
    """An object from raw input, or the input itself when the caller already parsed it."""
    if isinstance(data, Mapping):
        return Loaded(dict(data), ())
    return load_object(data)


def load_object(data: bytes | str, *, limit: int = MAX_DOCUMENT_BYTES) -> Loaded:
    """Parse strict JSON and require the top level to be an object."""
    loaded = loads_strict(data, limit=limit)
    if loaded.ok and not isinstance(loaded.value, dict):
        return Loaded(
            None,
            (
                FieldError(
                    ROOT,
                    "not_object",
                    f"The document must be a JSON object, not {type_name(loaded.value)}.",
                ),
            ),
        )
    return loaded
