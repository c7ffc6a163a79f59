"""A NUL in text is stored the same on both backends: as U+FFFD.

PostgreSQL refuses a NUL in a text value, which SQLite keeps; a worker's progress holding one
was stored on SQLite and failed the host's transaction on PostgreSQL. The rule is the store's:
every parameter a statement binds, and every string in a journal payload, has its NULs replaced
by U+FFFD (the replacement character) on either backend, so both hold and return the same text.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.lifecycle import RunState
from core.store.api import RunStore
from tests.core.store_helpers import make_run

RUN = "run-nul"
NUL = "before\x00after"
STORED = "before\ufffdafter"


@pytest.fixture
def store(any_store: RunStore) -> RunStore:
    make_run(any_store, RUN, RunState.RUNNING)
    return any_store


def test_worker_and_operator_text_with_a_nul_round_trips_as_the_same_text(
    store: RunStore,
) -> None:
    with store.transaction() as tx:
        assert tx.add_progress_event(RUN, 1, 1, "0001.json", timestamp="2026-11-26T03:00:00.000Z",
                                     at_utc="2026-11-26T03:00:00.000Z", phase=f"edit {NUL}",
                                     summary=NUL, tool_used=NUL)  # fmt: skip
        tx.touch_run(
            RUN,
            changes={"last_progress_summary": NUL, "test_summary": NUL, "risk_summary": NUL},
            kind="progress",
            payload={"summary": NUL, "nested": [{"text": NUL}], NUL: 1},
            actor="jarvis-worker-1",
        )
        tx.add_gate_result(RUN, 1, "tests_pass", False, NUL)
        tx.add_steer("steer-nul", RUN, NUL, "night-operator")
        assert tx.record_refusal(
            "r.reason.json",
            {"run_id": RUN, "named_run": RUN, "lane": "jarvis-worker-1", "code": "not_json",
             "message": NUL, "original_path": f"a{NUL}.json", "stored_as": None,
             "outcome": "moved", "quarantined_at": "2026-11-26T03:00:00.000000Z"},
        )  # fmt: skip

    (event,) = store.rows("SELECT phase, summary, tool_used FROM progress_events")
    assert event == {"phase": f"edit {STORED}", "summary": STORED, "tool_used": STORED}
    run = store.get_run(RUN) or {}
    assert [run[k] for k in ("last_progress_summary", "test_summary", "risk_summary")] == [
        STORED
    ] * 3
    (gate,) = store.rows("SELECT detail FROM gate_results")
    assert gate["detail"] == STORED
    (steer,) = store.rows("SELECT message FROM steering_events WHERE steer_id = 'steer-nul'")
    assert steer["message"] == STORED
    (refusal,) = store.refusals(run_id=RUN)
    assert (refusal["message"], refusal["original_path"]) == (STORED, f"a{STORED}.json")
    entry = store.journal_since(0, run_id=RUN)[-1]
    assert entry["kind"] == "progress"
    assert entry["payload"] == (
        '{"before\\ufffdafter": 1, "nested": [{"text": "before\\ufffdafter"}], '
        '"summary": "before\\ufffdafter"}'
    )


def test_a_lookup_by_a_text_with_a_nul_finds_what_was_stored_under_it(store: RunStore) -> None:
    with store.transaction() as tx:
        tx.add_steer(f"steer-{NUL}", RUN, "go", "night-operator")
    found: list[dict[str, Any]] = store.rows(
        "SELECT steer_id FROM steering_events WHERE steer_id = ?", [f"steer-{NUL}"]
    )
    assert found == [{"steer_id": f"steer-{STORED}"}]
    assert store.get_run(f"run{NUL}") is None  # a read with a NUL is a read, never a fault
