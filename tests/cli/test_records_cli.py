"""`jarvis validate record|planner` and `jarvis fingerprint` as a script runs them (in process,
see tests/jarvis_cli.py)."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.cli.conftest import jarvis
from tests.conftest import SAMPLES


def test_valid_record_exits_0_and_names_its_version() -> None:
    result = jarvis(
        "validate",
        "record",
        SAMPLES / "borisbot/valid-task_command.v1-linkedin-feed.json",
        "--json",
    )
    assert result.code == 0
    data = result.json()
    assert data["valid"] is True and data["kind"] == "task_command.v1"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("invalid-task_event.v2-unsupported-version.json", "unsupported_schema_version"),
        ("invalid-unknown-missing-version.json", "missing_schema_version"),
        ("invalid-error.v1-bad-fingerprint.json", "fingerprint_mismatch"),
    ],
)
def test_invalid_records_exit_1_with_their_code(name: str, code: str) -> None:
    result = jarvis("validate", "record", SAMPLES / "borisbot" / name, "--json")
    assert result.code == 1
    assert code in {e["code"] for e in result.json()["errors"]}


def test_record_from_stdin() -> None:
    doc = {"schema_version": "task_event.v1", "command_id": "2", "status": "ok", "duration_ms": 125}
    assert jarvis("validate", "record", "-", "--json", stdin=json.dumps(doc).encode()).code == 0


@pytest.mark.parametrize(
    ("name", "ok", "repaired"),
    [
        ("ok-clean.txt", True, False),
        ("repaired-fenced.txt", True, True),
        ("repaired-truncated.txt", True, True),
        ("invalid-truncated-in-string.txt", False, False),
        ("invalid-extra-field.txt", False, False),
    ],
)
def test_planner_shape_and_exit_codes(name: str, ok: bool, repaired: bool) -> None:
    result = jarvis("validate", "planner", SAMPLES / "planner" / name, "--json")
    data = result.json()
    assert {"ok", "plan", "error_code", "repaired"} <= set(data)
    assert (data["ok"], data["repaired"]) == (ok, repaired)
    assert result.code == (0 if ok else 1)
    if ok:
        assert data["error_code"] is None and data["plan"]["planner_schema_version"] == "planner.v1"
    else:
        assert data["error_code"] == "LLM_OUTPUT_INVALID" and data["plan"] is None


def test_fingerprint_matches_the_contract_formula() -> None:
    url = "https://www.linkedin.com/feed/?trk=xyz#top"
    result = jarvis(
        "fingerprint",
        "--class",
        "timeout",
        "--code",
        "NAV_TIMEOUT",
        "--step",
        "3",
        "--selector",
        "#feed",
        "--url",
        url,
        "--json",
    )
    assert result.code == 0
    data = result.json()
    assert data["normalized_url"] == "www.linkedin.com/feed"
    expected = hashlib.sha256(b"timeout|NAV_TIMEOUT|3|#feed|www.linkedin.com/feed").hexdigest()
    assert data["fingerprint"] == expected


def test_fingerprint_without_selector_or_url_uses_empty_parts() -> None:
    data = jarvis(
        "fingerprint", "--class", "timeout", "--code", "T", "--step", "1", "--json"
    ).json()
    assert data == {
        "normalized_url": "",
        "fingerprint": hashlib.sha256(b"timeout|T|1||").hexdigest(),
    }


def test_fingerprint_rejects_an_unknown_class_as_usage() -> None:
    result = jarvis("fingerprint", "--class", "vibes", "--code", "X", "--step", "1", "--json")
    assert result.code == 2
    assert result.json()["error"]["code"] == "unknown_error_class"
