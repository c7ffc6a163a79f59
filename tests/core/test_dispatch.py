"""One case per dispatch rule: a valid dispatch, changed in one way, must fail with one code."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from core.contracts.dispatch import (
    P0_COMPLETION_FIELDS,
    JarvisDispatch,
    evidence_required,
    parse_dispatch,
    validate_dispatch,
)

BASE: dict[str, Any] = {
    "run_id": "task-20260222-001",
    "task_type": "implement",
    "context_intent": "fresh",
    "input": "Implement strict worker dispatch validation",
    "repo": "acme-labs/fleet-engine",
    "branch": "jarvis-dispatch-contract",
    "acceptance_tests": ["npm run build", "npm test"],
    "output_contract": {"required_fields": [*P0_COMPLETION_FIELDS, "pr_url"]},
}


def variant(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    change(doc)
    return doc


def problems(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e.field, e.code) for e in validate_dispatch(json.dumps(doc)).errors}


def test_the_base_dispatch_is_valid() -> None:
    report = validate_dispatch(json.dumps(BASE))
    assert report.valid, report.errors
    assert report.kind == "jarvis_dispatch"


def test_parse_dispatch_returns_the_typed_model() -> None:
    model, report = parse_dispatch(json.dumps(BASE).encode())
    assert report.valid
    assert isinstance(model, JarvisDispatch)
    assert model.run_id == BASE["run_id"]


CASES: list[tuple[str, Callable[[dict[str, Any]], object], tuple[str, str]]] = [
    ("run_id required", lambda d: d.pop("run_id"), ("run_id", "required")),
    ("run_id at most 64", lambda d: d.update(run_id="r" * 65), ("run_id", "run_id_too_long")),
    ("run_id no whitespace", lambda d: d.update(run_id="task 1"), ("run_id", "run_id_whitespace")),
    ("run_id no tab", lambda d: d.update(run_id="task\t1"), ("run_id", "run_id_whitespace")),
    ("run_id path escape", lambda d: d.update(run_id="../x"), ("run_id", "run_id_unsafe")),
    ("run_id slash", lambda d: d.update(run_id="a/b"), ("run_id", "run_id_unsafe")),
    ("run_id ack suffix", lambda d: d.update(run_id="t1.acked"), ("run_id", "run_id_unsafe")),
    ("run_id empty", lambda d: d.update(run_id=""), ("run_id", "empty")),
    ("task_type enum", lambda d: d.update(task_type="deploy"), ("task_type", "not_allowed")),
    ("context_intent required", lambda d: d.pop("context_intent"), ("context_intent", "required")),
    (
        "context_intent enum",
        lambda d: d.update(context_intent="resume"),
        ("context_intent", "not_allowed"),
    ),
    ("input required", lambda d: d.pop("input"), ("input", "required")),
    ("input blank", lambda d: d.update(input="  \n"), ("input", "empty")),
    ("repo owner/repo", lambda d: d.update(repo="fleet-engine"), ("repo", "repo_format")),
    ("repo no extra part", lambda d: d.update(repo="a/b/c"), ("repo", "repo_format")),
    ("repo no dot-dot", lambda d: d.update(repo="acme/.."), ("repo", "repo_format")),
    ("branch prefix", lambda d: d.update(branch="feature/x"), ("branch", "branch_format")),
    ("branch feature needed", lambda d: d.update(branch="jarvis-"), ("branch", "branch_format")),
    ("branch git-valid", lambda d: d.update(branch="jarvis-a..b"), ("branch", "branch_format")),
    ("branch no .lock", lambda d: d.update(branch="jarvis-x.lock"), ("branch", "branch_format")),
    (
        "acceptance_tests non-empty",
        lambda d: d.update(acceptance_tests=[]),
        ("acceptance_tests", "empty"),
    ),
    (
        "acceptance_tests array",
        lambda d: d.update(acceptance_tests="npm test"),
        ("acceptance_tests", "wrong_type"),
    ),
    (
        "acceptance_tests items",
        lambda d: d.update(acceptance_tests=["ok", " "]),
        ("acceptance_tests.1", "empty"),
    ),
    (
        "output_contract required",
        lambda d: d.pop("output_contract"),
        ("output_contract", "required"),
    ),
    (
        "required_fields non-empty",
        lambda d: d["output_contract"].update(required_fields=[]),
        ("output_contract.required_fields", "empty"),
    ),
    (
        "required_fields has P0",
        lambda d: d["output_contract"]["required_fields"].remove("commit_sha"),
        ("output_contract.required_fields", "required_fields_incomplete"),
    ),
    (
        "required_fields has a PR field",
        lambda d: d["output_contract"]["required_fields"].remove("pr_url"),
        ("output_contract.required_fields", "required_fields_incomplete"),
    ),
    (
        "required_fields unique",
        lambda d: d["output_contract"]["required_fields"].append("risk"),
        ("output_contract.required_fields", "duplicate_item"),
    ),
    (
        "browser override boolean",
        lambda d: d["output_contract"].update(browser_evidence_required="yes"),
        ("output_contract.browser_evidence_required", "wrong_type"),
    ),
    ("ui_impacting boolean", lambda d: d.update(ui_impacting=1), ("ui_impacting", "wrong_type")),
    (
        "unknown field",
        lambda d: d.update(aceptance_tests=["x"]),
        ("aceptance_tests", "unknown_field"),
    ),
    (
        "fresh has no session",
        lambda d: d.update(session_id="s-1"),
        ("session_id", "session_id_with_fresh_intent"),
    ),
    (
        "continue lists session_id",
        lambda d: d.update(context_intent="continue"),
        ("output_contract.required_fields", "session_id_not_required"),
    ),
    (
        "parent is another run",
        lambda d: d.update(parent_run_id=d["run_id"]),
        ("parent_run_id", "parent_is_self"),
    ),
    (
        "screenshot in input",
        lambda d: d.update(input="Take screenshots of /runs"),
        ("input", "screenshot_reference"),
    ),
    (
        "screenshot in tests",
        lambda d: d.update(acceptance_tests=["npm test", "screen-shot the page"]),
        ("acceptance_tests.1", "screenshot_reference"),
    ),
    (
        "screenshot tool name",
        lambda d: d.update(acceptance_tests=["call mcp__chrome-devtools__take_screenshot"]),
        ("acceptance_tests.0", "screenshot_reference"),
    ),
    ("priority enum", lambda d: d.update(priority="asap"), ("priority", "not_allowed")),
    (
        "criteria are checked",
        lambda d: d.update(
            acceptance_criteria=[{"type": "file_exists", "path": "/etc/passwd", "description": "x"}]
        ),
        ("acceptance_criteria.0.path", "unsafe_path"),
    ),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_rule(change: Callable[[dict[str, Any]], object], expected: tuple[str, str]) -> None:
    assert expected in problems(variant(change))


def test_all_errors_are_collected_not_only_the_first() -> None:
    doc = variant(
        lambda d: d.update(
            run_id="a b", task_type="x", repo="r", branch="main", acceptance_tests=[]
        )
    )
    fields = {field for field, _ in problems(doc)}
    assert {"run_id", "task_type", "repo", "branch", "acceptance_tests"} <= fields


def test_continue_with_session_field_listed_is_valid() -> None:
    def change(d: dict[str, Any]) -> None:
        d.update(context_intent="continue", session_id="sess-1")
        d["output_contract"]["required_fields"].append("session_id")

    assert problems(variant(change)) == set()


def test_pr_skipped_reason_satisfies_the_pr_requirement() -> None:
    def change(d: dict[str, Any]) -> None:
        fields = d["output_contract"]["required_fields"]
        fields[fields.index("pr_url")] = "pr_skipped_reason"

    assert problems(variant(change)) == set()


@pytest.mark.parametrize(
    ("ui", "override", "required"),
    [
        (None, None, False),
        (True, None, True),
        (True, False, False),
        (False, True, True),
        (None, True, True),
    ],
)
def test_browser_evidence_requirement(
    ui: bool | None, override: bool | None, required: bool
) -> None:
    doc = copy.deepcopy(BASE)
    if ui is not None:
        doc["ui_impacting"] = ui
    if override is not None:
        doc["output_contract"]["browser_evidence_required"] = override
    assert evidence_required(doc) is required
    model, _ = parse_dispatch(doc)
    assert model is not None and model.browser_evidence_required is required


def test_evidence_required_but_unlisted_is_a_warning_not_an_error() -> None:
    report = validate_dispatch(variant(lambda d: d.update(ui_impacting=True)))
    assert report.valid
    assert [w.code for w in report.warnings] == ["browser_evidence_not_listed"]


def test_messages_quote_hostile_values_inertly() -> None:
    hostile = "risk\x1b]0;pwned\x07"
    doc = variant(lambda d: d["output_contract"]["required_fields"].extend([hostile, hostile]))
    report = validate_dispatch(doc)
    assert report.errors
    for error in report.errors:
        assert "\x1b" not in error.message and "\x07" not in error.message


def test_the_contract_example_with_context_intent_is_valid() -> None:
    example = {
        "run_id": "task-20260222-001",
        "task_type": "implement",
        "context_intent": "fresh",
        "ui_impacting": True,
        "input": "Implement strict worker dispatch validation",
        "repo": "acme-labs/nanoclaw",
        "branch": "jarvis-dispatch-contract",
        "acceptance_tests": ["npm run build", "npm test"],
        "output_contract": {
            "browser_evidence_required": True,
            "required_fields": [
                "run_id",
                "branch",
                "commit_sha",
                "files_changed",
                "test_result",
                "risk",
                "pr_url",
                "browser_evidence",
            ],
        },
        "priority": "high",
    }
    assert validate_dispatch(example).valid
