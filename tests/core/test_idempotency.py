"""Canonical JSON, payload hashes and the idempotency decision."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.contracts.idempotency import (
    NotCanonicalError,
    canonical_json,
    canonicalize,
    decide,
    evaluate,
    payload_hash,
)
from tests.strategies import json_values

PAYLOAD = {"task_id": "t1", "commands": [{"id": "1", "action": "get_title", "params": {}}]}


def test_canonical_form_exact_bytes() -> None:
    payload = {"b": 1, "a": [True, None, 1.5, "x y"], "c": {"z": 0, "y": -2}}
    assert canonical_json(payload) == b'{"a":[true,null,1.5,"x y"],"b":1,"c":{"y":-2,"z":0}}'


def test_no_white_space_between_tokens() -> None:
    assert b" " not in canonical_json({"a": [1, 2], "b": {"c": None}})


def test_non_ascii_is_kept_as_utf8_not_escaped() -> None:
    assert canonical_json({"k": "é✓"}) == '{"k":"é✓"}'.encode()


def test_strings_are_still_json_escaped() -> None:
    assert canonical_json('a"b\\c\n') == b'"a\\"b\\\\c\\n"'


def test_keys_are_sorted_by_code_point() -> None:
    # Code-point order puts U+FFFF before U+1F600; UTF-16 order would put it after.
    payload = {"é": 1, "a": 2, "Z": 3, "B": 4, "\U0001f600": 5, "\uffff": 6}
    text = canonical_json(payload).decode()
    assert list(json.loads(text)) == ["B", "Z", "a", "é", "\uffff", "\U0001f600"]


def test_integer_and_float_hash_differently() -> None:
    assert canonical_json(1) == b"1"
    assert canonical_json(1.0) == b"1.0"
    assert payload_hash({"n": 1}) != payload_hash({"n": 1.0})


def test_floats_use_shortest_repr() -> None:
    assert canonical_json([0.1, 1e16, 2.5e-7]) == b"[0.1,1e+16,2.5e-07]"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinity_are_refused(value: float) -> None:
    result = canonicalize({"x": [value]})
    assert not result.ok
    assert result.errors[0].code == "not_finite"
    assert result.errors[0].field == "x.0"


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({1: "a"}, "non_string_key"),
        ({"a": {1, 2}}, "not_json_value"),
        ({"a": (1, 2)}, "not_json_value"),
        ({"a": b"x"}, "not_json_value"),
        ({"a": object()}, "not_json_value"),
        ({"a": "\ud800"}, "not_utf8"),
        ({"\udfff": 1}, "not_utf8"),
    ],
)
def test_values_without_json_form_are_refused(payload: Any, code: str) -> None:
    result = canonicalize(payload)
    assert not result.ok
    assert result.errors[0].code == code


def test_cycle_is_refused() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert canonicalize(loop).errors[0].code == "cycle"


def test_shared_subobject_is_not_a_cycle() -> None:
    shared = {"x": 1}
    assert canonical_json([shared, shared]) == b'[{"x":1},{"x":1}]'


def test_too_deep_is_refused() -> None:
    deep: Any = 0
    for _ in range(100_000):
        deep = [deep]
    assert canonicalize(deep).errors[0].code == "too_deep"


def test_huge_integer_is_refused() -> None:
    assert canonicalize(10**5000).errors[0].code == "number_too_large"


def test_canonical_json_raises_documented_value_error() -> None:
    with pytest.raises(NotCanonicalError) as info:
        canonical_json({"x": float("nan")})
    assert isinstance(info.value, ValueError)
    assert info.value.errors[0].code == "not_finite"
    with pytest.raises(NotCanonicalError):
        payload_hash({"x": float("nan")})


def test_payload_hash_known_value() -> None:
    expected = hashlib.sha256(
        b'{"commands":[{"action":"get_title","id":"1","params":{}}],"task_id":"t1"}'
    ).hexdigest()
    assert payload_hash(PAYLOAD) == expected


def test_decide_new_when_no_stored_hash() -> None:
    assert decide(None, PAYLOAD) == "new"
    assert decide("  ", PAYLOAD) == "new"


def test_decide_deduplicated_on_same_hash() -> None:
    assert decide(payload_hash(PAYLOAD), PAYLOAD) == "deduplicated"
    reordered = {"commands": PAYLOAD["commands"], "task_id": "t1"}
    assert decide(payload_hash(PAYLOAD), reordered) == "deduplicated"


def test_decide_compares_hash_case_insensitively() -> None:
    assert decide(payload_hash(PAYLOAD).upper(), PAYLOAD) == "deduplicated"


def test_decide_conflict_on_different_hash() -> None:
    assert decide(payload_hash(PAYLOAD), {**PAYLOAD, "task_id": "t2"}) == "conflict"


def test_decide_invalid_on_payload_without_canonical_form() -> None:
    assert decide(None, {"x": float("nan")}) == "invalid"
    verdict = evaluate(payload_hash(PAYLOAD), {"x": {1}})
    assert verdict.decision == "invalid"
    assert verdict.payload_hash is None
    assert verdict.to_json()["errors"][0]["code"] == "not_json_value"


def test_evaluate_reports_hash() -> None:
    verdict = evaluate(None, PAYLOAD)
    assert verdict.to_json() == {
        "decision": "new",
        "payload_hash": payload_hash(PAYLOAD),
        "errors": [],
    }


JSON = json_values


def _reverse_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(v) for v in value]
    return value


@given(JSON)
def test_canonical_json_is_stable_under_key_reordering(payload: Any) -> None:
    result = canonicalize(payload)
    if not result.ok:  # only lone surrogates in generated text
        return
    assert canonical_json(_reverse_keys(payload)) == result.data
    assert decide(payload_hash(payload), _reverse_keys(payload)) == "deduplicated"


@given(JSON)
def test_canonical_json_round_trips(payload: Any) -> None:
    result = canonicalize(payload)
    if result.data is not None:
        assert json.loads(result.data) == payload


@given(st.none() | st.text(), JSON | st.sets(st.integers()) | st.binary())
def test_decide_never_raises(stored: str | None, payload: Any) -> None:
    assert decide(stored, payload) in ("new", "deduplicated", "conflict", "invalid")
