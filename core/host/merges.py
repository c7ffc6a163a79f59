"""The host's merges: approved runs' branches merged into their bases, off the loop.

An operator's approval of a run with a branch to merge only asks for it (the run is
``review_requested (merging)``, `core.repos.approval`); the host that holds the run — its
repository is on this host's machine — carries it out here. Off the loop and outside any store
transaction, since git takes what it takes (a push over a slow network: minutes) while the loop
must keep ingesting and supervising, and other writers, on this host or another, must not wait.

One merge at a time per repository, since two into one base would race for it (the second would
be refused as ``base_moved``, though nothing outside Jarvis moved it); a few at once across
repositories. Each thread has its own store connection; a storage fault it meets is handed to
the loop, which waits it out as any other, and the run, still ``merging``, is merged again after
(finding its merge done if it was: `core.repos.merge`). The host's stop does not cut a merge
short: git's steps are short and each leaves the repository whole; a host killed mid-merge
merges again on its restart.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from core.host.faults import StorageFault, io_fault
from core.lifecycle import MERGE_PARENT, MergeState, RunState
from core.repos.approval import carry_out, give_up
from core.store.api import RunStore
from core.store.location import open_store

log = logging.getLogger("jarvis.host")

AT_ONCE = 2
"""Merges at once, in different repositories."""
LOOK_EVERY_S = 0.25
"""How often the loop asks the store for approved runs to merge: an approval is merged within
a quarter of a second, and a busy loop (50 ticks a second) is not a query richer each tick."""


class Merges:
    """The merging threads. `start_due` and `join` are called from the host's loop only."""

    def __init__(self, store_at: str | Path, stopping: threading.Event) -> None:
        self.store_at = store_at
        self.stopping = stopping
        self.running: dict[str, tuple[str, threading.Thread]] = {}
        """The runs being merged, by run id: their repository and thread."""
        self._fault: str | None = None
        """A storage fault a merge met, for the loop to wait out (set on its thread)."""
        self._next_look = 0.0

    def start_due(self, store: RunStore, host: str) -> None:
        """Start merging approved runs this host holds, one per repository at a time.

        Raises:
            StorageFault: a merge could not record its result: the loop waits, then the run
                (still ``merging``) is merged again, which finds its merge done.
        """
        if self.stopping.is_set():
            return
        if self._fault is not None:
            problem, self._fault = self._fault, None
            raise StorageFault(problem)
        now = time.monotonic()
        if now < self._next_look:
            return
        self._next_look = now + LOOK_EVERY_S
        self.running = {r: (repo, t) for r, (repo, t) in self.running.items() if t.is_alive()}
        if len(self.running) >= AT_ONCE:
            return
        busy = {repo for repo, _ in self.running.values()}
        for due in store.merges_due(MERGE_PARENT.value, MergeState.MERGING.value, host):
            run_id, repo = str(due["run_id"]), str(due["repo_dir"] or "")
            if run_id in self.running or repo in busy:
                continue
            thread = threading.Thread(
                target=self._merge_one, args=(run_id, host), name=f"merge-{run_id}", daemon=True
            )
            self.running[run_id] = (repo, thread)
            busy.add(repo)
            thread.start()
            if len(self.running) >= AT_ONCE:
                return

    def join(self, timeout: float) -> None:
        """Wait for the merges under way, ``timeout`` in all, once the host is stopping."""
        deadline = time.monotonic() + timeout
        for _, thread in list(self.running.values()):
            thread.join(max(0.0, deadline - time.monotonic()))

    def _merge_one(self, run_id: str, host: str) -> None:
        # Its own connection: a store is one connection, used by one thread.
        store = open_store(self.store_at, migrate=False)
        try:
            moved = carry_out(store, run_id, host)
            if moved is not None:
                done = RunState(moved["state"]) is RunState.DONE
                log.info("run %s: its merge %s", run_id, "is done" if done else "was refused")
        except Exception as exc:  # a merge's fault must not end the host
            problem = io_fault(exc)
            if problem is not None:
                self._fault = problem  # the run stays due, and is merged again after the wait
                return
            # A bug, not the run's: refused with what went wrong, never tried on every tick.
            log.exception("merging run %s failed", run_id)
            try:
                give_up(store, run_id, f"{type(exc).__name__}: {exc}")
            except Exception as again:
                self._fault = io_fault(again)
        finally:
            store.close()
