"""The completion gates: extraction rules, then one case per gate."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from core.contracts.completion import (
    GATES,
    MAX_OUTPUT_BYTES,
    base_url_problem,
    evaluate_completion,
    extract_completion,
)
from core.contracts.dispatch import P0_COMPLETION_FIELDS

DISPATCH: dict[str, Any] = {
    "run_id": "task-7",
    "task_type": "fix",
    "context_intent": "fresh",
    "input": "Fix it",
    "repo": "acme/engine",
    "branch": "jarvis-fix-it",
    "acceptance_tests": ["pytest"],
    "output_contract": {"required_fields": [*P0_COMPLETION_FIELDS, "pr_url"]},
}
UI_DISPATCH: dict[str, Any] = {**DISPATCH, "ui_impacting": True}

GOOD: dict[str, Any] = {
    "run_id": "task-7",
    "branch": "jarvis-fix-it",
    "commit_sha": "abc1234",
    "files_changed": ["a.py"],
    "test_result": "pytest: 3 passed",
    "risk": "low",
    "pr_url": "https://example.test/acme/engine/pull/1",
}
EVIDENCE = {
    "base_url": "http://127.0.0.1:3000/dashboard",
    "tools_listed": ["chrome-devtools"],
    "execute_tool_evidence": ["navigate /dashboard -> sidebar rendered"],
}


def block(obj: object, tag: str = "completion") -> str:
    return f"<{tag}>\n{json.dumps(obj)}\n</{tag}>"


def failing(dispatch: dict[str, Any], completion: dict[str, Any]) -> dict[str, str]:
    verdict = evaluate_completion(dispatch, "log line\n" + block(completion))
    return {g.name: g.detail for g in verdict.gates if not g.passed}


def test_a_good_completion_passes_every_gate_in_order() -> None:
    verdict = evaluate_completion(DISPATCH, block(GOOD))
    assert verdict.state == "review_requested"
    assert [g.name for g in verdict.gates] == list(GATES)
    assert all(g.passed for g in verdict.gates)
    assert verdict.completion == GOOD
    assert verdict.errors == []


# --- extraction ---------------------------------------------------------------------------------


def test_no_block_fails_parseable_and_says_so() -> None:
    verdict = evaluate_completion(DISPATCH, json.dumps(GOOD))  # bare JSON: no fallback
    assert verdict.state == "failed_contract"
    assert verdict.gates[0].name == "parseable" and not verdict.gates[0].passed
    assert "no <completion>" in verdict.gates[0].detail
    assert [e.code for e in verdict.errors] == ["no_completion_block"]
    assert all(not g.passed for g in verdict.gates[1:])


def test_a_block_that_is_not_strict_json_fails_parseable_and_says_which() -> None:
    verdict = evaluate_completion(DISPATCH, "<completion>{'run_id': 'x'}</completion>")
    assert [e.code for e in verdict.errors] == ["completion_not_json"]
    assert "1 completion block" in verdict.gates[0].detail


def test_a_fenced_body_is_not_strict_json() -> None:
    out = "<completion>\n```json\n" + json.dumps(GOOD) + "\n```\n</completion>"
    assert extract_completion(out).completion is None


def test_a_json_array_body_is_not_an_object() -> None:
    found = extract_completion("<completion>[1, 2]</completion>")
    assert found.completion is None
    assert "array" in found.errors[0].message


@pytest.mark.parametrize("tag", ["completion", "COMPLETION", "Completion", " completion "])
def test_tags_match_in_any_case(tag: str) -> None:
    out = f"<{tag}>{json.dumps(GOOD)}</{tag}>"
    assert extract_completion(out).completion == GOOD


def test_the_last_block_that_parses_wins() -> None:
    older = {**GOOD, "commit_sha": "1111111"}
    out = block(older) + "\nmore work\n" + block(GOOD) + "\n<completion>{broken</completion>"
    found = extract_completion(out)
    assert found.completion == GOOD
    assert (found.blocks_found, found.chosen) == (3, 2)


def test_an_unclosed_opening_tag_pairs_with_the_nearest_real_block() -> None:
    out = "I will emit <completion> soon.\n" + block(GOOD)
    assert extract_completion(out).completion == GOOD


def test_nanoclaw_markers_are_optional() -> None:
    framed = "---NANOCLAW_OUTPUT_START---\n" + block(GOOD) + "\n---NANOCLAW_OUTPUT_END---"
    assert extract_completion(framed).completion == GOOD


def test_invalid_utf8_around_the_block_is_tolerated() -> None:
    out = b"\xff\xfe binary noise\n" + block(GOOD).encode()
    assert extract_completion(out).completion == GOOD


def test_oversized_output_is_refused() -> None:
    out = b"x" * (MAX_OUTPUT_BYTES + 1)
    found = extract_completion(out)
    assert [e.code for e in found.errors] == ["output_too_large"]


def test_duplicate_keys_in_the_block_are_not_strict_json() -> None:
    assert (
        extract_completion('<completion>{"run_id": "a", "run_id": "b"}</completion>').completion
        is None
    )


# --- one case per gate ---------------------------------------------------------------------------

GATE_CASES: list[tuple[str, Callable[[dict[str, Any]], object], str]] = [
    ("missing commit_sha", lambda c: c.pop("commit_sha"), "required_artifacts"),
    ("blank risk", lambda c: c.update(risk="  "), "required_artifacts"),
    ("blank test_result", lambda c: c.update(test_result=""), "test_result_and_risk"),
    ("risk not a string", lambda c: c.update(risk=3), "test_result_and_risk"),
    ("run_id mismatch", lambda c: c.update(run_id="task-8"), "run_id_matches"),
    ("branch mismatch", lambda c: c.update(branch="jarvis-other"), "branch_matches"),
    ("sha too short", lambda c: c.update(commit_sha="abc12"), "commit_sha_format"),
    ("sha too long", lambda c: c.update(commit_sha="a" * 41), "commit_sha_format"),
    ("sha not hex", lambda c: c.update(commit_sha="HEAD~1"), "commit_sha_format"),
    ("sha not a string", lambda c: c.update(commit_sha=1234567), "commit_sha_format"),
    ("files not an array", lambda c: c.update(files_changed="a.py"), "files_changed_format"),
    ("files items strings", lambda c: c.update(files_changed=["a.py", 3]), "files_changed_format"),
    ("no PR reference", lambda c: c.pop("pr_url"), "pr_reference"),
    (
        "blank skipped reason",
        lambda c: (c.pop("pr_url"), c.update(pr_skipped_reason=" ")),
        "pr_reference",
    ),
    ("pr_url not a URL", lambda c: c.update(pr_url="pull 1"), "pr_reference"),
    (
        "evidence cites a screenshot even when optional",
        lambda c: c.update(browser_evidence={**EVIDENCE, "tools_listed": ["take_screenshot"]}),
        "browser_evidence",
    ),
]


@pytest.mark.parametrize(
    ("change", "gate"), [c[1:] for c in GATE_CASES], ids=[c[0] for c in GATE_CASES]
)
def test_each_gate(change: Callable[[dict[str, Any]], object], gate: str) -> None:
    completion = copy.deepcopy(GOOD)
    change(completion)
    assert gate in failing(DISPATCH, completion)


def test_sha_bounds_are_inclusive() -> None:
    assert failing(DISPATCH, {**GOOD, "commit_sha": "abcdef"}) == {}
    assert failing(DISPATCH, {**GOOD, "commit_sha": "A" * 40}) == {}


def test_an_empty_files_changed_list_is_allowed() -> None:
    assert failing(DISPATCH, {**GOOD, "files_changed": []}) == {}


def test_pr_skipped_reason_replaces_pr_url() -> None:
    completion = {k: v for k, v in GOOD.items() if k != "pr_url"}
    completion["pr_skipped_reason"] = "docs-only change"
    assert failing(DISPATCH, completion) == {}


def test_extra_required_fields_from_the_dispatch_are_enforced() -> None:
    dispatch = copy.deepcopy(DISPATCH)
    dispatch["output_contract"]["required_fields"].append("session_id")
    assert "session_id" in failing(dispatch, GOOD)["required_artifacts"]
    assert failing(dispatch, {**GOOD, "session_id": "s-1"}) == {}


# --- browser evidence when required ---------------------------------------------------------------

EVIDENCE_CASES: list[tuple[str, object, str]] = [
    ("missing", None, "browser_evidence"),
    ("not an object", "see PR", "browser_evidence"),
    ("no base_url", {**EVIDENCE, "base_url": ""}, "browser_evidence.base_url"),
    ("localhost", {**EVIDENCE, "base_url": "http://localhost:3000/"}, "browser_evidence.base_url"),
    ("no port", {**EVIDENCE, "base_url": "http://127.0.0.1/x"}, "browser_evidence.base_url"),
    ("bad port", {**EVIDENCE, "base_url": "http://127.0.0.1:99999/x"}, "browser_evidence.base_url"),
    ("ftp", {**EVIDENCE, "base_url": "ftp://127.0.0.1:21/"}, "browser_evidence.base_url"),
    ("no tools", {**EVIDENCE, "tools_listed": []}, "browser_evidence.tools_listed"),
    (
        "no steps",
        {**EVIDENCE, "execute_tool_evidence": []},
        "browser_evidence.execute_tool_evidence",
    ),
    (
        "screenshot step",
        {**EVIDENCE, "execute_tool_evidence": ["captured Screen Shot of page"]},
        "browser_evidence.execute_tool_evidence.0",
    ),
]


@pytest.mark.parametrize(
    ("evidence", "field"), [c[1:] for c in EVIDENCE_CASES], ids=[c[0] for c in EVIDENCE_CASES]
)
def test_required_browser_evidence(evidence: object, field: str) -> None:
    completion = copy.deepcopy(GOOD)
    if evidence is not None:
        completion["browser_evidence"] = evidence
    verdict = evaluate_completion(UI_DISPATCH, block(completion))
    assert verdict.state == "failed_contract"
    assert field in {e.field for e in verdict.errors}


def test_valid_browser_evidence_passes_when_required() -> None:
    verdict = evaluate_completion(UI_DISPATCH, block({**GOOD, "browser_evidence": EVIDENCE}))
    assert verdict.state == "review_requested"


def test_the_override_waives_evidence_for_ui_work() -> None:
    dispatch = copy.deepcopy(UI_DISPATCH)
    dispatch["output_contract"]["browser_evidence_required"] = False
    verdict = evaluate_completion(dispatch, block(GOOD))
    assert verdict.state == "review_requested"
    assert verdict.gates[-1].detail == "not required by this dispatch"


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://127.0.0.1:3000/dashboard", True),
        ("https://127.0.0.1:8443/", True),
        ("http://127.0.0.1:3000", True),
        ("http://127.0.0.2:3000/", False),
        ("http://127.0.0.1:0/", False),
        ("http://[::1]:3000/", False),
        ("javascript:alert(1)", False),
    ],
)
def test_base_url_rule(url: str, ok: bool) -> None:
    assert (base_url_problem(url) is None) is ok


def test_to_json_has_the_documented_shape() -> None:
    data = evaluate_completion(DISPATCH, block(GOOD)).to_json()
    assert set(data) >= {"state", "gates", "errors", "completion"}
    assert set(data["gates"][0]) == {"name", "passed", "detail"}
