"""The demo's fleet looks like a day of real work: most runs end well and a teammate approves
them, a few need the operator. Counted over many dispatches from the fleet's own choices, and
the teammate's approvals made in a real store."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from jarvis_sim.demo_fleet import (
    DECK_SIZE,
    ENDS_WELL,
    EVERY_SCENARIO_WITHIN,
    FAILURES,
    LEFT_TO_THE_OPERATOR_EVERY,
    Fleet,
    leaves_to_the_operator,
    new_deck,
)
from jarvis_sim.simworker import SCENARIOS
from tests.core.store_helpers import make_run

DISPATCHES = 40 * DECK_SIZE
#: The most of the fleet's runs that may need a human: a few, not the noise it was.
MOST_NEEDING_A_HUMAN = 0.15


def _dealt(count: int, seed: int) -> list[str]:
    rng, dealt, failures = random.Random(seed), [], 0
    while len(dealt) < count:
        dealt += new_deck(rng, failures)
        failures += sum(1 for name in dealt[-DECK_SIZE:] if name not in ENDS_WELL)
    return dealt[:count]


def test_a_few_runs_need_the_operator_and_most_end_well() -> None:
    for seed in range(5):
        dealt = _dealt(DISPATCHES, seed)
        failing = sum(1 for name in dealt if name not in ENDS_WELL)
        well = len(dealt) - failing
        left = sum(1 for nth in range(1, well + 1) if leaves_to_the_operator(nth))
        share = (failing + left) / len(dealt)
        assert 0.05 <= share <= MOST_NEEDING_A_HUMAN, (seed, failing, left, share)
        counts = Counter(dealt)
        assert counts["ok"] > len(dealt) * 0.75


def test_every_scenario_comes_up_in_every_block_of_dispatches() -> None:
    assert set(ENDS_WELL) | set(FAILURES) == set(SCENARIOS)
    dealt = _dealt(4 * EVERY_SCENARIO_WITHIN, seed=3)
    for start in range(0, len(dealt), EVERY_SCENARIO_WITHIN):
        assert set(dealt[start : start + EVERY_SCENARIO_WITHIN]) == set(SCENARIOS)


def test_the_teammate_approves_reviews_but_leaves_some_and_every_failure(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    reviewing = [f"run-well-{n:02d}" for n in range(2 * LEFT_TO_THE_OPERATOR_EVERY)]
    try:
        for run_id in reviewing:
            make_run(store, run_id, RunState.REVIEW_REQUESTED)
        make_run(store, "run-ended-badly", RunState.FAILED)
        make_run(store, "run-still-going", RunState.RUNNING)
    finally:
        store.close()
    fleet = Fleet(ws, random.Random(1))
    try:
        for run_id in [*reviewing, "run-ended-badly", "run-still-going"]:
            fleet.reviews[run_id] = 0.0  # due now
        approved = fleet.review()
        assert fleet.reviews == {"run-still-going": 0.0}, "a running run was not kept for later"
        states = fleet.store.states_of([*reviewing, "run-ended-badly"])
    finally:
        fleet.close()
    left = [run_id for run_id in reviewing if states[run_id] == "review_requested"]
    assert len(left) == 2 and len(approved) == len(reviewing) - 2
    assert {states[run_id] for run_id in approved} == {"done"}
    assert states["run-ended-badly"] == "failed"
