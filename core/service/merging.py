"""Waiting for an approved run's merge: ``jarvis approve --wait``.

The approval only asks for the merge; the host holding the run's repository carries it out
(`core.repos.approval`). A waiter reads the run until it leaves ``merging``, then gives what
the merge came to as the approval's outcome: done with its commit, or refused with the merge's
own code and sentence (``merge_conflict``, ``base_moved``, ``push_rejected``, ...), as an
approval that merged in place used to. A wait that runs out is refused ``merge_pending``: the
approval stands and the merge goes on.
"""

from __future__ import annotations

import time
from dataclasses import replace

from core.lifecycle import MergeState, stage_of
from core.repos.approval import merge_status
from core.service.action_types import Outcome, Refusal
from core.store.api import RunStore

DEFAULT_WAIT_S = 600.0
"""How long ``--wait`` waits when not told: a push over a slow network, with room to spare."""
POLL_S = 0.2


def wait_s(raw: object) -> float | None:
    """``--timeout``'s seconds (the default when not given); None when it is not a number of
    seconds above zero."""
    if raw is None:
        return DEFAULT_WAIT_S
    try:
        seconds = float(str(raw))
    except ValueError:
        return None
    return seconds if 0 < seconds < float("inf") else None


def wait_for_merge(store: RunStore, approved: Outcome, timeout_s: float) -> Outcome:
    """``approved`` (an approval that asked for a merge) once its merge is decided, or refused
    ``merge_pending`` when it still is not after ``timeout_s``."""
    run_id = approved.request.run_id
    deadline = time.monotonic() + timeout_s
    while True:
        run = store.get_run(run_id)
        if run is None:  # never deleted; said rather than waited on forever
            gone = Refusal("not_found", f"Run {run_id} is gone.")
            return replace(approved, ok=False, refusal=gone)
        status = merge_status(store, run)
        if stage_of(run) is not MergeState.MERGING and status is not None:
            if status.get("refused"):
                refusal = Refusal(str(status["refused"]), str(status.get("note") or ""))
                return replace(approved, ok=False, run=run, refusal=refusal, merge=status)
            return replace(approved, run=run, merge=status)
        if time.monotonic() >= deadline:
            note = str((status or {}).get("note") or "")
            message = (
                f"The merge of run {run_id} is still pending after {timeout_s:g} s: {note} "
                f"The approval stands; `jarvis show {run_id}` tells its result."
            )
            late = Refusal("merge_pending", message)
            return replace(approved, ok=False, run=run, refusal=late, merge=status)
        time.sleep(POLL_S)
