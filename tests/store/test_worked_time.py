"""How long a run's workers worked: each attempt from its start to the move that ends it, however
it ends, summed on the run — what a workspace's wall-time budget adds up."""

from __future__ import annotations

import pytest

from core.lifecycle import Action, RunState
from core.moves import host_move
from core.operator_actions import cancel, retry
from core.store.api import RunStore
from tests.backends import StepClock
from tests.core.store_helpers import make_run


def worked_s(store: RunStore, run_id: str) -> float:
    run = store.get_run(run_id)
    assert run is not None
    return float(run["worked_s"])


def test_every_attempt_adds_its_span_once_however_it_ends(
    any_store: RunStore, clock: StepClock
) -> None:
    make_run(any_store, "r1", RunState.QUEUED)
    host_move(any_store, "r1", Action.START)
    clock.advance(30)
    host_move(any_store, "r1", Action.FAIL, reason="exited 1")
    assert worked_s(any_store, "r1") == 30
    assert retry(any_store, "r1", "op").ok
    host_move(any_store, "r1", Action.START)
    clock.advance(45)
    # Into verification: the worker's attempt is over, though the run is still running.
    host_move(any_store, "r1", Action.AWAIT_VERIFICATION)
    clock.advance(600)  # verifying is the host's time, not the worker's
    host_move(any_store, "r1", Action.START_VERIFICATION)
    host_move(any_store, "r1", Action.PASS_GATES)
    assert worked_s(any_store, "r1") == 75

    make_run(any_store, "r2", RunState.QUEUED)
    host_move(any_store, "r2", Action.START)
    clock.advance(12.5)
    assert cancel(any_store, "r2", "op", "not needed").ok  # an operator's end counts too
    assert worked_s(any_store, "r2") == 12.5


def test_the_workspace_reads_ended_work_and_when_running_attempts_began(
    any_store: RunStore, clock: StepClock
) -> None:
    make_run(any_store, "ended", RunState.QUEUED)
    host_move(any_store, "ended", Action.START)
    clock.advance(100)
    host_move(any_store, "ended", Action.FAIL_GATES)
    make_run(any_store, "working", RunState.QUEUED)
    host_move(any_store, "working", Action.START)
    began = any_store.now()
    make_run(any_store, "verifying", RunState.QUEUED)
    host_move(any_store, "verifying", Action.START)
    clock.advance(20)
    host_move(any_store, "verifying", Action.AWAIT_VERIFICATION)
    make_run(any_store, "queued", RunState.QUEUED)
    ended, live = any_store.workspace_worked()
    assert ended == pytest.approx(120)
    assert live == [began]
