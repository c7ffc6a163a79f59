"""A run carries at most `MAX_CRITERIA` acceptance criteria.

Criteria are verified one after another, each with a time limit of its own: without a cap, one
dispatch listing thousands of them holds a verifier for days. A dispatch (or a dispatch record)
that lists more is refused with a sentence naming the cap and the count; extraction from task
text, which never refuses a dispatch, keeps the first ones and says so in the run's journal; an
operator cannot add one past the cap while the run is queued.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.contracts.criteria import MAX_CRITERIA, validate_dispatch_record
from core.contracts.dispatch import validate_dispatch
from core.criteria import run_criteria
from core.criteria.at_dispatch import criteria_for_dispatch
from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.jarvis_cli import jarvis

SENTENCE = f"acceptance_criteria lists {MAX_CRITERIA + 1} criteria; a run may have at most 50."


def _files(count: int) -> list[dict[str, Any]]:
    return [
        {"type": "file_exists", "path": f"src/m{i}.py", "description": f"src/m{i}.py must exist"}
        for i in range(count)
    ]


def _codes(errors: list[Any]) -> list[tuple[str, str]]:
    return [(e.field, e.code) for e in errors]


def test_the_cap_is_one_a_real_task_never_needs() -> None:
    assert MAX_CRITERIA == 50


def test_a_dispatch_with_the_cap_is_valid_and_one_more_is_refused_with_a_sentence() -> None:
    assert validate_dispatch(dispatch_doc("r", acceptance_criteria=_files(MAX_CRITERIA))).valid
    report = validate_dispatch(dispatch_doc("r", acceptance_criteria=_files(MAX_CRITERIA + 1)))
    assert _codes(report.errors) == [("acceptance_criteria", "too_many_criteria")]
    assert report.errors[0].message == SENTENCE


def test_a_dispatch_record_is_capped_alike() -> None:
    record = {
        "id": "t-1", "workspace": "w", "workspace_path": "/w", "task": "Fix it.",
        "status": "pending", "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z", "acceptance_criteria": _files(MAX_CRITERIA + 1),
    }  # fmt: skip
    report = validate_dispatch_record(record)
    assert _codes(report.errors) == [("acceptance_criteria", "too_many_criteria")]


def test_criteria_past_the_cap_are_not_even_validated() -> None:
    """The count is checked first: 10,000 bad criteria cost one error, not 10,000 checks."""
    bad = [{"type": "content_match", "path": "/etc/passwd", "pattern": "(", "description": ""}]
    report = validate_dispatch(dispatch_doc("r", acceptance_criteria=bad * 10_000))
    assert _codes(report.errors) == [("acceptance_criteria", "too_many_criteria")]
    assert "10000 criteria" in report.errors[0].message


def test_intake_refuses_the_dispatch(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        doc = dispatch_doc("many", acceptance_criteria=_files(MAX_CRITERIA + 1))
        result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                                 actor="test")  # fmt: skip
        assert result.outcome == "invalid"
        assert _codes(result.errors) == [("acceptance_criteria", "too_many_criteria")]
        assert store.get_run("many") is None
    finally:
        store.close()


def test_jarvis_dispatch_refuses_it_with_exit_1_and_the_sentence(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_text(json.dumps(dispatch_doc("many", acceptance_criteria=_files(51))))
    ws = tmp_path / "ws"
    shown = jarvis("dispatch", path, "--workspace", ws)
    assert shown.code == 1
    assert "too_many_criteria" in shown.stdout
    # The table wraps the sentence; its words are all there, in order.
    message = " ".join(
        line.split("│")[3].strip() for line in shown.stdout.splitlines() if line.count("│") == 4
    )
    assert message == SENTENCE
    as_json = jarvis("dispatch", path, "--workspace", ws, "--json")
    assert as_json.code == 1
    [error] = as_json.json()["errors"]
    assert error == {"field": "acceptance_criteria", "code": "too_many_criteria",
                     "message": SENTENCE}  # fmt: skip


def test_extraction_past_the_cap_keeps_the_first_and_says_so() -> None:
    text = "Create " + ", ".join(f"src/m{i}.py" for i in range(60)) + "."
    extraction, _ = criteria_for_dispatch(dispatch_doc("r", input=text))
    assert [c["path"] for c in extraction.criteria] == [f"src/m{i}.py" for i in range(50)]
    note = "60 criteria were found; the run keeps the first 50, the most a run may have"
    # Among the first notes: the journal keeps only the first twenty.
    assert note in extraction.notes[:3]


def test_the_universal_checklist_past_the_cap_is_cut_with_a_note() -> None:
    doc = dispatch_doc("r", acceptance_criteria=_files(MAX_CRITERIA - 1), universal_criteria=True)
    extraction, universal = criteria_for_dispatch(doc)
    assert universal and len(extraction.criteria) == MAX_CRITERIA
    assert extraction.criteria[-1]["universal"] is True
    assert any("53 criteria were found" in n for n in extraction.notes[:3])


def test_an_operator_cannot_add_a_criterion_past_the_cap(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        doc = dispatch_doc("full", acceptance_criteria=_files(MAX_CRITERIA))
        submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                        actor="test")  # fmt: skip
        change = run_criteria.add_criterion(store, "full", _files(1)[0], "op")
        assert (change.ok, change.code, change.field) == (False, "too_many_criteria", "criterion")
        assert change.message == (
            "Run full has 50 criteria, the most a run may have; remove one first."
        )
        assert len(run_criteria.criteria_of(store.get_run("full") or {})) == MAX_CRITERIA
    finally:
        store.close()


def test_jarvis_criteria_extract_shows_what_a_dispatch_would_keep() -> None:
    text = "Create " + ", ".join(f"src/m{i}.py" for i in range(60)) + "."
    shown = jarvis("criteria", "extract", "-", "--no-universal", "--json", stdin=text.encode())
    assert shown.code == 0
    out = shown.json()
    assert len(out["criteria"]) == MAX_CRITERIA
    assert any("60 criteria were found" in note for note in out["notes"])
