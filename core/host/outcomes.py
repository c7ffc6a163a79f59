"""The host's room for ended attempts: a worker that exited is read to its end (its last
progress, its stderr, what it spent) and its run moved to the verdict (`core.verdicts`).

`AttemptEnds.finish` is where a completion's walk through the host starts; its steps are the
modules it calls, each one step: the worker (`workers`), its last files (`inbox`), its budget
(`budgets`), the git check (`core.repos.completion_check`) and the verdict (`core.verdicts`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.host.budgets import BudgetWatch
from core.host.shared import Shared
from core.host.workers import WorkerProcess
from core.nanoclaw.outcome import runner_failure
from core.repos.completion_check import check_completion
from core.verdicts import last_line, record_completion, record_failure, record_stderr

log = logging.getLogger("jarvis.host")

#: Where a completion block starts: a worker that exits non-zero with one is still gated.
COMPLETION_TAG = b"</completion"


class AttemptEnds:
    """The host's room for ended attempts: a worker that exited is read to its end and its
    run moved, through the functions above. `finish` is where a completion's walk starts."""

    def __init__(
        self, shared: Shared, budgets: BudgetWatch, take_in: Callable[[str, str], None]
    ) -> None:
        """
        Args:
            take_in: ingests what a run's worker wrote to its progress folder (lane, run id).
        """
        self.shared = shared
        self.budgets = budgets
        self.take_in = take_in

    def finish(self, worker: WorkerProcess, code: int) -> None:
        """Record how the worker's attempt ended, then forget the worker.

        The worker stays in the table until its end is committed: a storage fault on the way
        leaves it there, and the next tick finishes it again (each store write below is
        idempotent or guarded by the run's state).
        """
        shared = self.shared
        store, run_id = shared.store, worker.run_id
        worker.wait_for_output()
        # Progress written just before the exit belongs to this attempt: take it in first.
        self.take_in(worker.lane, run_id)
        raw, total = worker.stderr()
        tail = record_stderr(store, run_id, worker.attempt, raw, total, code)
        reason = worker.stop_requested
        if reason is None and (late := self.budgets.over(0.0, last_of=run_id)):
            # Its last reports, taken in above, crossed a budget: judged here as well, or a
            # worker that spends and exits at once would pass (the reaper judges attempts
            # still running, before it looks for ended ones).
            reason = "budget_exceeded"
            self.budgets.notes[run_id] = f"{late[run_id]}, reported as it ended"
        limits = shared.config.timeouts
        if reason == "no_output":
            record_failure(store, run_id, "no_output", f"no output for {limits.no_output_s:g} s")
        elif reason == "hard_limit":
            record_failure(store, run_id, "hard_limit",
                           f"still running after the {limits.hard_limit_s:g} s limit")  # fmt: skip
        elif reason == "host_shutdown":
            record_failure(store, run_id, "host_shutdown",
                           "the host shut down while this run was running")  # fmt: skip
        elif reason == "budget_exceeded":
            why = self.budgets.notes.pop(run_id, "a budget was crossed")
            record_failure(store, run_id, "budget_exceeded", f"budget_exceeded: stopped, {why}")
        elif reason in ("cancelled", "lease_lost"):
            pass  # the operator's cancel, or the lost lease, already ended the run
        else:
            self._gate(worker, code, tail)
        del shared.workers[run_id]
        run = store.get_run(run_id)
        log.info("run %s ended: %s", run_id, run["state"] if run else "?")

    def _gate(self, worker: WorkerProcess, code: int, tail: str) -> None:
        """A worker that ended by itself: its completion gated, or its run failed as crashed."""
        shared = self.shared
        store, run_id = shared.store, worker.run_id
        output = worker.output()
        failure = None
        if worker.frames is not None:
            # The completion is in the frames' results, not in the JSON-escaped stdout.
            decoded = worker.frames.finish()
            output = decoded.text.encode("utf-8", "surrogatepass")
            failure = runner_failure(decoded)
            if decoded.problem_count:
                log.warning("run %s: %d output frame problem(s), first: %s", run_id,
                            decoded.problem_count, decoded.problems[0])  # fmt: skip
        if failure is not None:
            record_failure(store, run_id, "crash", failure)
        elif code != 0 and COMPLETION_TAG not in output.lower():
            message = f"the worker exited with code {code} without a completion"
            if tail:  # what it said last is usually why: the operator sees it first
                message += f"; its stderr ends: {last_line(tail)}"
            record_failure(store, run_id, "crash", message)
        else:
            # Git is asked before the store's write lock is taken, never while it is held.
            claims = check_completion(store, shared.workspace.root, run_id, output)
            record_completion(
                store,
                run_id,
                output,
                claims=claims,
                unchecked_may_review=shared.config.git.unverified_may_review,
            )
