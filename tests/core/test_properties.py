"""Any input, however broken, gets a verdict back — never an exception.

Three kinds of input per validator: arbitrary bytes, arbitrary text, arbitrary JSON, and
"near-valid" documents (a valid one with random fields replaced by random JSON), which reach the
rule code that purely random input rarely gets past the type checks to exercise.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.contracts.completion import GATES, evaluate_completion, extract_completion
from core.contracts.criteria import validate_dispatch_record
from core.contracts.dispatch import validate_dispatch
from core.contracts.dispatch_kinds import validate_any_dispatch
from core.contracts.errors import FieldError, ValidationReport
from tests.core.test_completion import DISPATCH, GOOD
from tests.core.test_criteria import RECORD
from tests.core.test_dispatch import BASE
from tests.strategies import json_values

raw_inputs = st.binary(max_size=2000) | st.text(max_size=2000) | json_values.map(json.dumps)


def assert_sound(report: ValidationReport) -> None:
    assert isinstance(report.valid, bool)
    for error in report.errors:
        assert isinstance(error, FieldError)
        assert error.field and error.code and error.message
        assert error.code == error.code.lower() and " " not in error.code
    json.dumps(report.to_json())  # the CLI must always be able to print it


@st.composite
def near_valid(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    keys = draw(st.lists(st.sampled_from(sorted(base)), max_size=4, unique=True))
    for key in keys:
        if draw(st.booleans()):
            doc[key] = draw(json_values)
        else:
            doc.pop(key)
    return doc


@given(raw_inputs)
def test_dispatch_never_raises_on_raw_input(data: bytes | str) -> None:
    assert_sound(validate_dispatch(data))
    assert_sound(validate_any_dispatch(data))
    assert_sound(validate_dispatch_record(data))


@given(json_values)
def test_dispatch_never_raises_on_any_json(value: Any) -> None:
    report = validate_dispatch(json.dumps(value))
    assert_sound(report)
    if not isinstance(value, dict):
        assert [e.code for e in report.errors] == ["not_object"]


@given(near_valid(BASE))
def test_near_valid_dispatches_get_a_verdict(doc: dict[str, Any]) -> None:
    assert_sound(validate_dispatch(doc))
    assert_sound(validate_dispatch(json.dumps(doc)))


@given(near_valid(RECORD))
def test_near_valid_records_get_a_verdict(doc: dict[str, Any]) -> None:
    assert_sound(validate_dispatch_record(doc))


@given(raw_inputs)
def test_completion_never_raises_on_any_output(output: bytes | str) -> None:
    verdict = evaluate_completion(DISPATCH, output)
    assert [g.name for g in verdict.gates] == list(GATES)
    json.dumps(verdict.to_json())


@given(near_valid(GOOD), near_valid(DISPATCH))
def test_near_valid_completions_against_near_valid_dispatches(
    completion: dict[str, Any], dispatch: dict[str, Any]
) -> None:
    verdict = evaluate_completion(
        dispatch, "<completion>" + json.dumps(completion) + "</completion>"
    )
    assert verdict.state in ("review_requested", "failed_contract")
    assert verdict.passed is all(g.passed for g in verdict.gates)


@given(st.text(alphabet='<>/completin{}" \n:', max_size=300))
def test_tag_soup_never_raises(text: str) -> None:
    found = extract_completion(text)
    assert (found.completion is None) == bool(found.errors)
