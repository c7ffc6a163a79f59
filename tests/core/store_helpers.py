"""Helpers for tests that need a store with runs in particular states."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from core.intake import submit_dispatch
from core.lifecycle import Action, MergeState, RunState, Stage, VerificationState
from core.moves import host_move
from core.store.api import RunStore

_SAMPLE = Path(__file__).resolve().parents[2] / "sample_runs/dispatches/valid-backend-fix.json"
BASE_DISPATCH: dict[str, Any] = json.loads(_SAMPLE.read_text())


def dispatch_doc(run_id: str, **changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE_DISPATCH)
    doc.pop("request_id", None)
    doc["run_id"] = run_id
    # Simulated workers change no real code: the universal checklist (tests, lint, changelog,
    # backlog) could never pass in their checkouts. Tests of criteria turn it on themselves.
    doc["universal_criteria"] = False
    doc.update(changes)
    return doc


_VERIFYING = (Action.START, Action.AWAIT_VERIFICATION, Action.START_VERIFICATION)

#: The host's moves that bring a queued run to each stage of the lifecycle.
PATHS: dict[Stage, tuple[Action, ...]] = {
    RunState.QUEUED: (),
    RunState.RUNNING: (Action.START,),
    VerificationState.PENDING: (Action.START, Action.AWAIT_VERIFICATION),
    VerificationState.VERIFYING: _VERIFYING,
    VerificationState.AWAITING_APPROVAL: (*_VERIFYING, Action.AWAIT_APPROVAL),
    RunState.REVIEW_REQUESTED: (Action.START, Action.PASS_GATES),
    MergeState.MERGING: (Action.START, Action.PASS_GATES, Action.REQUEST_MERGE),
    RunState.FAILED_CONTRACT: (Action.START, Action.FAIL_GATES),
    RunState.FAILED: (Action.START, Action.FAIL),
    RunState.DONE: (Action.START, Action.PASS_GATES, Action.APPROVE),
}


def make_run(
    store: RunStore, run_id: str, state: Stage, *, lane: str = "jarvis-worker-1", **changes: Any
) -> None:
    result = submit_dispatch(
        store, dispatch_doc(run_id, **changes), source_lane="main",
        target_lane=lane, actor="test",
    )  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()
    for action in PATHS[state]:
        host_move(store, run_id, action)
