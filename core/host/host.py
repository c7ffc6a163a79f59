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
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import watchfiles

from core.criteria import run_criteria
from core.host.config import HostConfig
from core.host.ingest import Ingested, Ingestor
from core.host.lock import HostLock
from core.host.openclaw import SOURCE as OPENCLAW
from core.host.openclaw import gate_finished_results, ingest_requests
from core.host.outcomes import record_completion, record_failure
from core.host.steering import deliver_pending, expire_steers
from core.host.workers import (
    WorkerPaths,
    WorkerProcess,
    is_worker_of,
    start_worker,
    worker_env,
)
from core.ipc.files import quarantine
from core.ipc.layout import IpcLayout
from core.lifecycle import Action, IllegalTransition, RunState
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace

log = logging.getLogger("jarvis.host")

TICK_S = 0.02
SWEEP_EVERY_S = 1.0
BATCH = 256
"""Files ingested per transaction: one commit for many files is where the ingest rate comes from."""
_COMPLETION_TAG = b"</completion"


class Host:
    """The engine as a process for one workspace. Call `run` (blocks until `stop`)."""

    def __init__(self, workspace: Workspace, config: HostConfig) -> None:
        self.workspace = workspace
        self.config = config
        self.layout = IpcLayout(workspace.ipc_dir)
        self.lock = HostLock(workspace.root)
        self.stopping = threading.Event()
        self.workers: dict[str, WorkerProcess] = {}
        self._paths: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self._watcher: threading.Thread | None = None
        self.store: SqliteStore | None = None
        self._verifier: threading.Thread | None = None
        """Verifies one run's acceptance criteria at a time, off the loop: a criterion may run
        a test suite for minutes, and the loop must keep ingesting and supervising."""

    # -- the host's own lifecycle ------------------------------------------------------------

    def stop(self, *_: Any) -> None:
        """Ask the loop to finish (safe from a signal handler)."""
        self.stopping.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
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
        self.store = store
        self.layout.errors_dir.mkdir(parents=True, exist_ok=True)
        self.ingestor = Ingestor(self.store, self.layout, on_progress=self._activity)
        try:
            self.sweep()
            self.recover()
            if not self.config.watch.poll:
                self._start_watcher()
            log.info("host %d holds %s", os.getpid(), self.workspace.root)
            self._loop()
            log.info("host %d stopping", os.getpid())
        finally:
            self._shutdown()
            self.store.close()
            self.lock.release()
        log.info("host %d let go of %s", os.getpid(), self.workspace.root)

    def open_store(self) -> SqliteStore:
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
        store = SqliteStore(self.workspace.db_path)
        try:
            store.check_integrity()
        except BaseException:
            store.close()
            raise
        if store.created:
            log.info("created a new workspace store at %s", store.path)
        return store

    def _loop(self) -> None:
        assert self.store is not None
        poll = self.config.watch.poll
        interval = self.config.watch.poll_interval_ms / 1000 if poll else SWEEP_EVERY_S
        next_sweep = time.monotonic() + interval
        while not self.stopping.is_set():
            self._drain(timeout=TICK_S)
            if time.monotonic() >= next_sweep:
                self.sweep()
                next_sweep = time.monotonic() + interval
            self._reap()
            self._verify()
            self._schedule()
            deliver_pending(self.store, self.layout)
            expire_steers(self.store, self.layout, ack_timeout_s=self.config.timeouts.steer_ack_s)

    # -- files ------------------------------------------------------------------------------------

    def _start_watcher(self) -> None:
        root = self.layout.root

        def interesting(change: watchfiles.Change, path: str) -> bool:
            name = os.path.basename(path)
            return (
                change != watchfiles.Change.deleted
                and name.endswith(".json")
                and not (name.startswith("."))
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
        batch = [first]
        deadline = time.monotonic() + 0.2  # stay responsive to workers under a flood of events
        while time.monotonic() < deadline:
            try:
                batch.append(self._paths.get_nowait())
            except queue.Empty:
                break
            if len(batch) >= BATCH:
                self._ingest(batch)
                batch = []
        self._ingest(batch)

    def _ingest(self, paths: list[Path]) -> None:
        if not paths:
            return
        try:
            results = self.ingestor.handle_many(paths)
        except OSError as exc:  # the file system failed us; the sweep will try these again
            log.warning("could not ingest %d file(s): %s", len(paths), exc)
            return
        except Exception:
            # A fault of ours, set off by some file. Re-raising would crash the host, and a
            # restarted host would meet the same file and crash again: instead find the file,
            # move it aside with the error as its reason, and go on with the others.
            log.exception("ingesting a batch of %d file(s) failed; retrying one by one", len(paths))
            results = [self._ingest_alone(path) for path in paths]
        for path, result in zip(paths, results, strict=True):
            if result.outcome == "quarantined":
                log.warning("quarantined %s (%s)", path.name, result.detail)

    def _ingest_alone(self, path: Path) -> Ingested:
        try:
            return self.ingestor.handle(path)
        except OSError as exc:
            log.warning("could not ingest %s: %s", path, exc)
            return Ingested("ignored")
        except Exception as exc:
            log.exception("ingesting %s failed; moving it aside", path)
            found = self.layout.classify(path)
            lane = found.lane if found is not None else None
            message = f"the host failed on this file: {type(exc).__name__}: {exc}"
            quarantine(path, self.layout.errors_dir, lane=lane, code="host_error", message=message)
            return Ingested("quarantined", detail="host_error")

    def event_files(self, lane_dir: Path | None = None) -> Iterator[Path]:
        """Every candidate event file on disk, in the order it should be ingested."""
        lanes = [lane_dir] if lane_dir else sorted(self._dirs(self.layout.root))
        for lane in lanes:
            if lane.name == self.layout.errors_dir.name:
                continue
            for run_dir in sorted(self._dirs(lane / "progress")):
                yield from sorted(self._json_files(run_dir))
            for folder in ("steer", "tasks", "messages"):
                yield from sorted(self._json_files(lane / folder))

    @staticmethod
    def _dirs(path: Path) -> Iterator[Path]:
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        yield Path(entry.path)
        except OSError:
            return

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
        batch: list[Path] = []
        for path in self.event_files():
            batch.append(path)
            if len(batch) >= BATCH:
                self._ingest(batch)
                batch = []
        self._ingest(batch)
        # OpenClaw requests and results live outside the IPC tree and are swept, not watched.
        ingest_requests(self.store, self.workspace.root, self.layout.errors_dir)
        gate_finished_results(self.store, self.workspace.root)

    # -- runs -------------------------------------------------------------------------------------

    def recover(self) -> None:
        """Settle runs a previous host left running: their workers cannot be re-attached."""
        assert self.store is not None
        for run in self.store.list_runs(states=(RunState.RUNNING.value,)):
            if run["source_lane"] == OPENCLAW:
                continue  # run by an OpenClaw worker outside this host: nothing was lost
            if run.get("verification_state"):
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

    def _activity(self, run_id: str) -> None:
        worker = self.workers.get(run_id)
        if worker:
            worker.touch()

    def _verify(self) -> None:
        """Start verifying the next run whose gates passed, if none is being verified."""
        assert self.store is not None
        if self.stopping.is_set() or (self._verifier is not None and self._verifier.is_alive()):
            return
        due = run_criteria.due(self.store)
        if not due:
            return
        self._verifier = threading.Thread(
            target=self._verify_one, args=(due[0],), name=f"verify-{due[0]}", daemon=True
        )
        self._verifier.start()

    def _verify_one(self, run_id: str) -> None:
        # Its own connection: a store is one connection, used by one thread.
        store = SqliteStore(self.workspace.db_path, migrate=False)
        try:
            run = run_criteria.begin(store, run_id)
            if run is None:
                return
            verification = run_criteria.verify_run(
                store, self.workspace.root, run, self.config.criteria.policy()
            )
            ended = run_criteria.finish(store, run_id, verification)
            if ended is not None:
                log.info("run %s verified: %s", run_id, ended["state"])
        except Exception:  # a verifier fault must not end the host; the run stays due
            log.exception("verifying run %s failed", run_id)
        finally:
            store.close()

    def _schedule(self) -> None:
        assert self.store is not None
        if self.stopping.is_set():
            return
        busy: dict[str, int] = {}
        for worker in self.workers.values():
            busy[worker.lane] = busy.get(worker.lane, 0) + 1
        queued = self.store.rows(
            "SELECT run_id, lane FROM runs WHERE state = ? ORDER BY updated_at, run_id LIMIT 200",
            [RunState.QUEUED.value],
        )
        for run in queued:
            lane = run["lane"]
            if busy.get(lane, 0) >= self.config.workers.limit_for(lane):
                continue
            if self._start(run["run_id"]):
                busy[lane] = busy.get(lane, 0) + 1

    def _start(self, run_id: str) -> bool:
        assert self.store is not None
        try:
            run = host_move(self.store, run_id, Action.START)
        except (IllegalTransition, KeyError):
            return False  # cancelled or changed since the query: nothing to start
        lane = run["lane"]
        self.layout.ensure_lane(lane)
        paths = WorkerPaths(
            ipc_dir=self.layout.lane_dir(lane),
            progress_dir=self.layout.progress_dir(lane, run_id),
            steer_file=self.layout.steer_file(lane, run_id),
            ack_file=self.layout.ack_file(lane, run_id),
            log_dir=self.workspace.root / "logs" / run_id,
        )
        paths.progress_dir.mkdir(parents=True, exist_ok=True)
        checkout = run_criteria.checkout_dir(self.workspace.root, run_id)
        checkout.mkdir(parents=True, exist_ok=True)
        env = worker_env(
            os.environ,
            run_id=run_id,
            lane=lane,
            attempt=int(run["retry_count"]) + 1,
            dispatch=json.loads(run["dispatch_json"]),
            paths=paths,
        )
        # The worker works in the run's checkout, knowing what will be verified there.
        env["JARVIS_CHECKOUT"] = str(checkout)
        env["JARVIS_CRITERIA"] = json.dumps(run_criteria.criteria_of(run))
        try:
            worker = start_worker(
                self.config.workers.command,
                run_id=run_id,
                lane=lane,
                env=env,
                cwd=checkout,
                paths=paths,
            )
        except OSError as exc:
            record_failure(self.store, run_id, "start_failed", f"the worker did not start: {exc}")
            return False
        self.workers[run_id] = worker
        with self.store.transaction() as tx:
            tx.touch_run(
                run_id,
                changes={"worker_pid": worker.pid},
                kind="worker",
                payload={"pid": worker.pid, "lane": lane},
                actor="host",
            )
        log.info("run %s started on %s (pid %d)", run_id, lane, worker.pid)
        return True

    def _reap(self) -> None:
        assert self.store is not None
        if not self.workers:
            return
        now = time.monotonic()
        timeouts = self.config.timeouts
        ended = {
            r["run_id"]
            for r in self.store.rows(
                f"SELECT run_id FROM runs WHERE state != ? AND run_id IN "
                f"({', '.join('?' for _ in self.workers)})",
                [RunState.RUNNING.value, *self.workers],
            )
        }
        for run_id, worker in list(self.workers.items()):
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

    def _finish(self, worker: WorkerProcess, code: int) -> None:
        assert self.store is not None
        del self.workers[worker.run_id]
        worker.wait_for_output()
        # Progress written just before the exit belongs to this attempt: take it in first.
        self._ingest(sorted(self._json_files(self.layout.progress_dir(worker.lane, worker.run_id))))
        reason = worker.stop_requested
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
        elif reason == "cancelled":
            pass  # the operator's cancel already ended the run
        else:
            output = worker.output()
            if code != 0 and _COMPLETION_TAG not in output.lower():
                message = f"the worker exited with code {code} without a completion"
                record_failure(self.store, worker.run_id, "crash", message)
            else:
                record_completion(self.store, worker.run_id, output)
        run = self.store.get_run(worker.run_id)
        log.info("run %s ended: %s", worker.run_id, run["state"] if run else "?")

    def _shutdown(self) -> None:
        """Tell every worker to stop, give them the grace period, then end their runs."""
        if not self.workers or self.store is None:
            return
        for worker in self.workers.values():
            worker.terminate("host_shutdown")
        deadline = time.monotonic() + self.config.timeouts.shutdown_grace_s
        while self.workers and time.monotonic() < deadline:
            for worker in list(self.workers.values()):
                code = worker.process.poll()
                if code is not None:
                    self._finish(worker, code)
            time.sleep(TICK_S)
        for worker in list(self.workers.values()):
            worker.kill()
            self._finish(worker, worker.process.wait())
