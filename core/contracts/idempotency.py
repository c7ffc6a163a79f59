"""Idempotency keys for task submission: canonical JSON, its hash, and the enqueue decision.

The task_command contract says: same ``idempotency_key`` + same payload hash => deduplicated; same
key + different payload hash => conflict. For "same payload" to mean the same thing to every
producer, the payload is hashed in one canonical JSON form (see `canonical_json`).

A payload that has no canonical form (NaN, a set, a non-string key, a cycle...) is reported as
data: `canonicalize` returns its errors, `evaluate` and `decide` answer ``"invalid"``. Only the two
functions whose return type leaves no room for an error, `canonical_json` and `payload_hash`,
raise, and they raise the documented `NotCanonicalError` (a `ValueError`).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from core.contracts.errors import ROOT, FieldError, join_path, preview
from core.contracts.jsondoc import MAX_DEPTH

#: What to do with a submission: ``new`` (no stored key: enqueue and store the hash),
#: ``deduplicated`` (same key, same payload: answer with the existing task), ``conflict`` (same key,
#: different payload: refuse), ``invalid`` (the payload has no canonical form: refuse).
Decision = Literal["new", "deduplicated", "conflict", "invalid"]


class NotCanonicalError(ValueError):
    """Raised by `canonical_json` and `payload_hash` for a payload with no canonical form."""

    def __init__(self, errors: tuple[FieldError, ...]) -> None:
        super().__init__(errors[0].message if errors else "The payload has no canonical form.")
        self.errors = errors
        """Why, as `FieldError`s (one, for the first problem found)."""


@dataclass(frozen=True, slots=True)
class Canonical:
    """The canonical bytes of a payload, or the reason it has none."""

    data: bytes | None
    """The canonical JSON, UTF-8 encoded; ``None`` when there are errors."""
    errors: tuple[FieldError, ...]
    """Why the payload has no canonical form; empty when it has one."""

    @property
    def ok(self) -> bool:
        return self.data is not None

    @property
    def sha256(self) -> str | None:
        """The sha256 hex of `data`, or ``None`` when there is no canonical form."""
        return None if self.data is None else hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True, slots=True)
class IdempotencyVerdict:
    """`decide`'s answer together with the hash it was based on and any errors."""

    decision: Decision
    payload_hash: str | None
    """The submitted payload's hash; ``None`` when the decision is ``invalid``."""
    errors: tuple[FieldError, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "payload_hash": self.payload_hash,
            "errors": [e.to_json() for e in self.errors],
        }


_ENTER, _EXIT = 0, 1


def _first_problem(payload: Any) -> FieldError | None:
    """The first reason, in document order, that `payload` has no canonical JSON form.

    Iterative, so neither deep nesting nor a cycle can exhaust the Python stack; containers seen
    and found fine are not walked again, so shared sub-objects cannot make the walk exponential.
    """
    on_path: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[int, Any, tuple[str | int, ...]]] = [(_ENTER, payload, ())]
    while stack:
        op, node, path = stack.pop()
        if op == _EXIT:
            on_path.discard(id(node))
            done.add(id(node))
            continue
        field = join_path(*path) if path else ROOT
        if len(path) + 1 > MAX_DEPTH:
            return FieldError(
                field, "too_deep", f"The payload nests deeper than {MAX_DEPTH} levels."
            )
        if node is None or isinstance(node, bool):
            continue
        if isinstance(node, str):
            if not _encodable(node):
                return FieldError(
                    field, "not_utf8", f"{field} holds a lone surrogate, which UTF-8 cannot encode."
                )
            continue
        if isinstance(node, int):
            try:
                int.__repr__(node)
            except ValueError:
                return FieldError(
                    field, "number_too_large", f"{field} has too many digits to write out."
                )
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                return FieldError(
                    field, "not_finite", f"{field} is {node!r}, which JSON cannot represent."
                )
            continue
        if isinstance(node, list | dict):
            if id(node) in on_path:
                return FieldError(field, "cycle", f"{field} contains itself.")
            if id(node) in done:
                continue
            on_path.add(id(node))
            stack.append((_EXIT, node, path))
            if isinstance(node, list):
                children: list[tuple[int, Any, tuple[str | int, ...]]] = [
                    (_ENTER, item, (*path, i)) for i, item in enumerate(node)
                ]
            else:
                children = []
                for key, value in node.items():
                    if not isinstance(key, str):
                        return FieldError(
                            field,
                            "non_string_key",
                            f"{field} has the key {preview(key)}; JSON object keys are strings.",
                        )
                    if not _encodable(key):
                        return FieldError(
                            field,
                            "not_utf8",
                            f"{field} has a key with a lone surrogate, which UTF-8 cannot encode.",
                        )
                    children.append((_ENTER, value, (*path, key)))
            # Reversed so that the first child is examined first and errors come in document order.
            stack.extend(reversed(children))
            continue
        return FieldError(
            field, "not_json_value", f"{field} is a {type(node).__name__}, which has no JSON form."
        )
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def canonicalize(payload: Any) -> Canonical:
    """The canonical JSON form of a payload (see `canonical_json`), as data. Never raises.

    Args:
        payload: A JSON value as Python objects: dict (string keys), list, str, int, float, bool,
            or None.

    Returns:
        A `Canonical` holding the bytes, or the first problem found.
    """
    problem = _first_problem(payload)
    if problem is not None:
        return Canonical(None, (problem,))
    try:
        text = json.dumps(
            payload, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
        )
    except (TypeError, ValueError, RecursionError) as exc:  # the walk above should rule these out
        return Canonical(
            None, (FieldError(ROOT, "not_json_value", f"The payload has no JSON form: {exc}."),)
        )
    return Canonical(text.encode("utf-8"), ())


