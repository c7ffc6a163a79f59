"""The host loop: watch, ingest, schedule, supervise, deliver — and recover after a crash.

One thread owns the store and the worker table and does all of the host's work in a loop of
short ticks. A watcher thread (watchfiles: inotify, or polling) only feeds it paths, so an event
file is ingested as soon as it is renamed into place instead of on the next sweep; a full sweep
still runs every second to pick up anything a watcher could miss (and every tick when polling).

Start-up order matters for crash safety: ingest whatever is already on disk, then settle runs a
previous host left ``running`` (their workers are gone or orphaned: both fail with
``host_restart``), then start work.
"""

from __future__ import annotations

import faulthandler
import json
import logging
import os
import queue
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import watchfiles

from core.contracts.errors import preview
from core.criteria import run_criteria
from core.host import checkouts, sandbox, verification
from core.host.budgets import (
    Spent,
    has_workspace_cap,
    needs_attempt_usage,
    over_budget,
    workspace_over,
)
from core.host.config import HostConfig
from core.host.faults import FaultWait, io_fault
from core.host.fleet import Heartbeat, HostNameTaken, Lease, default_name
from core.host.ingest import Ingested, Ingestor
from core.host.lock import HostLock
from core.host.openclaw import SOURCE as OPENCLAW
from core.host.openclaw import gate_finished_results, ingest_requests
from core.host.outcomes import last_line, record_completion, record_failure, record_stderr
from core.host.refusals import catch_up
from core.host.steering import deliver_pending, expire_steers
from core.host.verifiers import Verifiers
from core.host.workers import (
    WorkerPaths,
    WorkerProcess,
    is_worker_of,
    program_from,
    start_worker,
    worker_env,
)
from core.ipc.layout import HOST_SNAPSHOTS, IpcLayout, IpcPathError
from core.lifecycle import Action, IllegalTransition, RunState, stage_of
from core.moves import NotHeld, host_move, worked
from core.nanoclaw.frames import FrameDecoder
from core.nanoclaw.launch import (
    CLOSE_GRACE_S,
    MOUNTS,
    Launch,
    LaunchError,
    build_launch,
    prepare_input,
    request_close,
)
from core.nanoclaw.outcome import runner_failure
from core.nanoclaw.worker_runs import WorkerRunsWriter
from core.repos.view import objects_dir
from core.repos.worktrees import Worktree
from core.store.api import RunStore
from core.store.errors import QueryError, StoreError
from core.store.location import open_store, store_location
from core.text import inert
from core.worker_logs import attempt_dir
from core.workspace import Workspace, lane_problem

log = logging.getLogger("jarvis.host")

#: Put on the path queue by `Host.stop`: no path, only a wake-up for a loop waiting on it.
_WAKE = Path("")

