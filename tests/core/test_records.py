"""BorisBot records: task_command.v1, task_result.v1, task_event.v1, error.v1 and the registry."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from core.contracts.errors import ValidationReport
from core.contracts.records import (
    DEFAULT_REGISTRY,
    LLM_OUTPUT_INVALID,
    LLM_PROVIDER_UNHEALTHY,
    LLM_TIMEOUT,
    OPEN_RECORD,
    SchemaRegistry,
    build_default_registry,
    make_error_record,
    validate_record,
)
from tests.strategies import json_values


def codes(report: ValidationReport) -> set[tuple[str, str]]:
    return {(e.field, e.code) for e in report.errors}


def warning_codes(report: ValidationReport) -> set[tuple[str, str]]:
    return {(w.field, w.code) for w in report.warnings}


def task_command(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": "task_command.v1",
        "task_id": "t1",
        "commands": [
            {"id": "1", "action": "navigate", "params": {"url": "https://a.com/"}},
            {"id": "2", "action": "click", "params": {"selector": "#go"}},
            {"id": "3", "action": "type", "params": {"selector": "#q", "text": "hi"}},
            {"id": "4", "action": "wait_for_url", "params": {"url": "a.com/done"}},
            {"id": "5", "action": "get_text", "params": {"selector": "h1"}},
            {"id": "6", "action": "get_title", "params": {}},
        ],
    }
    doc.update(changes)
    return doc


def one_command(action: Any, params: Any) -> dict[str, Any]:
    return task_command(commands=[{"id": "1", "action": action, "params": params}])


def task_result(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": "task_result.v1",
        "task_id": "t1",
        "status": "completed",
        "duration_ms": 10,
        "steps": [{"command_id": "1", "status": "ok"}],
    }
    doc.update(changes)
    return doc


def task_event(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": "task_event.v1",
        "command_id": "2",
        "status": "ok",
        "duration_ms": 125,
    }
    doc.update(changes)
    return doc


def error_record(**changes: Any) -> dict[str, Any]:
    doc = make_error_record(
        "selector_not_found", "SEL_MISSING", "4", "No match.", "https://a.com/x/", "#go"
    )
    doc.update(changes)
    return doc


# ---------------------------------------------------------------------------- version lookup


def test_valid_records_of_each_kind() -> None:
    for doc, kind in [
        (task_command(), "task_command.v1"),
        (task_result(), "task_result.v1"),
        (task_event(), "task_event.v1"),
        (error_record(), "error.v1"),
    ]:
        report = validate_record(doc)
        assert report.valid, report.to_json()
        assert report.kind == kind
        assert report.document == doc


def test_accepts_bytes_text_and_dict() -> None:
    doc = task_event()
    for data in (json.dumps(doc).encode(), json.dumps(doc), doc):
        assert validate_record(data).valid


def test_missing_version_key() -> None:
    report = validate_record({"task_id": "t1"})
    assert codes(report) == {("$", "missing_schema_version")}
    assert report.kind == "unknown"


def test_null_or_blank_version_counts_as_missing() -> None:
    assert codes(validate_record(task_event(schema_version=None))) == {
        ("$", "missing_schema_version")
    }
    assert codes(validate_record(task_event(schema_version="  "))) == {
        ("$", "missing_schema_version")
    }


def test_unknown_version_lists_supported_ones() -> None:
    report = validate_record(task_event(schema_version="task_event.v9"))
    assert codes(report) == {("schema_version", "unsupported_schema_version")}
    assert report.kind == "unknown"
    message = report.errors[0].message
    for version in ("task_command.v1", "task_result.v1", "task_event.v1"):
        assert version in message


def test_version_under_the_wrong_key_is_unsupported() -> None:
    report = validate_record({"schema_version": "error.v1"})
    assert codes(report) == {("schema_version", "unsupported_schema_version")}


def test_non_string_version() -> None:
    assert codes(validate_record(task_event(schema_version=1))) == {
        ("schema_version", "wrong_type")
    }


def test_both_version_keys_is_ambiguous() -> None:
    report = validate_record({**task_event(), "error_schema_version": "error.v1"})
    assert codes(report) == {("$", "ambiguous_schema_version")}


def test_not_an_object() -> None:
    assert codes(validate_record("[1, 2]")) == {("$", "not_object")}
    assert codes(validate_record([1, 2])) == {("$", "not_object")}  # type: ignore[arg-type]


def test_broken_json_is_reported_not_raised() -> None:
    assert codes(validate_record(b"\xff\xfe")) == {("$", "not_utf8")}
    assert codes(validate_record("{")) == {("$", "not_json")}
    assert codes(validate_record(b"x" * (50 * 1024 * 1024))) == {("$", "too_large")}
    assert codes(validate_record("[" * 10_000 + "]" * 10_000)) == {("$", "too_deep")}


# ---------------------------------------------------------------------------- task_command.v1


def test_task_id_must_not_be_blank() -> None:
    assert codes(validate_record(task_command(task_id="  "))) == {("task_id", "empty")}


def test_task_id_is_required() -> None:
    doc = task_command()
    del doc["task_id"]
    assert codes(validate_record(doc)) == {("task_id", "required")}


def test_commands_must_not_be_empty() -> None:
    assert codes(validate_record(task_command(commands=[]))) == {("commands", "empty")}


def test_commands_must_be_a_list() -> None:
    assert codes(validate_record(task_command(commands={}))) == {("commands", "wrong_type")}


def test_command_must_be_an_object() -> None:
    assert codes(validate_record(task_command(commands=["navigate"]))) == {
        ("commands.0", "wrong_type")
    }


def test_command_ids_unique() -> None:
    doc = task_command()
    doc["commands"][3]["id"] = "1"
    assert codes(validate_record(doc)) == {("commands.3.id", "duplicate_id")}


def test_command_id_not_blank() -> None:
    doc = task_command()
    doc["commands"][0]["id"] = ""
    assert codes(validate_record(doc)) == {("commands.0.id", "empty")}


def test_command_id_must_be_string() -> None:
    doc = task_command()
    doc["commands"][0]["id"] = 1
    assert codes(validate_record(doc)) == {("commands.0.id", "wrong_type")}


def test_unknown_action() -> None:
    report = validate_record(one_command("scroll", {}))
    assert codes(report) == {("commands.0.action", "unknown_action")}
    assert "navigate" in report.errors[0].message


def test_missing_action() -> None:
    doc = task_command(commands=[{"id": "1", "params": {}}])
    assert codes(validate_record(doc)) == {("commands.0.action", "required")}


def test_non_string_action() -> None:
    assert codes(validate_record(one_command(["click"], {}))) == {
        ("commands.0.action", "wrong_type")
    }


def test_missing_params() -> None:
    doc = task_command(commands=[{"id": "1", "action": "get_title"}])
    assert codes(validate_record(doc)) == {("commands.0.params", "required")}


def test_unknown_command_field_is_rejected() -> None:
    doc = task_command()
    doc["commands"][5]["note"] = "x"
    assert codes(validate_record(doc)) == {("commands.5.note", "unknown_field")}


@pytest.mark.parametrize(
    ("action", "params", "bad"),
    [
        ("navigate", {"url": "https://a.com", "wait": True}, "wait"),
        ("click", {"selector": "#a", "force": True}, "force"),
        ("type", {"selector": "#a", "text": "x", "delay_ms": 5}, "delay_ms"),
        ("wait_for_url", {"url": "a", "timeout": 5}, "timeout"),
        ("get_text", {"selector": "#a", "text": "x"}, "text"),
        ("get_title", {"selector": "#a"}, "selector"),
    ],
)
def test_unknown_params_are_rejected_per_action(
    action: str, params: dict[str, Any], bad: str
) -> None:
    report = validate_record(one_command(action, params))
    assert codes(report) == {(f"commands.0.params.{bad}", "unknown_field")}


@pytest.mark.parametrize(
    ("action", "params", "field"),
    [
        ("navigate", {}, "url"),
        ("click", {}, "selector"),
        ("type", {"selector": "#a"}, "text"),
        ("type", {"text": "x"}, "selector"),
        ("wait_for_url", {}, "url"),
        ("get_text", {}, "selector"),
    ],
)
def test_required_params_per_action(action: str, params: dict[str, Any], field: str) -> None:
    assert codes(validate_record(one_command(action, params))) == {
        (f"commands.0.params.{field}", "required")
    }


def test_params_must_be_an_object() -> None:
    assert codes(validate_record(one_command("get_title", []))) == {
        ("commands.0.params", "wrong_type")
    }


@pytest.mark.parametrize(
    "url", ["ftp://a.com/", "a.com/x", "javascript:alert(1)", "https://", "http://[::1"]
)
def test_navigate_url_must_be_http_or_https(url: str) -> None:
    assert codes(validate_record(one_command("navigate", {"url": url}))) == {
        ("commands.0.params.url", "bad_url")
    }


def test_navigate_url_accepts_http_and_https() -> None:
    for url in ("http://a.com", "https://a.com/x?y=1", "HTTPS://A.COM"):
        assert validate_record(one_command("navigate", {"url": url})).valid


def test_selector_must_not_be_blank() -> None:
    assert codes(validate_record(one_command("click", {"selector": " "}))) == {
        ("commands.0.params.selector", "empty")
    }


def test_fallback_selectors_must_be_list_of_non_blank_strings() -> None:
    ok = {"selector": "#a", "fallback_selectors": ["#b", ".c"]}
    assert validate_record(one_command("click", ok)).valid
    bad: dict[str, Any] = {"selector": "#a", "fallback_selectors": "#b"}
    assert codes(validate_record(one_command("click", bad))) == {
        ("commands.0.params.fallback_selectors", "wrong_type")
    }
    bad = {"selector": "#a", "fallback_selectors": ["#b", ""]}
    assert codes(validate_record(one_command("get_text", bad))) == {
        ("commands.0.params.fallback_selectors.1", "empty")
    }


def test_fallback_selectors_allowed_on_type_and_get_text() -> None:
    params = {"selector": "#a", "text": "", "fallback_selectors": ["#b"]}
    assert validate_record(one_command("type", params)).valid
    assert validate_record(
        one_command("get_text", {"selector": "#a", "fallback_selectors": []})
    ).valid


def test_fallback_selectors_not_allowed_on_navigate() -> None:
    params = {"url": "https://a.com", "fallback_selectors": ["#b"]}
    assert codes(validate_record(one_command("navigate", params))) == {
        ("commands.0.params.fallback_selectors", "unknown_field")
    }


def test_type_text_must_be_a_string() -> None:
    assert codes(validate_record(one_command("type", {"selector": "#a", "text": 5}))) == {
        ("commands.0.params.text", "wrong_type")
    }


@pytest.mark.parametrize("timeout", [0, -1])
def test_wait_for_url_timeout_must_be_positive(timeout: int) -> None:
    assert codes(
        validate_record(one_command("wait_for_url", {"url": "a", "timeout_ms": timeout}))
    ) == {("commands.0.params.timeout_ms", "out_of_range")}


@pytest.mark.parametrize("timeout", [True, 1.0, "100"])
def test_wait_for_url_timeout_must_be_an_integer(timeout: Any) -> None:
    assert codes(
        validate_record(one_command("wait_for_url", {"url": "a", "timeout_ms": timeout}))
    ) == {("commands.0.params.timeout_ms", "wrong_type")}


def test_wait_for_url_accepts_a_partial_url() -> None:
    params = {"url": "/feed", "timeout_ms": 5000}
    assert validate_record(one_command("wait_for_url", params)).valid


def test_get_title_params_must_be_empty() -> None:
    assert validate_record(one_command("get_title", {})).valid


def test_idempotency_key_optional_and_non_blank() -> None:
    assert validate_record(task_command(idempotency_key="k-1")).valid
    assert validate_record(task_command(idempotency_key=None)).valid
    assert codes(validate_record(task_command(idempotency_key=" "))) == {
        ("idempotency_key", "empty")
    }
    assert codes(validate_record(task_command(idempotency_key=7))) == {
        ("idempotency_key", "wrong_type")
    }


def test_every_problem_is_reported_at_once() -> None:
    doc = task_command(task_id="")
    doc["commands"][0]["params"]["url"] = "ftp://x"
    doc["commands"][1]["action"] = "hover"
    assert codes(validate_record(doc)) == {
        ("task_id", "empty"),
        ("commands.0.params.url", "bad_url"),
        ("commands.1.action", "unknown_action"),
    }


# ---------------------------------------------------------------------------- compatibility


@pytest.mark.parametrize("factory", [task_command, task_result, task_event, error_record])
def test_unknown_top_level_fields_are_ignored_with_a_warning(factory: Any) -> None:
    report = validate_record({**factory(), "added_in_v1_1": {"x": 1}})
    assert report.valid
    assert warning_codes(report) == {("added_in_v1_1", "ignored_field")}


def test_many_unknown_fields_are_summarised() -> None:
    doc = {**task_event(), **{f"extra{i}": i for i in range(100)}}
    report = validate_record(doc)
    assert report.valid
    assert len(report.warnings) == 21


def test_open_record_policy_is_one_setting() -> None:
    assert OPEN_RECORD["extra"] == "allow"


# ---------------------------------------------------------------------------- task_result.v1


@pytest.mark.parametrize("status", ["completed", "failed", "rejected"])
def test_result_status_values(status: str) -> None:
    assert validate_record(task_result(status=status)).valid


def test_result_status_unknown() -> None:
    assert codes(validate_record(task_result(status="done"))) == {("status", "not_allowed")}


def test_result_duration_non_negative_int() -> None:
    assert validate_record(task_result(duration_ms=0)).valid
    assert codes(validate_record(task_result(duration_ms=-1))) == {("duration_ms", "out_of_range")}


@pytest.mark.parametrize("value", [True, False, 1.0, 1.5, "10", None])
def test_result_duration_must_be_an_integer(value: Any) -> None:
    assert codes(validate_record(task_result(duration_ms=value))) == {("duration_ms", "wrong_type")}


def test_result_steps_are_objects() -> None:
    assert validate_record(task_result(steps=[])).valid
    assert codes(validate_record(task_result(steps=[{}, "x"]))) == {("steps.1", "wrong_type")}
    assert codes(validate_record(task_result(steps={}))) == {("steps", "wrong_type")}


def test_result_required_fields() -> None:
    report = validate_record({"schema_version": "task_result.v1"})
    assert codes(report) == {
        ("task_id", "required"),
        ("status", "required"),
        ("duration_ms", "required"),
        ("steps", "required"),
    }


# ---------------------------------------------------------------------------- task_event.v1


def test_event_status_non_blank() -> None:
    assert codes(validate_record(task_event(status=""))) == {("status", "empty")}


def test_event_command_id_is_a_non_blank_string() -> None:
    assert codes(validate_record(task_event(command_id=2))) == {("command_id", "wrong_type")}
    assert codes(validate_record(task_event(command_id=" "))) == {("command_id", "empty")}


def test_event_duration() -> None:
    assert codes(validate_record(task_event(duration_ms=-5))) == {("duration_ms", "out_of_range")}
    assert codes(validate_record(task_event(duration_ms=True))) == {("duration_ms", "wrong_type")}


# ---------------------------------------------------------------------------- error.v1


ERROR_CLASSES = [
    "navigation_validation",
    "selector_not_found",
    "selector_ambiguous",
    "interaction_failed",
    "timeout",
    "capability_rejected",
    "cost_rejected",
]


@pytest.mark.parametrize("error_class", ERROR_CLASSES)
def test_error_classes(error_class: str) -> None:
    assert validate_record(make_error_record(error_class, "ANY_CODE", "1", "m")).valid


def test_error_class_unknown() -> None:
    record = make_error_record("network", "X", "1", "m")
    assert codes(validate_record(record)) == {("error_class", "not_allowed")}


def test_error_code_non_blank() -> None:
    record = make_error_record("timeout", " ", "1", "m")
    assert codes(validate_record(record)) == {("error_code", "empty")}


@pytest.mark.parametrize(
    ("error_class", "error_code"),
    [
        ("llm_provider", LLM_PROVIDER_UNHEALTHY),
        ("llm_provider", LLM_TIMEOUT),
        ("llm_invalid_output", LLM_OUTPUT_INVALID),
    ],
)
def test_llm_codes_accepted(error_class: str, error_code: str) -> None:
    assert validate_record(make_error_record(error_class, error_code, "plan", "m")).valid


@pytest.mark.parametrize(
    ("error_class", "error_code"),
    [
        ("llm_provider", LLM_OUTPUT_INVALID),
        ("llm_provider", "LLM_RATE_LIMITED"),
        ("llm_invalid_output", LLM_TIMEOUT),
        ("llm_invalid_output", "llm_output_invalid"),
    ],
)
def test_llm_codes_must_match_their_class(error_class: str, error_code: str) -> None:
    record = make_error_record(error_class, error_code, "plan", "m")
    assert codes(validate_record(record)) == {("error_code", "not_allowed")}


def test_llm_code_constants_are_the_frozen_strings() -> None:
    assert (LLM_PROVIDER_UNHEALTHY, LLM_TIMEOUT, LLM_OUTPUT_INVALID) == (
        "LLM_PROVIDER_UNHEALTHY",
        "LLM_TIMEOUT",
        "LLM_OUTPUT_INVALID",
    )


def test_make_error_record_fills_fingerprint() -> None:
    record = make_error_record("timeout", "T1", "3", "Slow.", "https://A.com/x/?q#f", "#b")
    expected = hashlib.sha256(b"timeout|T1|3|#b|a.com/x").hexdigest()
    assert record["fingerprint"] == expected
    assert record["selector"] == "#b"
    assert record["url"] == "https://A.com/x/?q#f"
    assert "selector" not in make_error_record("timeout", "T1", "3", "Slow.")


@pytest.mark.parametrize("value", ["abc", "A" * 64, "g" * 64, "0" * 63, "0" * 65])
def test_fingerprint_must_be_64_lowercase_hex(value: str) -> None:
    assert ("fingerprint", "bad_format") in codes(validate_record(error_record(fingerprint=value)))


def test_fingerprint_mismatch_with_selector_is_an_error() -> None:
    report = validate_record(error_record(fingerprint="0" * 64))
    assert codes(report) == {("fingerprint", "fingerprint_mismatch")}


def test_fingerprint_mismatch_without_selector_is_a_warning() -> None:
    record = error_record()
    del record["selector"]  # the fingerprint was computed with "#go", which is no longer stored
    report = validate_record(record)
    assert report.valid
    assert warning_codes(report) == {("fingerprint", "fingerprint_mismatch")}


def test_fingerprint_is_recomputed_with_normalised_url() -> None:
    record = error_record(url="HTTPS://A.COM/x?utm=1")  # normalises like https://a.com/x/
    assert validate_record(record).valid


def test_fingerprint_detects_changed_fields() -> None:
    assert not validate_record(error_record(step_id="5")).valid
    assert not validate_record(error_record(url="https://a.com/y")).valid


@pytest.mark.parametrize("field", ["step_id", "url", "message", "error_code", "fingerprint"])
def test_error_required_fields(field: str) -> None:
    record = error_record()
    del record[field]
    assert (field, "required") in codes(validate_record(record))


def test_error_selector_must_be_string_when_present() -> None:
    assert ("selector", "wrong_type") in codes(validate_record(error_record(selector=5)))


def test_error_url_may_be_empty() -> None:
    assert validate_record(make_error_record("timeout", "T", "1", "m", url="")).valid


# ---------------------------------------------------------------------------- registry


class TaskEventV2(BaseModel):
    """A made-up next version: adds a required ``attempt``."""

    model_config = OPEN_RECORD
    schema_version: Literal["task_event.v2"]
    command_id: str
    status: str
    duration_ms: int
    attempt: int


def test_registry_keeps_old_versions_readable() -> None:
    registry = build_default_registry()
    registry.register_model("schema_version", "task_event.v2", TaskEventV2)
    v2 = {**task_event(schema_version="task_event.v2"), "attempt": 2}
    assert validate_record(v2, registry).kind == "task_event.v2"
    assert validate_record(v2, registry).valid
    assert validate_record(task_event(), registry).valid  # v1 still validates
    assert codes(validate_record(task_event(schema_version="task_event.v2", attempt="x"), registry))
    # The default registry is untouched.
    assert "task_event.v2" not in DEFAULT_REGISTRY.supported()
    assert codes(validate_record(v2)) == {("schema_version", "unsupported_schema_version")}


def test_registry_lists_versions_per_key() -> None:
    registry = build_default_registry()
    registry.register_model("schema_version", "task_event.v2", TaskEventV2)
    assert registry.supported("schema_version") == [
        "task_command.v1",
        "task_event.v1",
        "task_event.v2",
        "task_result.v1",
    ]
    assert registry.supported("error_schema_version") == ["error.v1"]
    assert registry.version_keys == ("schema_version", "error_schema_version")
    message = validate_record(task_event(schema_version="task_event.v3"), registry).errors[0]
    assert "task_event.v2" in message.message


def test_registry_refuses_double_registration() -> None:
    registry = SchemaRegistry()
    registry.register_model("schema_version", "task_event.v2", TaskEventV2)
    with pytest.raises(ValueError):
        registry.register_model("schema_version", "task_event.v2", TaskEventV2)


def test_registry_copy_is_independent() -> None:
    clone = DEFAULT_REGISTRY.copy()
    clone.register_model("schema_version", "task_event.v2", TaskEventV2)
    assert DEFAULT_REGISTRY.lookup("schema_version", "task_event.v2") is None
    assert clone.lookup("schema_version", "task_event.v2") is not None


def test_empty_registry_supports_nothing() -> None:
    report = validate_record(task_event(), SchemaRegistry())
    assert codes(report) == {("schema_version", "unsupported_schema_version")}
    assert "supported: none" in report.errors[0].message


def test_custom_validator_can_be_registered() -> None:
    registry = SchemaRegistry()
    registry.register("schema_version", "ping.v1", lambda doc: ([], []))
    assert validate_record({"schema_version": "ping.v1"}, registry).valid


# ---------------------------------------------------------------------------- never raises


JSON = json_values

FIELD_NAMES = st.sampled_from(
    [
        "task_id",
        "commands",
        "idempotency_key",
        "status",
        "duration_ms",
        "steps",
        "command_id",
        "error_class",
        "error_code",
        "step_id",
        "url",
        "message",
        "fingerprint",
        "selector",
        "id",
        "action",
        "params",
    ]
)
VERSIONS = st.sampled_from(
    [
        ("schema_version", "task_command.v1"),
        ("schema_version", "task_result.v1"),
        ("schema_version", "task_event.v1"),
        ("error_schema_version", "error.v1"),
        ("schema_version", "nope.v0"),
    ]
)


def _check(report: ValidationReport) -> None:
    assert isinstance(report.valid, bool)
    json.dumps(report.to_json())


@given(JSON)
def test_arbitrary_json_gets_a_verdict(value: Any) -> None:
    _check(validate_record(json.dumps(value)))
    if isinstance(value, dict):
        _check(validate_record(value))


@given(VERSIONS, st.dictionaries(FIELD_NAMES, JSON, max_size=8))
def test_arbitrary_fields_under_a_real_version_get_a_verdict(
    version: tuple[str, str], fields: dict[str, Any]
) -> None:
    doc = {version[0]: version[1], **fields}
    _check(validate_record(doc))


@given(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "id": JSON,
                "action": st.sampled_from(["navigate", "click", "type", "get_title", "x"]) | JSON,
                "params": st.dictionaries(
                    st.sampled_from(
                        ["url", "selector", "text", "timeout_ms", "fallback_selectors", "zz"]
                    ),
                    JSON,
                    max_size=4,
                )
                | JSON,
            },
        )
        | JSON,
        max_size=4,
    )
)
def test_arbitrary_commands_get_a_verdict(commands: list[Any]) -> None:
    _check(validate_record(task_command(commands=commands)))


@given(st.binary(max_size=300) | st.text(max_size=300))
def test_arbitrary_bytes_and_text_get_a_verdict(data: bytes | str) -> None:
    _check(validate_record(data))


def test_python_only_objects_get_a_verdict() -> None:
    loop: list[Any] = []
    loop.append(loop)
    weird = {"schema_version": "task_result.v1", "task_id": object(), "steps": loop, 3: "x"}
    _check(validate_record(copy.copy(weird)))  # type: ignore[arg-type]
