"""This host among the hosts serving one store: its lease, its claims, and recovering lost hosts.

A host registers under its name (``[host] name``, default ``<machine>:<workspace>``) with a
lease it renews every ``heartbeat_s``. Its name is refused while another host holds a live lease
on it, unless that holder is a dead process on this same machine (a host restarted after a crash
takes its own name back at once, as the workspace's file lock lets it).

A host whose lease runs out without a clean stop is lost. Any other host then recovers it: each
running run the lost host held fails ``host_lost``, in a transaction that first checks the lost
host is still that same lost incarnation, so a host restarted meanwhile under the name keeps
what it has started since; a run is failed once whoever recovers it (a failure is a move of the
lifecycle, refused for a run no longer running). Queued runs it had claimed are free to claim
again as soon as its lease is out (`core.store.hosts`).

A host that finds it could not renew its lease in time (a long pause, the database away) may
have been recovered already: it fails its own running runs the same way (once, as above), stops
their workers and registers again under a new incarnation.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from core.host.lock import pid_alive
from core.host.outcomes import fail_running
from core.lifecycle import RunState
from core.store.api import RunStore
from core.store.sqlite_store import iso

log = logging.getLogger(__name__)


class HostNameHeld(Exception):
    """Another live host holds this name."""

    def __init__(self, name: str, machine: str, pid: int, heartbeat_at: str) -> None:
        self.name = name
        super().__init__(
            f"Another host (pid {pid} on {machine}) holds the name {name!r}, its last heartbeat "
            f"at {heartbeat_at}; give this host another name (--name, or [host] name), or stop "
            "that one."
        )


def default_name(workspace: Path) -> str:
    return f"{socket.gethostname()}:{workspace}"


@dataclass
class Lease:
    """This host's lease on its name, and the work it does with it."""

    store: RunStore
    name: str
    workspace: Path
    lanes: Sequence[str] | None
    heartbeat_s: float
    lease_s: float
    clock: Callable[[], float] = field(default=lambda: 0.0)
    """Monotonic seconds, to tell a renewal that came after the lease had run out."""
    incarnation: str = field(default_factory=lambda: uuid.uuid4().hex)
    machine: str = field(default_factory=socket.gethostname)
    _renewed_at: float = 0.0

    def _until(self, now: str) -> str:
        return iso(datetime.fromisoformat(now) + timedelta(seconds=self.lease_s))

    def register(self) -> None:
        """Take the name for this host.

        Raises:
            HostNameHeld: a live host (another process, or another machine) holds it.
        """
        with self.store.transaction() as tx:
            held = tx.host(self.name)
            if (
                held is not None
                and held["stopped_at"] is None
                and held["recovered_by"] is None
                and held["lease_until"] >= tx.now
                and held["incarnation"] != self.incarnation
                and not (held["machine"] == self.machine and not pid_alive(int(held["pid"])))
            ):
                raise HostNameHeld(self.name, held["machine"], held["pid"], held["heartbeat_at"])
            tx.register_host(
                self.name,
                incarnation=self.incarnation,
                machine=self.machine,
                pid=os.getpid(),
                workspace=str(self.workspace),
                lanes=self.lanes,
                lease_until=self._until(tx.now),
            )
        self._renewed_at = self.clock()

    def renew(self) -> bool:
        """Renew the lease; False when it was lost (recovered by another host, or taken)."""
        started = self.clock()
        with self.store.transaction() as tx:
            kept = tx.renew_lease(self.name, self.incarnation, self._until(tx.now))
        if kept:
            if started - self._renewed_at > self.lease_s:
                # Renewed, but after the lease had run out: another host may be recovering
                # this one's runs right now. Treated as lost, so no run is worked twice.
                log.warning("host %s renewed its lease %.1f s late", self.name, started -
                            self._renewed_at - self.lease_s)  # fmt: skip
                kept = False
            else:
                self._renewed_at = started
        return kept

    def end(self) -> None:
        """A clean stop: the lease ends now."""
        with self.store.transaction() as tx:
            tx.end_lease(self.name, self.incarnation)

    def recover_lost(self) -> dict[str, list[str]]:
        """Recover every host whose lease ran out: fail its running runs (``host_lost``) and
        mark it recovered. Returns the runs failed, by lost host."""
        recovered: dict[str, list[str]] = {}
        for name in self.store.lost_hosts(self.store.now(), self.name):
            lost = self.store.host(name)
            if lost is None:
                continue
            failed = []
            message = (
                f"host_lost: host {name} stopped renewing its lease (last heartbeat "
                f"{lost['heartbeat_at']}); recovered by {self.name}"
            )
            for run in self.store.runs_held(name, RunState.RUNNING.value):
                with self.store.transaction() as tx:
                    if not _still_lost(tx.host(name), lost["incarnation"], tx.now):
                        break  # it came back (or another host finished): nothing more here
                    fresh = tx.get_run(run["run_id"])
                    if fresh is None or fresh["state"] != RunState.RUNNING.value:
                        continue
                    if fresh["host"] != name:
                        continue
                    fail_running(tx, fresh, "host_lost", message, keep_worker_pid=True)
                    failed.append(run["run_id"])
            with self.store.transaction() as tx:
                if _still_lost(tx.host(name), lost["incarnation"], tx.now):
                    tx.mark_recovered(name, self.name)
            if failed:
                log.warning("recovered lost host %s: failed %d running run(s)", name, len(failed))
            recovered[name] = failed
        return recovered


def give_up_runs(store: RunStore, name: str, message: str) -> list[str]:
    """Fail every running run host ``name`` holds (its lease was lost); the ids failed. Each
    once: a run another host recovered meanwhile is no longer running."""
    failed = []
    for run in store.runs_held(name, RunState.RUNNING.value):
        with store.transaction() as tx:
            fresh = tx.get_run(run["run_id"])
            if fresh is None or fresh["state"] != RunState.RUNNING.value or fresh["host"] != name:
                continue
            fail_running(tx, fresh, "host_lost", message)
            failed.append(run["run_id"])
    return failed


def _still_lost(row: dict[str, object] | None, incarnation: str, now: str) -> bool:
    return (
        row is not None
        and row["incarnation"] == incarnation
        and row["stopped_at"] is None
        and row["recovered_by"] is None
        and str(row["lease_until"]) < now
    )
