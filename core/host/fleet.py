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

A host that could not renew its lease in time (paused, or its store away for longer than the
lease) renews it late, and keeps everything, when no other host acted on it meanwhile: an outage
nobody else noticed fails nothing. When another host recovered it meanwhile, its running runs
were failed there: it stops their workers (the loop sees they no longer run) and takes its name
back. When its name is another incarnation's now (a host started under it once the lease ran
out), it stops, saying so: the runs under that name are the new holder's.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from core.host.faults import io_fault
from core.host.lock import pid_alive
from core.lifecycle import RunState
from core.store.api import RunStore, iso
from core.store.hosts import Renewal
from core.verdicts import fail_running

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


class HostNameTaken(Exception):
    """This host's name was taken by another host while its lease had run out: it stopped."""


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
    incarnation: str = field(default_factory=lambda: uuid.uuid4().hex)
    machine: str = field(default_factory=socket.gethostname)

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

    def renew(self) -> Renewal:
        """Renew the lease, unless it is no longer this host's to renew (`Renewal`)."""
        with self.store.transaction() as tx:
            return tx.renew_lease(self.name, self.incarnation, self._until(tx.now))

    def take_back(self) -> None:
        """Register again after another host recovered this one, as a new incarnation.

        Raises:
            HostNameHeld: another host took the name meanwhile.
        """
        before, self.incarnation = self.incarnation, uuid.uuid4().hex
        try:
            self.register()
        except BaseException:
            # Not taken back (a store fault, or another host has the name): the next beat
            # finds the name as it is and acts on that, as this incarnation.
            self.incarnation = before
            raise

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
                    if fresh is None or RunState(fresh["state"]) is not RunState.RUNNING:
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


def _still_lost(row: dict[str, object] | None, incarnation: str, now: str) -> bool:
    return (
        row is not None
        and row["incarnation"] == incarnation
        and row["stopped_at"] is None
        and row["recovered_by"] is None
        and str(row["lease_until"]) < now
    )


class Heartbeat:
    """The thread that keeps a host's lease: renews it every ``heartbeat_s``, then recovers any
    host lost meanwhile.

    It has the lease's own connection, so a loop busy with a long step cannot let the lease run
    out. A renewal the store cannot take (a fault) is tried again at the next beat. What a
    renewal finds is acted on here (`Renewal`): a late renewal keeps everything, a recovered
    host takes its name back, and a host whose name was taken calls ``on_taken`` with the
    sentence that says so, and beats no more.
    """

    def __init__(
        self, lease: Lease, stopping: threading.Event, on_taken: Callable[[str], None]
    ) -> None:
        self.lease = lease
        self.stopping = stopping
        self.on_taken = on_taken
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        self._thread.join()

    def _run(self) -> None:
        while not self.stopping.wait(self.lease.heartbeat_s):
            try:
                if not self.beat():
                    return
            except Exception as exc:
                problem = io_fault(exc)
                if problem is None and not isinstance(exc, HostNameHeld):
                    log.exception("host %s: the heartbeat failed", self.lease.name)
                else:
                    # Tried again at the next beat, however late: see `beat`.
                    log.warning("host %s: the heartbeat failed: %s", self.lease.name,
                                problem or exc)  # fmt: skip

    def beat(self) -> bool:
        """Renew once and act on what was found; False once the name was taken."""
        lease = self.lease
        renewal = lease.renew()
        if renewal.outcome == "kept":
            if renewal.late_s > 0:
                log.warning(
                    "host %s renewed its lease %.1f s after it had run out; no other host had "
                    "acted on it, so it keeps its runs",
                    lease.name,
                    renewal.late_s,
                )
            lease.recover_lost()
            return True
        found = renewal.found or {}
        if renewal.outcome == "recovered":
            log.warning(
                "host %s was recovered by %s while it could not renew its lease: the runs it "
                "was running were failed there (host_lost) and their workers are stopped here; "
                "it takes its name back",
                lease.name,
                found.get("recovered_by"),
            )
            lease.take_back()
            return True
        if not found:
            why = "its name's record was removed from the store"
        elif found["incarnation"] == lease.incarnation:
            why = f"its lease was ended from outside at {found['stopped_at']}"
        else:
            why = (
                f"while it could not renew its lease, another host (pid {found['pid']} on "
                f"{found['machine']}) took its name"
            )
        message = (
            f"host {lease.name} stopped: {why}; the runs under that name are not its to work "
            "any more. Start it again, under another name (--name) if both should run."
        )
        log.error("%s", message)
        self.on_taken(message)
        return False
