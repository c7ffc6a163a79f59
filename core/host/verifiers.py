"""The host's verifiers: a few threads, each verifying one run's acceptance criteria.

Off the loop, since a criterion may run a test suite for minutes and the loop must keep
ingesting and supervising. Several at once (``[criteria] verify_workers``), since with one a run
whose criteria are slow (six patterns that backtrack to their limit: a minute) held every other
run's checks, a ``file_exists`` included, for as long. And each run's verification has a bound
(``[criteria] run_verify_s``, `core.criteria.run_bound`), so no run holds a verifier for ever.

What one verifier guaranteed still holds: a run is verified by one verifier at a time (the loop
alone starts them, and skips a run one is on); only runs this host holds are verified (their
checkouts are on its machine); each verifier has its own store connection (a store is one
connection, used by one thread); the host's stop cancels every verification at once (the run
stays ``verifying`` for the next host); a storage fault a verifier meets is handed to the loop,
which waits it out as any other.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from core.criteria import run_criteria
from core.criteria.run_bound import RunBound, past_the_bound
from core.criteria.runner import Supervision
from core.host import verification
from core.host.config import HostConfig
from core.host.faults import StorageFault, io_fault
from core.store.api import RunStore
from core.store.location import open_store

log = logging.getLogger("jarvis.host")


class Verifiers:
    """The pool. `start_due` and `join` are called from the host's loop thread only."""

    def __init__(
        self,
        workspace_root: Path,
        store_at: str | Path,
        config: HostConfig,
        stopping: threading.Event,
    ) -> None:
        self.workspace_root = workspace_root
        self.store_at = store_at
        self.config = config
        self.stopping = stopping
        self.running: dict[str, threading.Thread] = {}
        """The runs being verified, by run id: one thread each."""
        self._fault: str | None = None
        """A storage fault a verifier met, for the loop to wait out (set on its thread)."""

    def start_due(self, store: RunStore, host: str) -> None:
        """Start verifying runs whose gates passed, while fewer than the pool's size are.

        Raises:
            StorageFault: a verifier could not write its results: the loop waits like for any
                storage fault, or the run, still due, would be verified again on every tick.
        """
        if self.stopping.is_set():
            return
        if self._fault is not None:
            problem, self._fault = self._fault, None
            raise StorageFault(problem)
        self.running = {r: t for r, t in self.running.items() if t.is_alive()}
        free = self.config.criteria.verify_workers - len(self.running)
        if free <= 0:
            return
        for run_id in run_criteria.due(store, host):
            if run_id in self.running:
                continue  # being verified: its stage stays due until it is decided
            thread = threading.Thread(
                target=self._verify_one, args=(run_id,), name=f"verify-{run_id}", daemon=True
            )
            self.running[run_id] = thread
            thread.start()
            free -= 1
            if free == 0:
                return

    def join(self, timeout: float) -> None:
        """Wait for the verifiers, ``timeout`` in all, once the host is stopping.

        `stopping` is set: their commands and pattern searches are being killed; a verifier
        stuck elsewhere (a slow disk) is a daemon thread and is left behind, not awaited.
        """
        deadline = time.monotonic() + timeout
        for thread in list(self.running.values()):
            thread.join(max(0.0, deadline - time.monotonic()))

    def _verify_one(self, run_id: str) -> None:
        # Its own connection: a store is one connection, used by one thread.
        store = open_store(self.store_at, migrate=False)
        try:
            run = run_criteria.begin(store, run_id)
            if run is None:
                return
            # The host's stop, or the run's bound, cancels it: SIGTERM never waits for a test
            # suite or a pattern. Each command is marked as ours and its group recorded before it
            # starts, so that a host restarted after a kill -9 can end it (`Host.recover`).
            bound = RunBound(self.stopping, self.config.criteria.run_verify_s)
            watch = Supervision(
                cancel=bound,
                env=verification.markers(self.workspace_root, run_id),
                started=lambda pgid: run_criteria.record_command_group(store, run_id, pgid),
                ended=lambda _pgid: run_criteria.record_command_group(store, run_id, None),
            )
            policy = self.config.verify_policy()
            result = run_criteria.verify_run(
                store, self.workspace_root, run, policy, supervision=watch
            )
            if result.cancelled and self.stopping.is_set():
                log.info("verifying run %s stopped: the host is shutting down", run_id)
                return  # still `verifying`: the next host verifies it again
            if result.cancelled:
                log.info("verifying run %s reached its bound of %g s", run_id, bound.bound_s)
                result = past_the_bound(run_criteria.criteria_of(run), result, bound.bound_s,
                                        unchecked_may_pass=policy.unchecked_may_pass)  # fmt: skip
            ended = run_criteria.finish(store, run_id, result)
            if ended is not None:
                log.info("run %s verified: %s", run_id, ended["state"])
        except Exception as exc:  # a verifier fault must not end the host; the run stays due
            problem = io_fault(exc)
            if problem is not None:
                self._fault = problem
            else:
                log.exception("verifying run %s failed", run_id)
        finally:
            store.close()
