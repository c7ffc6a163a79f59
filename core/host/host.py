"""The host: one workspace's engine as a process, its rooms wired into one loop.

One thread owns the store and the worker table and does all of the host's work in a loop of
short ticks; each tick runs the rooms' steps in order (`Host.steps`). The rooms, each a module:

- `inbox` — the IPC tree's files, watched and swept, ingested in batches (`ingest`: one file);
- `launching` — queued runs claimed, checkouts made, workers started;
- `supervision` — running workers: timeouts, budgets (`budget_watch`), reaping, the way out;
- `outcomes` — an attempt's end: gated completion or failure; `verifiers` — the criteria;
- `merges` — approved runs' branches merged into their bases, outside any transaction;
- `retention` — the store's old history removed as ``[store]`` allows, off the loop;
- `notifier` — runs that started needing a human, posted to ``[notify]``'s webhook, off the loop;
- `recovery` — what a previous host left, and the signals that stop this one.

What they share (the store, the workers, the configuration) is `shared.Shared`.

Start-up order matters for crash safety: ingest whatever is already on disk, then settle runs a
previous host left ``running`` (their workers are gone or orphaned: both fail with
``host_restart``), then start work.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.host import checkouts, sandbox
from core.host.budgets import BudgetWatch
from core.host.change_feed import ChangeFeed
from core.host.config import HostConfig
from core.host.faults import FaultWait, io_fault
from core.host.fleet import Heartbeat, HostNameTaken, Lease, default_name
from core.host.inbox import Inbox
from core.host.ingest import Ingestor
from core.host.launching import Launching
from core.host.lock import HostLock
from core.host.merges import Merges
from core.host.notifier import Notifier
from core.host.outcomes import AttemptEnds
from core.host.recovery import StopSignals, recover
from core.host.refusals import catch_up
from core.host.retention import Retention
from core.host.shared import Shared
from core.host.steering import deliver_pending, expire_steers
from core.host.supervision import Supervision
from core.host.verifiers import Verifiers
from core.host.workers import WorkerProcess
from core.ipc.layout import IpcLayout
from core.nanoclaw.worker_runs import WorkerRunsWriter
from core.store.api import RunStore
from core.store.errors import QueryError, StoreError
from core.store.location import open_store, store_location
from core.workspace import Workspace

log = logging.getLogger("jarvis.host")

TICK_S = 0.05
"""The longest the loop waits for a file before the rooms' steps run again. A file wakes it at
once (the IPC tree's watch); an operator's action waiting in the store (a steer, an approval, a
new run) is taken within this. At 20 ms, an idle host spent 4.6% of a core polling the store;
at 100 ms, 1.9%, but a steer waited up to 100 ms for its file (the host's p99 target)."""
ROOMS_EVERY_S = 0.05
"""The rooms' steps run at most this often: under a stream of files the drain returns every
few milliseconds, and each return was a round of store reads for the rooms."""
SWEEP_EVERY_S = 1.0


class HostFailed(Exception):
    """The host's loop failed on a bug (not a fault it waits out): the host stopped."""


class Host:
    """The engine as a process for one workspace. Call `run` (blocks until `stop`)."""

    def __init__(
        self,
        workspace: Workspace,
        config: HostConfig,
        *,
        store_at: str | Path | None = None,
        name: str | None = None,
        lanes: Sequence[str] | None = None,
    ) -> None:
        """
        Args:
            store_at: the store (`core.store.location`: a database URL or an SQLite file);
                None: the one the workspace names, else its jarvis.db.
            name: this host's name among the store's hosts (default ``[host] name``, else
                ``<machine>:<workspace>``).
            lanes: the lanes whose queued runs it claims (default ``[host] lanes``, else all).

        Raises:
            StoreError: ``store_config``: the workspace names its store wrongly.
        """
        self.workspace = workspace
        self.config = config
        self.store_at = store_at if store_at is not None else store_location(workspace.root)
        self.shared = Shared(
            workspace,
            config,
            IpcLayout(workspace.ipc_dir),
            name or config.host.name or default_name(workspace.root),
            lanes if lanes is not None else config.host.lanes,
            threading.Event(),
        )
        self.name = self.shared.name
        self.lanes = self.shared.lanes
        self.layout = self.shared.layout
        self.stopping = self.shared.stopping
        self.lock = HostLock(workspace.root)
        self.lease: Lease | None = None
        """This host's lease among the store's hosts (`core.host.fleet`), taken in `run`."""
        self._heartbeat: Heartbeat | None = None
        self._name_taken: str | None = None
        """Why this host stopped when another host took its name (`Heartbeat`), else None."""
        self.faults = FaultWait(self.stopping)
        """The storage fault being waited out, if any (`core.host.faults`)."""
        self._next_sweep = 0.0
        self._rooms_due = 0.0
        self._catch_up_due = False
        # The rooms.
        self.signals = StopSignals(self.stop)
        self.inbox = Inbox(self.shared)
        self.budgets = BudgetWatch(self.shared)
        self.launching = Launching(self.shared, self.budgets)
        self.outcomes = AttemptEnds(self.shared, self.budgets, self.inbox.take_in_progress)
        self.supervision = Supervision(self.shared, self.budgets, self.outcomes.finish)
        self.verifiers = Verifiers(workspace.root, self.store_at, config, self.stopping)
        """Verify runs' criteria off the loop, a few at a time (`core.host.verifiers`)."""
        self.merges = Merges(self.store_at, self.stopping)
        """Merge approved runs' branches off the loop (`core.host.merges`)."""
        self.retention = Retention(
            self.store_at,
            config.store.policy(),
            roots=(self.layout.root, workspace.root),
            host=self.name,
            stopping=self.stopping,
        )
        """Remove the store's old history as ``[store]`` allows (`core.host.retention`)."""
        self.feed = ChangeFeed(self.store_at, workspace.root, self.stopping)
        """What changed in the store, read once for every console (`core.host.change_feed`)."""
        self.notifier = Notifier(
            self.store_at, config.notify.webhook_settings(), config.notify.policy(), self.stopping
        )
        """Post runs that started needing a human to the webhook (`core.host.notifier`)."""
        self.worker_runs = WorkerRunsWriter(self.layout, owner=f"jarvis-{os.getpid()}")
        """Each lane's ``worker_runs.json``, what NanoClaw's agents read (`core.nanoclaw`)."""

    # What the rooms share, as the host's own attributes (tests drive a host by them).

    @property
    def store(self) -> RunStore | None:
        return self.shared.opened

    @store.setter
    def store(self, store: RunStore | None) -> None:
        self.shared.opened = store

    @property
    def workers(self) -> dict[str, WorkerProcess]:
        return self.shared.workers

    # -- the host's own lifecycle ------------------------------------------------------------

    def stop(self, *_: Any) -> None:
        """Ask the loop to finish (safe from a signal handler)."""
        self.stopping.set()
        self.inbox.wake()

    def install_signal_handlers(self) -> None:
        self.signals.install()

    def run(self) -> None:
        """Hold the workspace and work until `stop`.

        Raises:
            StoreError: the store is unusable (see `open_store`); the workspace was never held.
            HostLockHeld: another host runs.
        """
        store = self.open_store()
        try:
            self.lock.acquire()
        except BaseException:
            store.close()
            raise
        # The lease has a connection of its own, used by the heartbeat thread: a loop busy with
        # a long step must not let the lease run out.
        lease_store = open_store(self.store_at, migrate=False, shared=True)
        self.lease = Lease(
            lease_store,
            self.name,
            self.workspace.root,
            self.lanes,
            self.config.host.heartbeat_s,
            self.config.host.lease_s,
        )
        try:
            self.lease.register()
        except BaseException:
            lease_store.close()
            store.close()
            self.lock.release()
            raise
        self.store = store
        self.layout.errors_dir.mkdir(parents=True, exist_ok=True)
        self.inbox.ingestor = Ingestor(
            store,
            self.layout,
            on_progress=self.supervision.touch,
            universal_default=self.config.criteria.universal,
            write_grace_s=self.config.watch.write_grace_s,
        )
        try:
            # What is on disk first, then the runs a previous host left: retried, like every
            # step, through a full disk or a locked store until it goes through or we stop.
            while not self.stopping.is_set() and not self._step(self._start_up):
                pass
            if not self.config.watch.poll:
                self.inbox.start_watcher()
            self._heartbeat = Heartbeat(self.lease, self.stopping, self._taken)
            self._heartbeat.start()
            self.feed.start()
            self.notifier.start()
            log.info("host %d holds %s", os.getpid(), self.workspace.root)
            found = self.launching.sandbox = sandbox.probe()
            if found.program is not None:
                log.info("workers run in a bubblewrap sandbox (%s)", found.program)
            else:
                log.warning("no sandbox: %s; workers run unconfined", found.problem)
            self._loop()
            log.info("host %d stopping", os.getpid())
        except Exception as exc:
            # A bug, not a fault to wait out (`_step`): the host stops, and says so, rather than
            # stay up with a live lease and a loop that does nothing.
            log.critical("host %d stops: its loop failed: %s", os.getpid(), exc, exc_info=True)
            if io_fault(exc) is not None or (
                isinstance(exc, StoreError) and not isinstance(exc, QueryError)
            ):
                raise  # the store's: the command says which fault, in its words
            raise HostFailed(f"the host's loop failed ({type(exc).__name__}: {exc})") from exc
        finally:
            self.stopping.set()  # the heartbeat and the watcher end with the loop, whatever ended
            self._shutdown()
            self.inbox.close()
            if self._heartbeat is not None:
                self._heartbeat.join()
            self.feed.join()
            self.notifier.join(self.config.timeouts.shutdown_grace_s + 1)
            self._end_lease()
            self.lease.store.close()
            store.close()
            self.lock.release()
        log.info("host %d let go of %s", os.getpid(), self.workspace.root)
        if self._name_taken is not None:
            raise HostNameTaken(self._name_taken)

    def _end_lease(self) -> None:
        if self.lease is None:
            return
        try:
            self.lease.end()
        except Exception as exc:
            if io_fault(exc) is None:
                raise
            # The lease runs out by itself: another host then recovers what is left.
            log.error("host %s: its lease could not be ended: %s", self.name, io_fault(exc))

    def _taken(self, message: str) -> None:
        """Another host took this one's name (`Heartbeat`): stop, recording nothing for the
        runs under it, which are the new holder's now."""
        self._name_taken = message
        self.stop()

    def open_store(self) -> RunStore:
        """The workspace's store, created if new, every page of it checked.

        Before the lock on purpose: a host that cannot use its store exits without ever
        holding the workspace, so a console that started it (which waits for the lock) hears
        it fail instead of taking a dead host for a running one. The check reads the whole
        file once (about a second per GB): damage found now stops one start, where found
        mid-ingest it would fail runs one by one.

        Raises:
            StoreError: the store is missing its history, damaged, not a Jarvis store, from a
                newer jarvis, or cannot be opened or created.
        """
        store = open_store(self.store_at)
        try:
            store.check_integrity()
        except BaseException:
            store.close()
            raise
        if store.created:
            log.info("created a new workspace store at %s", store.location)
        return store

    def _start_up(self) -> None:
        store = self.shared.store
        catch_up(store, self.layout.errors_dir)  # refusals an earlier host did not record
        self.inbox.sweep()
        self.recover()
        checkouts.prune(self.config, self.workspace.root)

    def sweep(self) -> None:
        """Ingest everything on disk (start-up, the safety net, and polling mode)."""
        self.inbox.sweep()

    def recover(self) -> None:
        """Settle runs a previous host left running (`core.host.recovery`)."""
        recover(self.shared)

    def _step(self, step: Callable[[], None]) -> bool:
        """Run one step of the host's work; False when a storage fault stopped it (waited out).

        A fault of the store or the disk is not the fault of whatever the step was handling:
        the files stay where they are and the whole step is tried again after a pause, since
        every step is idempotent (receipts, state checks). Any other exception ends the host.
        """
        try:
            step()
        except Exception as exc:
            problem = io_fault(exc)
            if problem is None:
                raise
            # Paths the watcher reported meanwhile are dropped: the files are still on disk,
            # and the first sweep after the fault finds them all (nothing piles up in memory).
            self.inbox.forget_queued()
            self.faults.wait(problem)
            return False
        if self.faults.worked():
            self._catch_up_due = True  # refusals the store could not take while it failed
        return True

    def _loop(self) -> None:
        poll = self.config.watch.poll
        interval = self.config.watch.poll_interval_ms / 1000 if poll else SWEEP_EVERY_S
        self._next_sweep = time.monotonic() + interval
        while not self.stopping.is_set() and not self.signals.asked():
            if not self._step(lambda: self._tick(interval)):
                self._next_sweep = 0.0  # sweep first thing once it works again

    def _tick(self, interval: float) -> None:
        for step in self.inbox_steps(interval):
            step()
        now = time.monotonic()
        if now >= self._rooms_due:
            self._rooms_due = now + ROOMS_EVERY_S
            for step in self.room_steps():
                step()

    def steps(self, interval: float) -> list[Callable[[], object]]:
        """One tick's work, in order: the inbox's steps, then each room's (`ROOMS_EVERY_S`)."""
        return [*self.inbox_steps(interval), *self.room_steps()]

    def inbox_steps(self, interval: float) -> list[Callable[[], object]]:
        """Files into the store: every tick."""
        return [
            self._catch_up_if_due,
            lambda: self.inbox.drain(timeout=TICK_S),
            lambda: self._sweep_if_due(interval),
        ]

    def room_steps(self) -> list[Callable[[], object]]:
        """The rooms' steps, in order. A new room joins with a line here.

        Built each time from the rooms' attributes, so what a room is (or a test makes it) is
        what runs.
        """
        return [
            self.launching.take_prepared,
            self.supervision.reap,
            lambda: self.verifiers.start_due(self.shared.store, self.name),
            lambda: self.merges.start_due(self.shared.store, self.name),
            self.retention.start_due,
            self.launching.schedule,
            self._steer,
            lambda: self.worker_runs.refresh(self.shared.store, self.config.lanes),
        ]

    def _catch_up_if_due(self) -> None:
        if self._catch_up_due:
            catch_up(self.shared.store, self.layout.errors_dir)
            self._catch_up_due = False

    def _sweep_if_due(self, interval: float) -> None:
        if self.inbox.missed or time.monotonic() >= self._next_sweep:
            self.inbox.sweep()
            checkouts.tidy(self.shared.store, self.config, self.workspace.root, self.name)
            self._next_sweep = time.monotonic() + interval

    def _steer(self) -> None:
        """Deliver waiting steers, one at a time per run, and expire those never acknowledged."""
        store = self.shared.store
        deliver_pending(store, self.layout, host=self.name)
        patient = [
            run_id
            for run_id, worker in self.workers.items()
            if self.config.steers_at_turn_end(worker.lane)
        ]
        expire_steers(
            store,
            self.layout,
            ack_timeout_s=self.config.timeouts.steer_ack_s,
            patient=patient,
            host=self.name,
        )

    def _shutdown(self) -> None:
        """Fail the runs being prepared, let the verifiers go, and end every worker.

        A host whose name was taken records nothing: the runs under the name are the new
        holder's, and it settles them (`recover`).
        """
        taken = self._name_taken is not None
        if self.store is not None and not taken:
            self.launching.abandon()
        self.verifiers.join(self.config.timeouts.shutdown_grace_s + 1)
        self.merges.join(self.config.timeouts.shutdown_grace_s + 1)
        self.retention.join(self.config.timeouts.shutdown_grace_s + 1)
        self.supervision.stop_all(taken=taken)