TICK_S = 0.02
SWEEP_EVERY_S = 1.0
BATCH = 256
"""Files ingested per transaction: one commit for many files is where the ingest rate comes from."""
_COMPLETION_TAG = b"</completion"


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
        self.name = name or config.host.name or default_name(workspace.root)
        self.lanes: Sequence[str] | None = lanes if lanes is not None else config.host.lanes
        self.lease: Lease | None = None
        """This host's lease among the store's hosts (`core.host.fleet`), taken in `run`."""
        self._heartbeat: Heartbeat | None = None
        self._name_taken: str | None = None
        """Why this host stopped when another host took its name (`Heartbeat`), else None."""
        self.layout = IpcLayout(workspace.ipc_dir)
        self.lock = HostLock(workspace.root)
        self.stopping = threading.Event()
        self.workers: dict[str, WorkerProcess] = {}
        self._paths: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self._watcher: threading.Thread | None = None
        self.store: RunStore | None = None
        self._verifiers = Verifiers(workspace.root, self.store_at, config, self.stopping)
        """Verify runs' criteria off the loop, a few at a time (`core.host.verifiers`)."""
        self.faults = FaultWait(self.stopping)
        """The storage fault being waited out, if any (`core.host.faults`)."""
        self._next_sweep = 0.0
        self._catch_up_due = False
        self._preparer = checkouts.Preparer(workspace.root)
        self._preparing: dict[str, tuple[dict[str, Any], WorkerPaths]] = {}
        """Runs whose worktree is being made, with what their worker will be given."""
        self._ready: dict[str, tuple[checkouts.CheckoutJob, Worktree | Exception]] = {}
        self._budget_notes: dict[str, str] = {}
        """Why a run being stopped for its budget is stopped (for its failure's reason)."""
        self._budget_said = False
        self._signal_pipe: int | None = None
        """Read end of the pipe SIGTERM and SIGINT are written to (`install_signal_handlers`)."""
        self._worker_runs = WorkerRunsWriter(self.layout, owner=f"jarvis-{os.getpid()}")
        """Each lane's ``worker_runs.json``, what NanoClaw's agents read (`core.nanoclaw`)."""
        self.sandbox = sandbox.Probe(None, "not probed yet")
        """Whether bubblewrap works here (`core.host.sandbox`), probed as the host starts."""

    # -- the host's own lifecycle ------------------------------------------------------------

    def stop(self, *_: Any) -> None:
        """Ask the loop to finish (safe from a signal handler)."""
        self.stopping.set()
        # Wake a loop waiting for paths now, not at its wait's timeout: a host once sat in that
        # wait for two minutes past its SIGTERM, its other threads already gone. SimpleQueue's
        # put is reentrant, made for callers like this one.
        self._paths.put(_WAKE)

    def _stop_asked(self) -> bool:
        """Whether SIGTERM or SIGINT arrived (read from the wakeup pipe), and if so, stop."""
        if self._signal_pipe is None:
            return False
        try:
            received = os.read(self._signal_pipe, 64)
        except BlockingIOError:
            return False
        except OSError:
            return False
        if {signal.SIGTERM, signal.SIGINT} & set(received):
            self.stop()
            return True
        return False

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        # The signal's number is also written to a pipe the loop reads every tick: a stop asked
        # for must stop the host even when the Python-level handler is late or never runs (a
        # loaded machine once left a host running two minutes past its SIGTERM).
        reader, writer = os.pipe()
        os.set_blocking(reader, False)
        os.set_blocking(writer, False)
        signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
        self._signal_pipe = reader
        # `kill -USR1 PID` writes every thread's stack to the host's log (its stderr): how a
        # host that does not stop, or does not move, tells where it is without being stopped.
        faulthandler.register(signal.SIGUSR1, all_threads=True)

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
        self.ingestor = Ingestor(
            self.store,
            self.layout,
            on_progress=self._activity,
            universal_default=self.config.criteria.universal,
            write_grace_s=self.config.watch.write_grace_s,
        )
        try:
            # What is on disk first, then the runs a previous host left: retried, like every
            # step, through a full disk or a locked store until it goes through or we stop.
            while not self.stopping.is_set() and not self._step(self._start_up):
                pass
            if not self.config.watch.poll:
                self._start_watcher()
            self._heartbeat = Heartbeat(self.lease, self.stopping, self._taken)
            self._heartbeat.start()
            log.info("host %d holds %s", os.getpid(), self.workspace.root)
            self.sandbox = sandbox.probe()
            if self.sandbox.program is not None:
                log.info("workers run in a bubblewrap sandbox (%s)", self.sandbox.program)
            else:
                log.warning("no sandbox: %s; workers run unconfined", self.sandbox.problem)
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
            if self._heartbeat is not None:
                self._heartbeat.join()
            self._end_lease()
            self.lease.store.close()
            self.store.close()
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
        assert self.store is not None
        catch_up(self.store, self.layout.errors_dir)  # refusals an earlier host did not record
        self.sweep()
        self.recover()
        checkouts.prune(self.config, self.workspace.root)

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
            self._forget_queued()
            self.faults.wait(problem)
            return False
        if self.faults.worked():
            self._catch_up_due = True  # refusals the store could not take while it failed
        return True

    def _forget_queued(self) -> None:
        while True:
            try:
                self._paths.get_nowait()
            except queue.Empty:
                return

    def _loop(self) -> None:
        assert self.store is not None
        poll = self.config.watch.poll
        interval = self.config.watch.poll_interval_ms / 1000 if poll else SWEEP_EVERY_S
        self._next_sweep = time.monotonic() + interval
        while not self.stopping.is_set() and not self._stop_asked():
            if not self._step(lambda: self._tick(interval)):
                self._next_sweep = 0.0  # sweep first thing once it works again

    def _tick(self, interval: float) -> None:
        assert self.store is not None
        if self._catch_up_due:
            catch_up(self.store, self.layout.errors_dir)
            self._catch_up_due = False
        self._drain(timeout=TICK_S)
        if time.monotonic() >= self._next_sweep:
            self.sweep()
            checkouts.tidy(self.store, self.config, self.workspace.root, self.name)
            self._next_sweep = time.monotonic() + interval
        self._take_prepared()
        self._reap()
        self._verify()
        self._schedule()
        deliver_pending(self.store, self.layout, host=self.name)
        patient = [
            run_id
            for run_id, worker in self.workers.items()
            if self.config.steers_at_turn_end(worker.lane)
        ]
        expire_steers(
            self.store,
            self.layout,
            ack_timeout_s=self.config.timeouts.steer_ack_s,
            patient=patient,
            host=self.name,
        )
        self._worker_runs.refresh(self.store, self.config.lanes)

    # -- files ------------------------------------------------------------------------------------

    def _start_watcher(self) -> None:
        root = self.layout.root

        def interesting(change: watchfiles.Change, path: str) -> bool:
            name = os.path.basename(path)
            return (
                change != watchfiles.Change.deleted
                and name.endswith(".json")
                and not (name.startswith("."))
                # The host's own snapshots at the top of a lane, rewritten every few seconds.
                and not (
                    name in HOST_SNAPSHOTS and os.path.dirname(os.path.dirname(path)) == str(root)
                )
            )

        def watch() -> None:
            # Small debounce and step: an event file should reach the store in milliseconds,
            # not on the next 2-second poll.
            for changes in watchfiles.watch(
                root,
                watch_filter=interesting,
                debounce=50,
                step=2,
                stop_event=self.stopping,
                rust_timeout=200,
                raise_interrupt=False,
            ):
                for _, path in sorted(changes, key=lambda c: c[1]):
                    self._paths.put(Path(path))

        self._watcher = threading.Thread(target=watch, name="ipc-watcher", daemon=True)
        self._watcher.start()

    def _drain(self, *, timeout: float) -> None:
        try:
            first = self._paths.get(timeout=timeout)
        except queue.Empty:
            return
        batch = [first] if first is not _WAKE else []
        deadline = time.monotonic() + 0.2  # stay responsive to workers under a flood of events
        while time.monotonic() < deadline and not self.stopping.is_set():
            try:
                path = self._paths.get_nowait()
            except queue.Empty:
                break
            if path is not _WAKE:
                batch.append(path)
            if len(batch) >= BATCH:
                self._ingest(batch)
                batch = []
        self._ingest(batch)

    def _ingest(self, paths: list[Path]) -> None:
        # Names and messages logged here come from files: inert, like everywhere they are shown.
        if not paths:
            return
        try:
            results = self.ingestor.handle_many(paths)
        except Exception as exc:
            if io_fault(exc) is not None:
                raise  # not the files' doing: the loop waits it out, the files stay
            if isinstance(exc, OSError):  # the file system failed us; the sweep tries again
                log.warning("could not ingest %d file(s): %s", len(paths), inert(str(exc)))
                return
            # A fault of ours, set off by some file. Re-raising would crash the host, and a
            # restarted host would meet the same file and crash again: instead find the file,
            # move it aside with the error as its reason, and go on with the others.
            log.exception("ingesting a batch of %d file(s) failed; retrying one by one", len(paths))
            results = [self._ingest_alone(path) for path in paths]
        for path, result in zip(paths, results, strict=True):
            if result.outcome == "quarantined":
                log.warning("quarantined %s (%s)", inert(path.name), inert(result.detail))
            elif result.outcome == "waiting" and result.detail:
                # Written in place and read half-way: the writer's next write or a later sweep
                # finishes it (`[watch] write_grace_s`).
                log.info("waiting for %s (%s)", inert(str(path)), inert(result.detail))

    def _ingest_alone(self, path: Path) -> Ingested:
        try:
            return self.ingestor.handle(path)
        except Exception as exc:
            if io_fault(exc) is not None:
                raise
            if isinstance(exc, OSError):
                log.warning("could not ingest %s: %s", inert(str(path)), inert(str(exc)))
                return Ingested("ignored")
            log.exception("ingesting %s failed; moving it aside", inert(str(path)))
            found = self.layout.classify(path)
            lane = found.lane if found is not None else None
            message = f"the host failed on this file: {type(exc).__name__}: {exc}"
            # A QuarantineError here propagates: the loop waits until the reason can be written.
            return self.ingestor.refuse(path, lane=lane, code="host_error", message=message)

    def event_files(
        self, lane_dir: Path | None = None, *, links: list[Path] | None = None
    ) -> Iterator[Path]:
        """Every candidate event file on disk, in the order it should be ingested.

        A lane, kind or run folder that is a symbolic link is never entered: it is appended to
        ``links`` (when given), for `sweep` to move aside.
        """
        lanes = [lane_dir] if lane_dir else sorted(self._dirs(self.layout.root, links))
        for lane in lanes:
            if lane.name == self.layout.errors_dir.name:
                continue
            if self._real_dir(lane / "progress", links):
                for run_dir in sorted(self._dirs(lane / "progress", links)):
                    yield from sorted(self._json_files(run_dir))
            for folder in ("steer", "tasks", "messages"):
                if self._real_dir(lane / folder, links):
                    yield from sorted(self._json_files(lane / folder))

    def _dirs(self, path: Path, links: list[Path] | None = None) -> Iterator[Path]:
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        yield Path(entry.path)
                    elif (
                        links is not None
                        and entry.is_symlink()
                        and entry.name != self.layout.errors_dir.name
                    ):
                        links.append(Path(entry.path))
        except OSError:
            return

    @staticmethod
    def _real_dir(path: Path, links: list[Path] | None) -> bool:
        """Whether ``path`` is a folder and not a link (a link is noted in ``links``)."""
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return False
        if stat.S_ISLNK(mode):
            if links is not None:
                links.append(path)
            return False
        return stat.S_ISDIR(mode)

    @staticmethod
    def _json_files(path: Path) -> Iterator[Path]:
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.name.endswith(".json") and not entry.name.startswith("."):
                        yield Path(entry.path)
        except OSError:
            return

    def sweep(self) -> None:
        """Ingest everything on disk (start-up, the safety net, and polling mode)."""
        assert self.store is not None
        self.ingestor.forget_gone()
        batch: list[Path] = []
        links: list[Path] = []
        for path in self.event_files(links=links):
            batch.append(path)
            if len(batch) >= BATCH:
                self._ingest(batch)
                batch = []
        self._ingest(batch)
        for link in links:
            self._refuse_link(link)
        # OpenClaw requests and results live outside the IPC tree and are swept, not watched.
        ingest_requests(self.store, self.workspace.root, self.layout.errors_dir)
        gate_finished_results(
            self.store,
            self.workspace.root,
            lambda request: checkouts.openclaw_change(self.config, self.workspace.root, request),
            unchecked_may_review=self.config.git.unverified_may_review,
        )

    def _refuse_link(self, link: Path) -> None:
        """Move aside a folder of the IPC tree that is a symbolic link, never entering it.

        Whatever it points at may be anyone's files; reading them as the lane's events would let
        a lane speak for another folder, and writing into it would put the host's files there.
        """
        parts = link.relative_to(self.layout.root).parts
        lane = parts[0] if lane_problem(parts[0]) is None else None
        run_id = parts[2] if len(parts) == 3 and parts[1] == "progress" else None
        what = {1: "lane folder", 2: "folder"}.get(len(parts), "run folder")
        message = (
            f"The {what} {preview('/'.join(parts))} is a symbolic link; the host never follows "
            "links in the IPC tree, so nothing in it was read."
        )
        result = self.ingestor.refuse(link, lane=lane, code="symlink", message=message,
                                      run_id=run_id)  # fmt: skip
        if result.outcome == "quarantined":
            log.warning("quarantined %s (%s)", inert(str(link)), inert(result.detail))

    # -- runs -------------------------------------------------------------------------------------

    def recover(self) -> None:
        """Settle runs a previous host left running: their workers cannot be re-attached.

        Criterion commands it left running are killed first, or the verification this host
        starts again would run beside them.
        """
        assert self.store is not None
        for run_id, pgid in run_criteria.leftover_command_groups(self.store, self.name):
            if verification.kill_leftover(pgid, self.workspace.root, run_id):
                log.info("run %s: killed the criterion command a previous host left", run_id)
            run_criteria.record_command_group(self.store, run_id, None)
        for run in self.store.list_runs(states=(RunState.RUNNING.value,)):
            if run.get("host") not in (None, self.name):
                continue  # another host's: it, or whoever recovers it, settles it
            if run["source_lane"] == OPENCLAW:
                continue  # run by an OpenClaw worker outside this host: nothing was lost
            if stage_of(run) is not RunState.RUNNING:
                continue  # its worker had finished; verification (re)runs from the store
            pid = run.get("worker_pid")
            if pid and is_worker_of(int(pid), run["run_id"]):
                try:
                    os.killpg(int(pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            record_failure(
                self.store,
                run["run_id"],
                "host_restart",
                "the host restarted while this run was running; its worker was stopped",
            )
            log.info("run %s failed: host restart", run["run_id"])
        # Runs another host recovered while this one was lost: their workers may have kept
        # going here. Stopped now; the run's end was recorded by whoever recovered it.
        for run in self.store.workers_left(self.name, RunState.FAILED.value):
            pid = run["worker_pid"]
            if is_worker_of(int(pid), run["run_id"]):
                try:
                    os.killpg(int(pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                log.info("run %s: stopped the worker left while this host was lost", run["run_id"])
            with self.store.transaction() as tx:
                tx.touch_run(run["run_id"], changes={"worker_pid": None}, kind="worker",
                             payload={"pid": None, "stopped": int(pid)}, actor="host")  # fmt: skip

    def _activity(self, run_id: str) -> None:
        worker = self.workers.get(run_id)
        if worker:
            worker.touch()

    def _verify(self) -> None:
        """Start verifying the runs whose gates passed, while the pool has room."""
        assert self.store is not None
        self._verifiers.start_due(self.store, self.name)

    def _schedule(self) -> None:
        assert self.store is not None
        if self.stopping.is_set():
            return
        busy: dict[str, int] = {}
        for worker in self.workers.values():
            busy[worker.lane] = busy.get(worker.lane, 0) + 1
        for run, _ in self._preparing.values():
            busy[run["lane"]] = busy.get(run["lane"], 0) + 1
        over = self._workspace_over_budget()
        if over:
            if not self._budget_said:
                log.warning("%s: no new run starts", over)
                self._budget_said = True
            return
        self._budget_said = False
        queued = self.store.queued_runs(RunState.QUEUED.value, 200, self.lanes)
        wants: dict[str, int] = {}
        for run in queued:
            lane = run["lane"]
            if busy.get(lane, 0) + wants.get(lane, 0) < self.config.lane_limit(lane):
                wants[lane] = wants.get(lane, 0) + 1
        if not wants:
            return
        # Claimed first, so that hosts serving one lane never start one run twice.
        claimed = set(self.store.claim_runs(self.name, wants, RunState.QUEUED.value))
        for run in queued:
            if run["run_id"] in claimed and self._start(run["run_id"]):
                busy[run["lane"]] = busy.get(run["lane"], 0) + 1

    def _start(self, run_id: str) -> bool:
        assert self.store is not None
        try:
            run = host_move(self.store, run_id, Action.START, holder=self.name)
        except (IllegalTransition, KeyError, NotHeld):
            return False  # cancelled, changed or claimed by another since: nothing to start
        lane = run["lane"]
        try:
            self.layout.ensure_lane(lane)
        except IpcPathError as exc:
            # A folder of the lane was swapped for a link since the last sweep (which moves it
            # aside): the worker cannot be given folders inside the tree.
            record_failure(self.store, run_id, "start_failed", f"the worker did not start: {exc}")
            return False
        paths = WorkerPaths(
            ipc_dir=self.layout.lane_dir(lane),
            progress_dir=self.layout.progress_dir(lane, run_id),
            steer_file=self.layout.steer_file(lane, run_id),
            ack_file=self.layout.ack_file(lane, run_id),
            # A folder per attempt: a retry's worker must not write over the last one's logs.
            log_dir=attempt_dir(self.workspace.root, run_id, int(run["retry_count"]) + 1),
        )
        paths.progress_dir.mkdir(parents=True, exist_ok=True)
        job = checkouts.checkout_job(self.store, self.config, run)
        if job is not None:
            # The worktree is made off the loop; the worker starts when it is ready.
            self._preparing[run_id] = (run, paths)
            self._preparer.submit(job)
            return True
        checkout = run_criteria.checkout_dir(self.workspace.root, run_id)
        checkout.mkdir(parents=True, exist_ok=True)
        return self._launch(run, paths, checkout)

    def _take_prepared(self) -> None:
        """Start the workers whose worktrees are ready; fail the runs whose could not be made.

        A result stays in `_ready` until its effect is committed: a storage fault on the way
        leaves it there for the next tick.
        """
        assert self.store is not None
        for job, result in self._preparer.finished():
            self._ready[job.run_id] = (job, result)
        for run_id, (job, result) in list(self._ready.items()):
            run, paths = self._preparing[run_id]
            if isinstance(result, Exception):
                why = str(result) or type(result).__name__
                record_failure(self.store, run_id, "start_failed",
                               f"the worker did not start: {why}")  # fmt: skip
            else:
                current = self.store.get_run(run_id)
                running = current is not None and current["state"] == RunState.RUNNING.value
                # Already launched when a storage fault interrupted this after the start.
                if current is not None and running and run_id not in self.workers:
                    checkouts.record_made(self.store, job, result)
                    self._launch(current, paths, result.path, result)
                # else: cancelled while its worktree was made; the worktree waits for tidying
            del self._ready[run_id]
            del self._preparing[run_id]

    def _launch(
        self,
        run: dict[str, Any],
        paths: WorkerPaths,
        checkout: Path,
        worktree: Worktree | None = None,
    ) -> bool:
        assert self.store is not None
        run_id, lane = str(run["run_id"]), str(run["lane"])
        command = program_from(self.config.worker_command(lane), self.workspace.root)
        stdin: bytes | None = None
        frames: FrameDecoder | None = None
        try:
            env = worker_env(
                os.environ,
                run_id=run_id,
                lane=lane,
                attempt=int(run["retry_count"]) + 1,
                dispatch=json.loads(run["dispatch_json"]),
                criteria=run_criteria.criteria_of(run),
                paths=paths,
            )
            # The worker works in the run's checkout, knowing what will be verified there.
            env.update(self.config.worker_env(lane))
            env["JARVIS_CHECKOUT"] = str(checkout)
            if worktree is not None:
                # Where the branch started: what an agent's adapter diffs against.
                env["JARVIS_BASE_COMMIT"] = worktree.base_commit
            nanoclaw = self._nanoclaw_launch(run, command, paths, checkout, worktree)
            if nanoclaw is not None:
                command, stdin, frames = nanoclaw.argv, nanoclaw.stdin, FrameDecoder()
                env.update(nanoclaw.env)
            # The run's checkout, its progress and acknowledgements are all it may write (and
            # a NanoClaw runner, its lane's folder, where it writes its messages).
            writable = [checkout, paths.progress_dir, paths.ack_file.parent,
                        *self.config.writable_for(lane, self.workspace.root)]  # fmt: skip
            confined = sandbox.confine(
                command, env, configured=self.config.sandbox_for(lane), found=self.sandbox,
                workspace_root=self.workspace.root, run_id=run_id, cwd=checkout,
                writable=[*writable, *([paths.ipc_dir] if nanoclaw is not None else [])],
                keep=self.config.worker_env(lane),
            )  # fmt: skip
            command, env = confined.argv, confined.env
            worker = start_worker(
                command,
                run_id=run_id,
                lane=lane,
                env=env,
                cwd=checkout,
                paths=paths,
                stdin=stdin,
                frames=frames,
            )
        except (OSError, LaunchError, sandbox.SandboxUnavailable) as exc:
            record_failure(self.store, run_id, "start_failed", f"the worker did not start: {exc}")
            return False
        worker.attempt = int(run["retry_count"]) + 1
        worker.confined = confined.mode == "bwrap"
        self.workers[run_id] = worker
        payload: dict[str, Any] = {"pid": worker.pid, "lane": lane, "sandbox": confined.mode}
        if confined.unconfined:
            payload["unconfined"] = confined.unconfined
        with self.store.transaction() as tx:
            tx.touch_run(
                run_id,
                changes={"worker_pid": worker.pid, "sandbox": confined.mode},
                kind="worker",
                payload=payload,
                actor="host",
            )
        log.info("run %s started on %s (pid %d, sandbox %s)", run_id, lane, worker.pid,
                 confined.mode)  # fmt: skip
        return True

    def _nanoclaw_launch(
        self,
        run: dict[str, Any],
        command: list[str],
        paths: WorkerPaths,
        checkout: Path,
        worktree: Worktree | None,
    ) -> Launch | None:
        """How a run on a ``nanoclaw`` profile's lane is started (None: not such a lane).

        Raises:
            LaunchError, OSError: it cannot be started as configured.
        """
        found = self.config.profile_for(str(run["lane"]))
        if found is None or found[1].agent != "nanoclaw":
            return None
        profile = found[1]
        prepare_input(paths.ipc_dir)
        return build_launch(
            command,
            container=profile.is_container,
            run_id=str(run["run_id"]),
            lane=str(run["lane"]),
            dispatch=json.loads(run["dispatch_json"]),
            criteria=run_criteria.criteria_of(run),
            ipc_dir=paths.ipc_dir,
            checkout=checkout,
            profile_env=profile.env,
            host_env=os.environ,
            secret_names=profile.secrets,
            assistant_name=profile.assistant_name,
            shared=[objects_dir(worktree.repo_dir)] if worktree is not None else [],
            mounts_dir=self.workspace.root / MOUNTS,
        )

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
                request_close(self.layout.lane_dir(worker.lane))
            except OSError as exc:
                log.warning("run %s: input/_close could not be written: %s", worker.run_id,
                            inert(str(exc)))  # fmt: skip
        elif (
            worker.close_requested_at is not None
            and now - worker.close_requested_at > CLOSE_GRACE_S
        ):
            worker.terminate("closed")

    def _reap(self) -> None:
        assert self.store is not None
        if not self.workers:
            return
        now = time.monotonic()
        timeouts = self.config.timeouts
        # An attempt ends here when its run no longer runs it: an operator's cancel, or another
        # host that recovered this one while it was away (and maybe started the run again).
        current = self.store.attempts_of(list(self.workers))
        ended = {
            run_id
            for run_id, worker in self.workers.items()
            if (row := current.get(run_id)) is None
            or row["state"] != RunState.RUNNING.value
            or row["host"] not in (None, self.name)
            or int(row["retry_count"]) + 1 != worker.attempt
        }
        over = self._over_budget(now)
        for run_id, worker in list(self.workers.items()):
            if worker.frames is not None:
                self._end_nanoclaw(worker, now)
            if run_id in over:
                worker.interrupt("budget_exceeded")
                self._budget_notes.setdefault(run_id, over[run_id])
            if (
                worker.interrupt_sent_at is not None
                and worker.term_sent_at is None
                and now - worker.interrupt_sent_at > self.config.budgets.interrupt_grace_s
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
                self._finish(worker, code)

    def _over_budget(self, now: float, *, last_of: str | None = None) -> dict[str, str]:
        """Running runs past a budget (`[budgets]`), each with the sentence that says which.

        ``last_of``: judge only this run's attempt, which has just ended, on its figures (its
        wall time was the reaper's to judge while it ran).
        """
        assert self.store is not None
        budgets = self.config.budgets
        if not self.workers:
            return {}
        if last_of is not None:
            running_s = {last_of: 0.0}
        else:
            running_s = {run_id: now - w.started for run_id, w in self.workers.items()}
        attempts = {}
        if needs_attempt_usage(budgets):
            attempts = {
                run_id: Spent(
                    int(u["tokens_in"]) + int(u["tokens_out"]),
                    float(u["cost_usd"]),
                    unreadable=u["unreadable"],
                )
                for run_id, u in self.store.attempt_usage(list(running_s)).items()
            }
        total = self._workspace_spent() if has_workspace_cap(budgets) else None
        return over_budget(budgets, running_s, attempts, total)

    def _workspace_spent(self) -> Spent:
        """The workspace's totals: what its agents reported, and how long its workers worked
        (ended attempts, and running ones up to now, whichever host runs them); a figure no
        cap asks for is left at 0, unread."""
        assert self.store is not None
        budgets = self.config.budgets
        tokens, cost, wall_s = 0, 0.0, 0.0
        # Each sum reads every run, and the loop asks twice a tick: only what a cap needs.
        if budgets.workspace_tokens is not None or budgets.workspace_cost_usd is not None:
            total = self.store.workspace_usage()
            tokens = int(total["tokens_in"]) + int(total["tokens_out"])
            cost = float(total["cost_usd"])
        if budgets.workspace_wall_s is not None:
            ended_s, live = self.store.workspace_worked()
            now = self.store.now()
            wall_s = ended_s + sum(worked(started, now) for started in live)
        return Spent(tokens, cost, wall_s)

    def _workspace_over_budget(self) -> str | None:
        if not has_workspace_cap(self.config.budgets):
            return None
        return workspace_over(self.config.budgets, self._workspace_spent())

    def _finish(self, worker: WorkerProcess, code: int) -> None:
        """Record how the worker's attempt ended, then forget the worker.

        The worker stays in the table until its end is committed: a storage fault on the way
        leaves it there, and the next tick finishes it again (each store write below is
        idempotent or guarded by the run's state).
        """
        assert self.store is not None
        worker.wait_for_output()
        # Progress written just before the exit belongs to this attempt: take it in first.
        self._ingest(sorted(self._json_files(self.layout.progress_dir(worker.lane, worker.run_id))))
        raw, total = worker.stderr()
        tail = record_stderr(self.store, worker.run_id, worker.attempt, raw, total, code)
        reason = worker.stop_requested
        if reason is None and (late := self._over_budget(0.0, last_of=worker.run_id)):
            # Its last reports, taken in above, crossed a budget: judged here as well, or a
            # worker that spends and exits at once would pass (the reaper judges attempts
            # still running, before it looks for ended ones).
            reason = "budget_exceeded"
            self._budget_notes[worker.run_id] = f"{late[worker.run_id]}, reported as it ended"
        limits = self.config.timeouts
        if reason == "no_output":
            record_failure(self.store, worker.run_id, "no_output",
                           f"no output for {limits.no_output_s:g} s")  # fmt: skip
        elif reason == "hard_limit":
            record_failure(self.store, worker.run_id, "hard_limit",
                           f"still running after the {limits.hard_limit_s:g} s limit")  # fmt: skip
        elif reason == "host_shutdown":
            record_failure(self.store, worker.run_id, "host_shutdown",
                           "the host shut down while this run was running")  # fmt: skip
        elif reason == "budget_exceeded":
            why = self._budget_notes.pop(worker.run_id, "a budget was crossed")
            record_failure(self.store, worker.run_id, "budget_exceeded",
                           f"budget_exceeded: stopped, {why}")  # fmt: skip
        elif reason in ("cancelled", "lease_lost"):
            pass  # the operator's cancel, or the lost lease, already ended the run
        else:
            output = worker.output()
            failure = None
            if worker.frames is not None:
                # The completion is in the frames' results, not in the JSON-escaped stdout.
                decoded = worker.frames.finish()
                output = decoded.text.encode("utf-8", "surrogatepass")
                failure = runner_failure(decoded)
                if decoded.problem_count:
                    log.warning("run %s: %d output frame problem(s), first: %s", worker.run_id,
                                decoded.problem_count, decoded.problems[0])  # fmt: skip
            if failure is not None:
                record_failure(self.store, worker.run_id, "crash", failure)
            elif code != 0 and _COMPLETION_TAG not in output.lower():
                message = f"the worker exited with code {code} without a completion"
                if tail:  # what it said last is usually why: the operator sees it first
                    message += f"; its stderr ends: {last_line(tail)}"
                record_failure(self.store, worker.run_id, "crash", message)
            else:
                # Git is asked before the store's write lock is taken, never while it is held.
                claims = checkouts.check_completion(
                    self.store, self.workspace.root, worker.run_id, output
                )
                record_completion(
                    self.store,
                    worker.run_id,
                    output,
                    claims=claims,
                    unchecked_may_review=self.config.git.unverified_may_review,
                )
        del self.workers[worker.run_id]
        run = self.store.get_run(worker.run_id)
        log.info("run %s ended: %s", worker.run_id, run["state"] if run else "?")

    def _shutdown(self) -> None:
        """Tell every worker to stop, give them the grace period, then end their runs.

        A host whose name was taken records nothing: the runs under the name are the new
        holder's, and it settles them (`recover`).
        """
        taken = self._name_taken is not None
        if self.store is not None and not taken:
            for run_id in list(self._preparing):
                try:
                    record_failure(self.store, run_id, "host_shutdown",
                                   "the host shut down while this run's worktree was being "
                                   "made")  # fmt: skip
                except Exception as exc:
                    if io_fault(exc) is None:
                        raise
                    # The run stays running in the store; the next host settles it.
                self._preparing.pop(run_id, None)
        self._verifiers.join(self.config.timeouts.shutdown_grace_s + 1)
        if not self.workers or self.store is None:
            return
        for worker in self.workers.values():
            worker.terminate("lease_lost" if taken else "host_shutdown")
        deadline = time.monotonic() + self.config.timeouts.shutdown_grace_s
        while self.workers and time.monotonic() < deadline:
            for worker in list(self.workers.values()):
                code = worker.process.poll()
                if code is not None:
                    self._finish_on_the_way_out(worker, code)
            time.sleep(TICK_S)
        for worker in list(self.workers.values()):
            worker.kill()
            self._finish_on_the_way_out(worker, worker.process.wait())

    def _finish_on_the_way_out(self, worker: WorkerProcess, code: int) -> None:
        try:
            self._finish(worker, code)
        except Exception as exc:
            problem = io_fault(exc)
            if problem is None:
                raise
            # No waiting on the way out: the run stays running in the store, and the next
            # host settles it (`recover`), as after a crash.
            self.workers.pop(worker.run_id, None)
            log.error("run %s: its end could not be recorded: %s", worker.run_id, problem)
