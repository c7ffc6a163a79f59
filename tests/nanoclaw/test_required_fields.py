"""NanoClaw's back-fill of a dispatch's ``required_fields`` (``normalizeWorkerDispatchPayloadText``,
src/extensions/jarvis/dispatch-service.ts at a8d0526), entry for entry."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from core.nanoclaw.required_fields import backfill_required_fields
from tests.nanoclaw.coordinator import documented_dispatch

BASE = ["run_id", "branch", "commit_sha", "files_changed", "test_result", "risk"]


def with_fields(fields: Any) -> dict[str, Any]:
    return documented_dispatch(
        "task-1", output_contract={"required_fields": fields, "browser_evidence_required": False}
    )


@pytest.mark.parametrize(
    ("given", "filled"),
    [
        ([], [*BASE, "pr_url"]),
        (["run_id", "branch", "pr_url"], ["run_id", "branch", "pr_url", *BASE[2:]]),
        # Strings only, trimmed, no blanks, each once; the base six, then pr_url.
        (["risk", " branch ", "", 5, None, "risk"], ["risk", "branch", "run_id", *BASE[2:5],
                                                      "pr_url"]),
        (["pr_skipped_reason"], ["pr_skipped_reason", *BASE]),
        (["session_id", "custom"], ["session_id", "custom", *BASE, "pr_url"]),
    ],
)  # fmt: skip
def test_missing_entries_are_filled_as_nanoclaw_fills_them(given: Any, filled: list[str]) -> None:
    doc = with_fields(given)
    before = copy.deepcopy(doc)
    out = backfill_required_fields(doc)
    assert out["output_contract"]["required_fields"] == filled
    assert list(out["output_contract"]) == ["required_fields", "browser_evidence_required"]
    assert {k: v for k, v in out.items() if k != "output_contract"} == {
        k: v for k, v in before.items() if k != "output_contract"
    }
    assert doc == before  # the original is left as it was


@pytest.mark.parametrize(
    "doc",
    [
        with_fields([*BASE, "pr_url"]),  # complete: nothing to change
        documented_dispatch("task-1", output_contract={}),  # no list to fill
        documented_dispatch("task-1", output_contract={"required_fields": "run_id"}),
        documented_dispatch("task-1", output_contract=None),
        {k: v for k, v in documented_dispatch("task-1").items() if k != "output_contract"},
        {**with_fields([]), "run_id": 7},  # NanoClaw takes no dispatch without a string run_id
    ],
)  # fmt: skip
def test_what_nanoclaw_leaves_alone_is_left_alone(doc: dict[str, Any]) -> None:
    assert backfill_required_fields(doc) is doc