def canonical_json(payload: Any) -> bytes:
    """Serialise a payload in the one canonical JSON form that idempotency hashes are taken of.

    The form, precisely:

    * UTF-8 bytes; non-ASCII characters are written as themselves, never as ``\\uXXXX`` escapes
      (strings are still escaped as JSON requires: ``"``, ``\\`` and control characters).
    * Object keys sorted by Unicode code point (Python's ``str`` ordering); keys must be strings.
    * Separators ``,`` and ``:`` with no white space anywhere.
    * ``true``, ``false``, ``null``; integers as integers (``1``); floats as Python's shortest
      round-tripping ``repr`` (``1.0``, ``0.1``, ``1e+16``). So ``1`` and ``1.0`` are different
      payloads and hash differently.
    * NaN and Infinity are refused, as are non-string keys, non-JSON types (sets, tuples, bytes,
      objects), lone surrogates, cycles and nesting deeper than 64 levels.

    Args:
        payload: A JSON value as Python objects.

    Returns:
        The canonical bytes.

    Raises:
        NotCanonicalError: The payload has no canonical form; use `canonicalize` to get this as
            data instead.
    """
    result = canonicalize(payload)
    if result.data is None:
        raise NotCanonicalError(result.errors)
    return result.data


def payload_hash(payload: Any) -> str:
    """The sha256 hex digest of `canonical_json` of the payload.

    Raises:
        NotCanonicalError: The payload has no canonical form.
    """
    return hashlib.sha256(canonical_json(payload)).hexdigest()


def evaluate(stored_hash: str | None, payload: Any) -> IdempotencyVerdict:
    """Decide what to do with a submission and say why. Never raises.

    Args:
        stored_hash: The payload hash stored with this idempotency key, or ``None`` (or blank)
            when the key has not been seen. Compared case-insensitively, ignoring surrounding
            white space.
        payload: The submitted task payload.

    Returns:
        The decision, the payload's hash, and errors when the payload has no canonical form.
    """
    result = canonicalize(payload)
    digest = result.sha256
    if digest is None:
        return IdempotencyVerdict("invalid", None, result.errors)
    if stored_hash is None or not stored_hash.strip():
        return IdempotencyVerdict("new", digest)
    if stored_hash.strip().lower() == digest:
        return IdempotencyVerdict("deduplicated", digest)
    return IdempotencyVerdict("conflict", digest)


def decide(stored_hash: str | None, payload: Any) -> Decision:
    """The enqueue decision for a submission carrying an idempotency key. Never raises.

    Args:
        stored_hash: The hash stored with this key, or ``None`` when the key is new.
        payload: The submitted task payload.

    Returns:
        ``new`` when no hash is stored, ``deduplicated`` when the hashes match, ``conflict`` when
        they differ, and ``invalid`` when the payload has no canonical form (see `evaluate` for
        the reason).
    """
    return evaluate(stored_hash, payload).decision
