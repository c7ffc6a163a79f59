"""A writer for the crash test: changes runs as fast as it can until it is killed.

    python -m tests.faults.crash_writer DB READY_FILE ROUND

It opens the store at DB, touches READY_FILE (so the test counts its writes from then, not from
interpreter start-up), then loops forever over a mix of every kind of write transaction:
new dispatches, host moves, operator retries, overrides, cancels, approvals, steers and
re-dispatches of failed runs. It prints nothing; an unexpected exception ends it with a traceback
on stderr, which the test reports. ROUND keeps run ids unique across restarts on the same DB.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from core import operator_actions
from core.intake import submit_dispatch
from core.lifecycle import Action
from core.moves import host_move
from core.store.sqlite_store import SqliteStore

ROOT = Path(__file__).resolve().parents[2]
SAMPLE: dict[str, Any] = json.loads(
    (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
)
SOURCE, TARGET = "main", "jarvis-worker-1"
HOST = "host"


def dispatch(run_id: str, request_id: str) -> dict[str, Any]:
    doc = dict(SAMPLE)
    doc.update(run_id=run_id, request_id=request_id)
    return doc


def step(store: SqliteStore, rng: random.Random, run_id: str, state: str, tag: str) -> None:
    """One legal write for a run in ``state`` (sometimes a refused one, which writes nothing)."""
    op = f"operator-{rng.randrange(3)}"
    roll = rng.random()
    if state == "queued":
        if roll < 0.7:
            host_move(store, run_id, Action.START)
        else:
            operator_actions.cancel(store, run_id, op, "no longer needed")
    elif state == "running":
        if roll < 0.3:
            operator_actions.steer(store, run_id, op, f"steer {tag}")
        elif roll < 0.55:
            host_move(store, run_id, Action.PASS_GATES)
        elif roll < 0.7:
            host_move(store, run_id, Action.FAIL_GATES)
        elif roll < 0.85:
            host_move(store, run_id, Action.FAIL)
        else:
            operator_actions.cancel(store, run_id, op, "taking too long")
    elif state == "review_requested":
        if roll < 0.8:
            operator_actions.approve(store, run_id, op)
        else:
            # Refused (not running): exercises the transactions that commit nothing.
            operator_actions.steer(store, run_id, op, "too late")
    elif state in ("failed", "failed_contract"):
        if roll < 0.45:
            operator_actions.retry(store, run_id, op)
        elif roll < 0.8:
            submit_dispatch(
                store,
                dispatch(run_id, f"req-{tag}"),
                source_lane=SOURCE,
                target_lane=TARGET,
                actor="main",
            )
        else:
            operator_actions.override(store, run_id, op, "verified by hand")


def main(argv: list[str]) -> None:
    db, ready, round_ = argv[0], Path(argv[1]), argv[2]
    rng = random.Random()
    store = SqliteStore(db)
    live = [r["run_id"] for r in store.rows("SELECT run_id FROM runs WHERE state != 'done'")]
    ready.touch()
    counter = 0
    while True:
        counter += 1
        tag = f"{round_}-{counter}"
        if len(live) < 5 or rng.random() < 0.1:
            run_id = f"crash-{tag}"
            result = submit_dispatch(
                store,
                dispatch(run_id, f"req-{tag}"),
                source_lane=SOURCE,
                target_lane=TARGET,
                actor="main",
            )
            assert result.outcome == "enqueued", result.message
            live.append(run_id)
            continue
        run_id = rng.choice(live)
        run = store.get_run(run_id)
        assert run is not None
        if run["state"] == "done":
            live.remove(run_id)
            continue
        step(store, rng, run_id, run["state"], tag)


if __name__ == "__main__":
    main(sys.argv[1:])
