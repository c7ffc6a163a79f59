"""planner.v1: strict parse, one repair pass, exact schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.contracts.planner import PlannerResult, extract_and_close, parse_planner_output
from tests.strategies import json_values

PLAN: dict[str, Any] = {
    "planner_schema_version": "planner.v1",
    "intent": "Read the feed",
    "proposed_actions": [
        {"action": "navigate", "target": "https://a.com/feed", "input": ""},
        {"action": "get_text", "target": "h1", "input": ""},
    ],
}
CLEAN = json.dumps(PLAN)


def codes(result: PlannerResult) -> set[tuple[str, str]]:
    return {(e.field, e.code) for e in result.errors}


def assert_invalid(result: PlannerResult) -> None:
    assert not result.ok
    assert result.plan is None
    assert result.error_code == "LLM_OUTPUT_INVALID"
    assert not result.repaired
    assert result.errors


def test_clean_output_is_ok_without_repair() -> None:
    result = parse_planner_output(CLEAN)
    assert result.ok
    assert result.plan == PLAN
    assert result.error_code is None
    assert not result.repaired
    assert result.errors == ()


def test_bytes_are_accepted() -> None:
    assert parse_planner_output(CLEAN.encode()).ok


def test_to_json_shape() -> None:
    assert parse_planner_output(CLEAN).to_json() == {
        "ok": True,
        "plan": PLAN,
        "error_code": None,
        "repaired": False,
        "errors": [],
    }
    bad = parse_planner_output("nope").to_json()
    assert bad["ok"] is False
    assert bad["plan"] is None
    assert bad["error_code"] == "LLM_OUTPUT_INVALID"
    assert bad["repaired"] is False
    assert {"field", "code", "message"} == set(bad["errors"][0])


# ---------------------------------------------------------------------------- repair pass


def test_fenced_json_with_prose_is_repaired() -> None:
    text = f"Here you go:\n```json\n{CLEAN}\n```\nAnything else?"
    result = parse_planner_output(text)
    assert result.ok
    assert result.repaired
    assert result.plan == PLAN


def test_prose_before_and_after_is_repaired() -> None:
    result = parse_planner_output(f"Sure. {CLEAN} Hope this helps.")
    assert result.ok and result.repaired


def test_truncated_output_is_closed_in_stack_order() -> None:
    result = parse_planner_output(CLEAN[:-2])  # drops "]}"
    assert result.ok and result.repaired
    assert result.plan == PLAN


def test_truncated_after_a_complete_value_is_closed() -> None:
    text = '{"planner_schema_version": "planner.v1", "intent": "x", "proposed_actions": []'
    assert parse_planner_output(text).ok


def test_closers_are_appended_in_stack_order() -> None:
    candidate, problem = extract_and_close('{"a": [{"b": [1, 2')
    assert problem is None
    assert candidate == '{"a": [{"b": [1, 2]}]}'


def test_braces_inside_strings_do_not_count() -> None:
    plan = {**PLAN, "intent": 'close } and ] and { "quoted" \\ too'}
    text = "prose: " + json.dumps(plan) + " trailing }"
    result = parse_planner_output(text)
    assert result.ok and result.repaired
    assert result.plan == plan


def test_escaped_quote_does_not_end_a_string() -> None:
    candidate, problem = extract_and_close('x {"a": "say \\"}\\" ok"} y')
    assert problem is None
    assert candidate == '{"a": "say \\"}\\" ok"}'


def test_truncated_inside_a_string_is_not_repairable() -> None:
    result = parse_planner_output(CLEAN[: CLEAN.index("Read the") + 4])
    assert_invalid(result)
    assert ("$", "truncated_in_string") in codes(result)


def test_truncated_after_a_backslash_is_inside_a_string() -> None:
    _, problem = extract_and_close('{"a": "x\\')
    assert problem is not None and problem.code == "truncated_in_string"


def test_no_object_in_prose() -> None:
    result = parse_planner_output("I cannot help with that.")
    assert_invalid(result)
    assert codes(result) == {("$", "not_json"), ("$", "no_json_object")}


def test_repair_runs_once_only() -> None:
    # Closing the braces leaves a trailing comma, which only a second kind of repair could fix.
    result = parse_planner_output('{"planner_schema_version": "planner.v1", "intent": "x",')
    assert_invalid(result)
    assert ("$", "repair_failed") in codes(result)


def test_first_brace_in_prose_is_taken_literally() -> None:
    result = parse_planner_output("Use {braces} like so: " + CLEAN)
    assert_invalid(result)
    assert ("$", "repair_failed") in codes(result)


def test_mismatched_close_is_not_repaired() -> None:
    result = parse_planner_output('{"a": [1}')
    assert_invalid(result)
    assert ("$", "repair_failed") in codes(result)


def test_schema_failure_does_not_trigger_repair() -> None:
    # Valid JSON with a bad schema, followed by nothing to repair: errors are schema errors only.
    result = parse_planner_output(json.dumps({**PLAN, "extra": 1}))
    assert_invalid(result)
    assert codes(result) == {("extra", "unknown_field")}


def test_repaired_but_schema_invalid_is_not_marked_repaired() -> None:
    result = parse_planner_output("```json\n" + json.dumps({**PLAN, "extra": 1}) + "\n```")
    assert_invalid(result)
    assert codes(result) == {("extra", "unknown_field")}


def test_non_utf8_bytes_are_invalid_without_repair() -> None:
    result = parse_planner_output(b"\xff" + CLEAN.encode())
    assert_invalid(result)
    assert codes(result) == {("$", "not_utf8")}


def test_duplicate_keys_are_invalid_without_repair() -> None:
    text = CLEAN[:-1] + ', "intent": "again"}'
    result = parse_planner_output(text)
    assert_invalid(result)
    assert codes(result) == {("$", "duplicate_key")}


def test_nan_is_not_json_even_after_repair() -> None:
    result = parse_planner_output(CLEAN[:-1] + ', "x": NaN}')
    assert_invalid(result)


def test_huge_input_is_refused_without_scanning() -> None:
    result = parse_planner_output("{" * (50 * 1024 * 1024))
    assert_invalid(result)
    assert codes(result) == {("$", "too_large")}


def test_deep_truncated_nesting_is_refused() -> None:
    assert_invalid(parse_planner_output("[" * 100_000))
    assert_invalid(parse_planner_output('{"a":' + "[" * 100_000))


def test_json_that_is_not_an_object_is_invalid() -> None:
    result = parse_planner_output(json.dumps([PLAN]))
    assert_invalid(result)
    assert codes(result) == {("$", "not_object")}


def test_empty_output_is_invalid() -> None:
    assert codes(parse_planner_output("  ")) == {("$", "empty")}


# ---------------------------------------------------------------------------- schema


@pytest.mark.parametrize("field", ["planner_schema_version", "intent", "proposed_actions"])
def test_missing_top_level_field(field: str) -> None:
    plan = {k: v for k, v in PLAN.items() if k != field}
    result = parse_planner_output(json.dumps(plan))
    assert_invalid(result)
    assert codes(result) == {(field, "required")}


def test_extra_top_level_field() -> None:
    result = parse_planner_output(json.dumps({**PLAN, "confidence": 0.9}))
    assert codes(result) == {("confidence", "unknown_field")}


def test_wrong_version() -> None:
    result = parse_planner_output(json.dumps({**PLAN, "planner_schema_version": "planner.v2"}))
    assert codes(result) == {("planner_schema_version", "unsupported_schema_version")}


@pytest.mark.parametrize("intent", ["", "   ", 5, None])
def test_intent_non_blank_string(intent: Any) -> None:
    result = parse_planner_output(json.dumps({**PLAN, "intent": intent}))
    assert_invalid(result)
    assert {f for f, _ in codes(result)} == {"intent"}


def test_proposed_actions_must_be_array() -> None:
    result = parse_planner_output(json.dumps({**PLAN, "proposed_actions": {}}))
    assert codes(result) == {("proposed_actions", "wrong_type")}


def test_proposed_actions_may_be_empty() -> None:
    assert parse_planner_output(json.dumps({**PLAN, "proposed_actions": []})).ok


@pytest.mark.parametrize("field", ["action", "target", "input"])
def test_missing_action_field(field: str) -> None:
    action = {k: v for k, v in PLAN["proposed_actions"][0].items() if k != field}
    result = parse_planner_output(json.dumps({**PLAN, "proposed_actions": [action]}))
    assert codes(result) == {(f"proposed_actions.0.{field}", "required")}


def test_extra_action_field() -> None:
    action = {**PLAN["proposed_actions"][0], "why": "because"}
    result = parse_planner_output(json.dumps({**PLAN, "proposed_actions": [action]}))
    assert codes(result) == {("proposed_actions.0.why", "unknown_field")}


@pytest.mark.parametrize("value", [1, None, True, [], {}])
def test_action_fields_must_be_strings(value: Any) -> None:
    action = {**PLAN["proposed_actions"][1], "input": value}
    result = parse_planner_output(json.dumps({**PLAN, "proposed_actions": [action]}))
    assert codes(result) == {("proposed_actions.0.input", "wrong_type")}


def test_action_must_be_object() -> None:
    result = parse_planner_output(json.dumps({**PLAN, "proposed_actions": ["navigate"]}))
    assert codes(result) == {("proposed_actions.0", "wrong_type")}


# ---------------------------------------------------------------------------- never raises


JSON = json_values


def _check(result: PlannerResult) -> None:
    json.dumps(result.to_json())
    assert result.ok == (result.error_code is None)
    if result.repaired:
        assert result.ok


@given(st.text(max_size=400) | st.binary(max_size=400))
def test_arbitrary_text_and_bytes_get_a_verdict(data: str | bytes) -> None:
    _check(parse_planner_output(data))


@given(JSON)
def test_arbitrary_json_gets_a_verdict(value: Any) -> None:
    _check(parse_planner_output(json.dumps(value)))


@given(JSON, st.integers(min_value=0, max_value=200), st.text(max_size=30))
def test_truncated_and_wrapped_json_gets_a_verdict(value: Any, cut: int, prose: str) -> None:
    text = json.dumps(value)
    _check(parse_planner_output(prose + text[: max(len(text) - cut, 0)]))


@given(st.text(max_size=40), st.text(max_size=40), st.integers(min_value=1, max_value=6))
def test_valid_plan_survives_prose_and_truncation(before: str, after: str, cut: int) -> None:
    # Whatever the prose, a clean plan is found again as long as the prose has no "{".
    if "{" in before:
        return
    result = parse_planner_output(before + CLEAN + after)
    assert result.ok, result.to_json()
    assert result.plan == PLAN
    truncated = parse_planner_output(before + CLEAN[: len(CLEAN) - min(cut, 2)])
    assert truncated.ok
