"""Every sample under sample_runs/borisbot and sample_runs/planner gets the verdict its name says.

Records are named ``valid-<kind>-<what>.json`` or ``invalid-<kind>-<what>.json``; planner outputs
``ok-<what>.txt``, ``repaired-<what>.txt`` or ``invalid-<what>.txt``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.contracts.planner import parse_planner_output
from core.contracts.records import validate_record

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs"
RECORDS = sorted((SAMPLES / "borisbot").glob("*.json"))
PLANNER = sorted((SAMPLES / "planner").glob("*.txt"))

#: The error code each invalid record sample exists to show.
EXPECTED_RECORD_CODE = {
    "invalid-error.v1-bad-fingerprint.json": "fingerprint_mismatch",
    "invalid-error.v1-llm-code-mismatch.json": "not_allowed",
    "invalid-task_command.v1-duplicate-id.json": "duplicate_id",
    "invalid-task_command.v1-missing-params.json": "required",
    "invalid-task_command.v1-unknown-action.json": "unknown_action",
    "invalid-task_event.v2-unsupported-version.json": "unsupported_schema_version",
    "invalid-task_result.v1-wrong-type.json": "wrong_type",
    "invalid-unknown-missing-version.json": "missing_schema_version",
}

#: The error code each invalid planner sample exists to show.
EXPECTED_PLANNER_CODE = {
    "invalid-truncated-in-string.txt": "truncated_in_string",
    "invalid-extra-field.txt": "unknown_field",
    "invalid-missing-field.txt": "required",
    "invalid-not-json.txt": "no_json_object",
}


def test_the_required_samples_exist() -> None:
    names = {p.name for p in RECORDS}
    assert sum(n.startswith("valid-task_command.v1-") for n in names) >= 2
    for kind in ("task_result.v1", "task_event.v1", "error.v1"):
        assert any(n.startswith(f"valid-{kind}-") for n in names)
    assert set(EXPECTED_RECORD_CODE) <= names
    assert {p.name for p in PLANNER} >= {
        "ok-clean.txt",
        "repaired-fenced.txt",
        "repaired-truncated.txt",
        "repaired-prose.txt",
        *EXPECTED_PLANNER_CODE,
    }


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_record_sample(path: Path) -> None:
    verdict, kind, _ = path.name.split("-", 2)
    report = validate_record(path.read_bytes())
    if verdict == "valid":
        assert report.valid, report.to_json()
        assert report.kind == kind
        assert not report.warnings, report.to_json()
    else:
        assert verdict == "invalid", f"unexpected sample name {path.name}"
        assert not report.valid
        expected = EXPECTED_RECORD_CODE.get(path.name)
        if expected:
            assert expected in {e.code for e in report.errors}, report.to_json()


def test_each_llm_code_has_a_valid_sample() -> None:
    codes = set()
    for path in RECORDS:
        if path.name.startswith("valid-error.v1-"):
            report = validate_record(path.read_bytes())
            assert report.document is not None
            codes.add(report.document["error_code"])
    assert {"LLM_PROVIDER_UNHEALTHY", "LLM_TIMEOUT", "LLM_OUTPUT_INVALID"} <= codes


@pytest.mark.parametrize("path", PLANNER, ids=lambda p: p.name)
def test_planner_sample(path: Path) -> None:
    verdict = path.name.split("-", 1)[0]
    result = parse_planner_output(path.read_bytes())
    if verdict == "ok":
        assert result.ok and not result.repaired, result.to_json()
    elif verdict == "repaired":
        assert result.ok and result.repaired, result.to_json()
    else:
        assert verdict == "invalid", f"unexpected sample name {path.name}"
        assert not result.ok
        assert result.error_code == "LLM_OUTPUT_INVALID"
        expected = EXPECTED_PLANNER_CODE.get(path.name)
        if expected:
            assert expected in {e.code for e in result.errors}, result.to_json()
