from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from core.contracts.criteria import CRITERION_TYPES, validate_dispatch_record

RECORD: dict[str, Any] = {
    "id": "dispatch-1771150800000-abc123",
    "workspace": "my-app",
    "workspace_path": "/srv/my-app",
    "task": "Add header component with logo and navigation",
    "status": "pending",
    "created_at": "2026-02-15T10:00:00.000Z",
    "updated_at": "2026-02-15T10:00:00.000Z",
    "acceptance_criteria": [
        {"type": "file_exists", "path": "src/Header.tsx", "description": "exists"},
        {"type": "test_pass", "command": "npm test", "shell": True, "description": "tests"},
        {
            "type": "content_match",
            "path": "src/Header.tsx",
            "pattern": "export.*Header",
            "description": "exported",
        },
        {
            "type": "command_success",
            "command": ["npm", "run", "lint"],
            "cwd": ".",
            "description": "lint",
        },
        {
            "type": "no_lint_errors",
            "command": ["ruff", "check", "."],
            "description": "no lint",
            "universal": True,
        },
        {
            "type": "changelog_updated",
            "path": "changelogs/{workspace}.md",
            "pattern": r"## \d{4}",
            "description": "c",
        },
        {
            "type": "backlog_updated",
            "path": "backlogs/{workspace}.md",
            "pattern": r"\[x\]",
            "description": "b",
        },
    ],
    "universal_criteria": True,
    "verification_results": None,
}


def codes(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e.field, e.code) for e in validate_dispatch_record(json.dumps(doc)).errors}


def test_a_record_with_every_criterion_type_is_valid() -> None:
    assert {c["type"] for c in RECORD["acceptance_criteria"]} == set(CRITERION_TYPES)
    assert codes(RECORD) == set()


@pytest.mark.parametrize(
    ("index", "change", "expected"),
    [
        (0, {"path": "../secrets"}, ("acceptance_criteria.0.path", "unsafe_path")),
        (0, {"path": "/etc/passwd"}, ("acceptance_criteria.0.path", "unsafe_path")),
        (0, {"description": " "}, ("acceptance_criteria.0.description", "empty")),
        (2, {"pattern": "(["}, ("acceptance_criteria.2.pattern", "bad_pattern")),
        (3, {"command": []}, ("acceptance_criteria.3.command", "empty")),
        (3, {"cwd": "../.."}, ("acceptance_criteria.3.cwd", "unsafe_path")),
        (3, {"timeout_s": 0}, ("acceptance_criteria.3.timeout_s", "out_of_range")),
        (1, {"surprise": 1}, ("acceptance_criteria.1.surprise", "unknown_field")),
        (0, {"type": "vibes"}, ("acceptance_criteria.0", "not_allowed")),
    ],
)
def test_criterion_rules(index: int, change: dict[str, Any], expected: tuple[str, str]) -> None:
    doc = copy.deepcopy(RECORD)
    doc["acceptance_criteria"][index].update(change)
    assert expected in codes(doc)


def test_an_applied_override_needs_a_reason() -> None:
    doc = copy.deepcopy(RECORD)
    doc["verification_results"] = {
        "verified_at": "2026-02-15T11:30:00Z",
        "passed": False,
        "criteria_results": [
            {"criterion": {"type": "file_exists"}, "passed": False, "output": "File not found"}
        ],
        "override_applied": True,
        "override_reason": "",
    }
    assert ("verification_results", "override_reason_required") in codes(doc)
    doc["verification_results"]["override_reason"] = "criterion misunderstood: file lives elsewhere"
    assert codes(doc) == set()


def test_status_and_timestamps_are_checked() -> None:
    doc = {**RECORD, "status": "done", "created_at": "yesterday"}
    got = codes(doc)
    assert ("status", "not_allowed") in got
    assert any(field == "created_at" for field, _ in got)
