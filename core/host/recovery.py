"""What a host finds as it starts, and how it is asked to stop.

`recover` settles the runs a previous host left running (their workers cannot be re-attached:
both a gone and an orphaned worker fail the run with ``host_restart``); `StopSignals` turns
SIGTERM and SIGINT into the loop's stop, even when Python's handler is late.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
from collections.abc import Callable

from core.criteria import run_criteria
from core.host import verification
from core.host.openclaw import SOURCE as OPENCLAW
from core.host.shared import Shared
from core.host.workers import is_worker_of
from core.lifecycle import RunState, stage_of
from core.verdicts import record_failure

log = logging.getLogger("jarvis.host")


def recover(shared: Shared) -> None:
    """Settle runs a previous host left running: their workers cannot be re-attached.

    Criterion commands it left running are killed first, or the verification this host
    starts again would run beside them.
    """
    store, name, root = shared.store, shared.name, shared.workspace.root
    for run_id, pgid in run_criteria.leftover_command_groups(store, name):
        if verification.kill_leftover(pgid, root, run_id):
            log.info("run %s: killed the criterion command a previous host left", run_id)
        run_criteria.record_command_group(store, run_id, None)
    for run in store.list_runs(states=(RunState.RUNNING.value,)):
        if run.get("host") not in (None, name):
            continue  # another host's: it, or whoever recovers it, settles it
        if run["source_lane"] == OPENCLAW:
            continue  # run by an OpenClaw worker outside this host: nothing was lost
        if stage_of(run) is not RunState.RUNNING:
            continue  # its worker had finished; verification (re)runs from the store
        pid = run.get("worker_pid")
        if pid and is_worker_of(int(pid), run["run_id"]):
            _kill_group(int(pid))
        record_failure(
            store,
            run["run_id"],
            "host_restart",
            "the host restarted while this run was running; its worker was stopped",
        )
        log.info("run %s failed: host restart", run["run_id"])
    # Runs another host recovered while this one was lost: their workers may have kept
    # going here. Stopped now; the run's end was recorded by whoever recovered it.
    for run in store.workers_left(name, RunState.FAILED.value):
        pid = run["worker_pid"]
        if is_worker_of(int(pid), run["run_id"]):
            _kill_group(int(pid))
            log.info("run %s: stopped the worker left while this host was lost", run["run_id"])
        with store.transaction() as tx:
            tx.touch_run(run["run_id"], changes={"worker_pid": None}, kind="worker",
                         payload={"pid": None, "stopped": int(pid)}, actor="host")  # fmt: skip


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class StopSignals:
    """SIGTERM and SIGINT as a stop, through Python's handler and through a pipe as well."""

    def __init__(self, stop: Callable[..., None]) -> None:
        self.stop = stop
        self.pipe: int | None = None
        """Read end of the pipe SIGTERM and SIGINT are written to (`install`)."""

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        # The signal's number is also written to a pipe the loop reads every tick: a stop asked
        # for must stop the host even when the Python-level handler is late or never runs (a
        # loaded machine once left a host running two minutes past its SIGTERM).
        reader, writer = os.pipe()
        os.set_blocking(reader, False)
        os.set_blocking(writer, False)
        signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
        self.pipe = reader
        # `kill -USR1 PID` writes every thread's stack to the host's log (its stderr): how a
        # host that does not stop, or does not move, tells where it is without being stopped.
        faulthandler.register(signal.SIGUSR1, all_threads=True)

    def asked(self) -> bool:
        """Whether SIGTERM or SIGINT arrived (read from the wakeup pipe), and if so, stop."""
        if self.pipe is None:
            return False
        try:
            received = os.read(self.pipe, 64)
        except OSError:  # BlockingIOError included: nothing arrived
            return False
        if {signal.SIGTERM, signal.SIGINT} & set(received):
            self.stop()
            return True
        return False
