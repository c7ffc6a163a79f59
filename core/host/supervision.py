"""Supervision of running workers: the reaper (timeouts, budgets, cancels, a NanoClaw runner's
close), and every worker ended on the way out.

A worker is asked to stop by `WorkerProcess.interrupt` or `terminate` (the reason kept for its
run's failure) and killed after its grace; once its process has exited its attempt's end is the
`finish` this room is given (`core.host.outcomes.AttemptEnds`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from core.host.budgets import BudgetWatch
from core.host.faults import io_fault
from core.host.shared import Shared
from core.host.workers import WorkerProcess
from core.lifecycle import RunState
from core.nanoclaw.launch import CLOSE_GRACE_S, request_close
from core.text import inert

log = logging.getLogger("jarvis.host")

#: How often the way out looks whether the workers it stopped have exited.
EXIT_POLL_S = 0.02


class Supervision:
    def __init__(
        self,
        shared: Shared,
        budgets: BudgetWatch,
        finish: Callable[[WorkerProcess, int], None],
    ) -> None:
        self.shared = shared
        self.budgets = budgets
        self.finish = finish

    def touch(self, run_id: str) -> None:
        """A run's worker reported progress: it is not silent."""
        worker = self.shared.workers.get(run_id)
        if worker:
            worker.touch()

    def reap(self) -> None:
        """Stop the workers past a limit or whose run ended elsewhere; finish those that exited."""
        shared = self.shared
        if not shared.workers:
            return
        now = time.monotonic()
        timeouts = shared.config.timeouts
        # An attempt ends here when its run no longer runs it: an operator's cancel, or another
        # host that recovered this one while it was away (and maybe started the run again).
        current = shared.store.attempts_of(list(shared.workers))
        ended = {
            run_id
            for run_id, worker in shared.workers.items()
            if (row := current.get(run_id)) is None
            or RunState(row["state"]) is not RunState.RUNNING
            or row["host"] not in (None, shared.name)
            or int(row["retry_count"]) + 1 != worker.attempt
        }
        over = self.budgets.over(now)
        for run_id, worker in list(shared.workers.items()):
            if worker.frames is not None:
                self._end_nanoclaw(worker, now)
            if run_id in over:
                worker.interrupt("budget_exceeded")
                self.budgets.notes.setdefault(run_id, over[run_id])
            if (
                worker.interrupt_sent_at is not None
                and worker.term_sent_at is None
                and now - worker.interrupt_sent_at > shared.config.budgets.interrupt_grace_s
            ):
                worker.terminate(worker.stop_requested or "budget_exceeded")
            if run_id in ended:
                worker.terminate("cancelled")  # an operator ended the run: stop its worker
            elif now - worker.started > timeouts.hard_limit_s:
                worker.terminate("hard_limit")
            elif now - worker.last_output > timeouts.no_output_s:
                worker.terminate("no_output")
            if worker.term_sent_at and now - worker.term_sent_at > timeouts.shutdown_grace_s:
                worker.kill()
            code = worker.process.poll()
            if code is not None:
                self.finish(worker, code)

    def _end_nanoclaw(self, worker: WorkerProcess, now: float) -> None:
        """A NanoClaw runner answered: ask it to end, as NanoClaw's host asks a worker's.

        After its first result it is sent ``input/_close`` (its agent otherwise waits for
        follow-ups), and stopped if still there `CLOSE_GRACE_S` later. A frame past the size
        cap stops it at once.
        """
        frames = worker.frames
        assert frames is not None
        if frames.overflowed:
            worker.terminate("frame_overflow")
        elif frames.results_seen and worker.close_requested_at is None:
            worker.close_requested_at = now
            try:
                request_close(self.shared.layout.lane_dir(worker.lane))
            except OSError as exc:
                log.warning("run %s: input/_close could not be written: %s", worker.run_id,
                            inert(str(exc)))  # fmt: skip
        elif (
            worker.close_requested_at is not None
            and now - worker.close_requested_at > CLOSE_GRACE_S
        ):
            worker.terminate("closed")

    def stop_all(self, *, taken: bool) -> None:
        """Tell every worker to stop, give them the grace period, then end their runs.

        ``taken``: another host took this one's name; the runs are the new holder's, so their
        workers are stopped as for a lost lease, recording nothing it would not.
        """
        shared = self.shared
        if not shared.workers or shared.opened is None:
            return
        for worker in shared.workers.values():
            worker.terminate("lease_lost" if taken else "host_shutdown")
        deadline = time.monotonic() + shared.config.timeouts.shutdown_grace_s
        while shared.workers and time.monotonic() < deadline:
            for worker in list(shared.workers.values()):
                code = worker.process.poll()
                if code is not None:
                    self._finish_on_the_way_out(worker, code)
            time.sleep(EXIT_POLL_S)
        for worker in list(shared.workers.values()):
            worker.kill()
            self._finish_on_the_way_out(worker, worker.process.wait())

    def _finish_on_the_way_out(self, worker: WorkerProcess, code: int) -> None:
        try:
            self.finish(worker, code)
        except Exception as exc:
            problem = io_fault(exc)
            if problem is None:
                raise
            # No waiting on the way out: the run stays running in the store, and the next
            # host settles it (`recover`), as after a crash.
            self.shared.workers.pop(worker.run_id, None)
            log.error("run %s: its end could not be recorded: %s", worker.run_id, problem)
