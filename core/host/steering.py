"""Delivering steers one at a time per run, and expiring the ones nobody took.

A run's steers move ``pending → delivered → acked`` (or ``expired``). The next pending steer is
written only when the run has no delivered steer waiting, so a steer file is never overwritten
and no steer is lost. The file is written *before* the row says ``delivered``: a crash between
the two re-delivers the same steer (same id, same text), which the worker acknowledges once;
the other order could mark a steer delivered that no worker ever saw.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from datetime import datetime, timedelta

from core.ipc.files import atomic_write_json
from core.ipc.layout import IpcLayout
from core.lifecycle import RunState
from core.store.api import RunStore, iso


def deliver_pending(store: RunStore, layout: IpcLayout, *, host: str | None = None) -> int:
    """Write the oldest pending steer of every running run that has none outstanding."""
    candidates = store.steers_to_deliver(RunState.RUNNING.value, host)
    delivered = 0
    seen: set[str] = set()
    for steer in candidates:
        if steer["run_id"] in seen:
            continue  # one at a time per run
        seen.add(steer["run_id"])
        now = store.now()
        atomic_write_json(
            layout.steer_file(steer["lane"], steer["run_id"]),
            {
                "kind": "worker_steer",
                "run_id": steer["run_id"],
                "from_group": steer["operator"],
                "timestamp": now,
                "message": steer["message"],
                "steer_id": steer["steer_id"],
            },
        )
        with store.transaction() as tx:
            changed = tx.mark_steer_delivered(steer["steer_id"])
            if changed:
                tx.touch_run(
                    steer["run_id"],
                    changes={},
                    kind="steer",
                    payload={"steer_id": steer["steer_id"], "status": "delivered"},
                    actor="host",
                )
                delivered += 1
    return delivered


def expire_steers(
    store: RunStore,
    layout: IpcLayout,
    *,
    ack_timeout_s: float,
    patient: Collection[str] = (),
    host: str | None = None,
) -> int:
    """Expire delivered steers past the timeout, and steers whose run is no longer running.

    Runs in ``patient`` are worked by an agent that takes a steer only when its turn ends,
    which may be long after the timeout: their delivered steers wait for the turn, and are
    expired only when the run ends without taking them.
    """
    now = store.now()
    deadline = iso(datetime.fromisoformat(now) - timedelta(seconds=ack_timeout_s))
    stale = store.steers_to_expire(deadline, RunState.RUNNING.value, host)
    expired = 0
    for steer in stale:
        if RunState(steer["state"]) is RunState.RUNNING and steer["run_id"] in patient:
            continue
        expired += 1
        if RunState(steer["state"]) is not RunState.RUNNING:
            reason = f"the run ended ({steer['state']}) before the steer was acknowledged"
        else:
            reason = f"not acknowledged within {ack_timeout_s:g} s"
        with store.transaction() as tx:
            changed = tx.expire_steer(steer["steer_id"], steer["status"], reason)
            if changed:
                tx.touch_run(
                    steer["run_id"],
                    changes={},
                    kind="steer",
                    payload={"steer_id": steer["steer_id"], "status": "expired", "reason": reason},
                    actor="host",
                )
        if steer["status"] == "delivered":
            try:
                os.unlink(layout.steer_file(steer["lane"], steer["run_id"]))
            except FileNotFoundError:
                pass
    return expired
