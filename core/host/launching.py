"""Scheduling and launching: the lanes' queued runs claimed, their checkouts made, their
workers started (confined, with their environment; a NanoClaw lane's runner as NanoClaw's host
starts it).

A run whose checkout is a worktree of a configured repository waits, running, while it is made
off the loop (`core.host.checkouts.Preparer`); its worker starts on a later tick.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from core.criteria import run_criteria
from core.host import checkouts, sandbox
from core.host.budgets import BudgetWatch
from core.host.faults import io_fault
from core.host.shared import Shared
from core.host.workers import WorkerPaths, program_from, start_worker, worker_env
from core.ipc.layout import IpcPathError
from core.lifecycle import Action, IllegalTransition, RunState
from core.moves import NotHeld, host_move
from core.nanoclaw.frames import FrameDecoder
from core.nanoclaw.launch import MOUNTS, Launch, LaunchError, build_launch, prepare_input
from core.repos.view import objects_dir
from core.repos.worktrees import Worktree
from core.verdicts import record_failure
from core.worker_logs import attempt_dir

log = logging.getLogger("jarvis.host")

#: Queued runs read per tick, at most, to choose which to claim.
QUEUED_READ = 200
NO_WORKER = (
    "the worker did not start: no worker program is configured for its lane ([workers] "
    "command, or a profile), and this host was given no default worker"
)


class Launching:
    def __init__(self, shared: Shared, budgets: BudgetWatch) -> None:
        self.shared = shared
        self.budgets = budgets
        self.sandbox = sandbox.Probe(None, "not probed yet")
        """Whether bubblewrap works here (`core.host.sandbox`), probed as the host starts."""
        self._preparer = checkouts.Preparer(shared.workspace.root)
        self.preparing: dict[str, tuple[dict[str, Any], WorkerPaths]] = {}
        """Runs whose worktree is being made, with what their worker will be given."""
        self._ready: dict[str, tuple[checkouts.CheckoutJob, Worktree | Exception]] = {}

    def schedule(self) -> None:
        """Claim the queued runs the lanes have room for, and start them."""
        shared = self.shared
        if shared.stopping.is_set():
            return
        busy: dict[str, int] = {}
        for worker in shared.workers.values():
            busy[worker.lane] = busy.get(worker.lane, 0) + 1
        for run, _ in self.preparing.values():
            busy[run["lane"]] = busy.get(run["lane"], 0) + 1
        if self.budgets.starts_held():
            return
        queued = shared.store.queued_runs(RunState.QUEUED.value, QUEUED_READ, shared.lanes)
        wants: dict[str, int] = {}
        for run in queued:
            lane = run["lane"]
            if busy.get(lane, 0) + wants.get(lane, 0) < shared.config.lane_limit(lane):
                wants[lane] = wants.get(lane, 0) + 1
        if not wants:
            return
        # Claimed first, so that hosts serving one lane never start one run twice.
        claimed = set(shared.store.claim_runs(shared.name, wants, RunState.QUEUED.value))
        for run in queued:
            if run["run_id"] in claimed and self.start(run["run_id"]):
                busy[run["lane"]] = busy.get(run["lane"], 0) + 1

    def start(self, run_id: str) -> bool:
        """Move a claimed run to running and start its worker (or its checkout)."""
        shared = self.shared
        store = shared.store
        try:
            run = host_move(store, run_id, Action.START, holder=shared.name)
        except (IllegalTransition, KeyError, NotHeld):
            return False  # cancelled, changed or claimed by another since: nothing to start
        lane = run["lane"]
        layout = shared.layout
        try:
            layout.ensure_lane(lane)
        except IpcPathError as exc:
            # A folder of the lane was swapped for a link since the last sweep (which moves it
            # aside): the worker cannot be given folders inside the tree.
            record_failure(store, run_id, "start_failed", f"the worker did not start: {exc}")
            return False
        paths = WorkerPaths(
            ipc_dir=layout.lane_dir(lane),
            progress_dir=layout.progress_dir(lane, run_id),
            steer_file=layout.steer_file(lane, run_id),
            ack_file=layout.ack_file(lane, run_id),
            # A folder per attempt: a retry's worker must not write over the last one's logs.
            log_dir=attempt_dir(shared.workspace.root, run_id, int(run["retry_count"]) + 1),
        )
        paths.progress_dir.mkdir(parents=True, exist_ok=True)
        job = checkouts.checkout_job(store, shared.config, run)
        if job is not None:
            # The worktree is made off the loop; the worker starts when it is ready.
            self.preparing[run_id] = (run, paths)
            self._preparer.submit(job)
            return True
        checkout = run_criteria.checkout_dir(shared.workspace.root, run_id)
        checkout.mkdir(parents=True, exist_ok=True)
        return self.launch(run, paths, checkout)

    def take_prepared(self) -> None:
        """Start the workers whose worktrees are ready; fail the runs whose could not be made.

        A result stays in `_ready` until its effect is committed: a storage fault on the way
        leaves it there for the next tick.
        """
        store = self.shared.store
        for job, result in self._preparer.finished():
            self._ready[job.run_id] = (job, result)
        for run_id, (job, result) in list(self._ready.items()):
            run, paths = self.preparing[run_id]
            if isinstance(result, Exception):
                why = str(result) or type(result).__name__
                record_failure(store, run_id, "start_failed",
                               f"the worker did not start: {why}")  # fmt: skip
            else:
                current = store.get_run(run_id)
                running = current is not None and RunState(current["state"]) is RunState.RUNNING
                # Already launched when a storage fault interrupted this after the start.
                if current is not None and running and run_id not in self.shared.workers:
                    checkouts.record_made(store, job, result)
                    self.launch(current, paths, result.path, result)
                # else: cancelled while its worktree was made; the worktree waits for tidying
            del self._ready[run_id]
            del self.preparing[run_id]

    def launch(
        self,
        run: dict[str, Any],
        paths: WorkerPaths,
        checkout: Path,
        worktree: Worktree | None = None,
    ) -> bool:
        """Start the run's worker in its checkout; a start that fails fails the run."""
        shared = self.shared
        config, root = shared.config, shared.workspace.root
        run_id, lane = str(run["run_id"]), str(run["lane"])
        configured = config.worker_command(lane)
        if configured is None:
            record_failure(shared.store, run_id, "start_failed", NO_WORKER)
            return False
        command = program_from(configured, root)
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
            env.update(config.worker_env(lane))
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
                        *config.writable_for(lane, root)]  # fmt: skip
            confined = sandbox.confine(
                command, env, configured=config.sandbox_for(lane), found=self.sandbox,
                workspace_root=root, run_id=run_id, cwd=checkout,
                writable=[*writable, *([paths.ipc_dir] if nanoclaw is not None else [])],
                keep=config.worker_env(lane),
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
            record_failure(shared.store, run_id, "start_failed",
                           f"the worker did not start: {exc}")  # fmt: skip
            return False
        worker.attempt = int(run["retry_count"]) + 1
        worker.confined = confined.mode == "bwrap"
        shared.workers[run_id] = worker
        payload: dict[str, Any] = {"pid": worker.pid, "lane": lane, "sandbox": confined.mode}
        if confined.unconfined:
            payload["unconfined"] = confined.unconfined
        with shared.store.transaction() as tx:
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
        found = self.shared.config.profile_for(str(run["lane"]))
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
            mounts_dir=self.shared.workspace.root / MOUNTS,
        )

    def abandon(self) -> None:
        """On the way out: fail the runs whose worktree is still being made."""
        for run_id in list(self.preparing):
            try:
                record_failure(self.shared.store, run_id, "host_shutdown",
                               "the host shut down while this run's worktree was being "
                               "made")  # fmt: skip
            except Exception as exc:
                if io_fault(exc) is None:
                    raise
                # The run stays running in the store; the next host settles it.
            self.preparing.pop(run_id, None)
