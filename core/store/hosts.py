"""The hosts serving one store, their leases, and which host holds each queued or running run.

Every host registers under its name with a lease it renews by heartbeats; a host that stops
cleanly ends its lease. A host whose lease ran out without a stop is lost: the runs it held are
recovered by another host (`core.host.fleet`). A queued run is claimed (``runs.host``) before it
is started, so two hosts serving one lane never start it twice; the claim is no move of the
lifecycle (the run stays queued, its version unchanged) and is not journaled.

Times are the store's ISO text, which orders as time does; hosts on several machines compare
their own clocks with each other's leases, so their clocks must agree to well within a lease.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from core.store.lanes import not_paused
from core.store.statements import Statements, Writes

#: A host whose lease is live and that has not stopped holds what it claimed.
_LIVE = "stopped_at IS NULL AND lease_until >= ?"
#: Queued runs a host may claim: unclaimed, its own, or held by a host that is gone.
_FREE = f"(host IS NULL OR host = ? OR host NOT IN (SELECT name FROM hosts WHERE {_LIVE}))"


def held_by(host: str | None, alias: str = "r") -> str:
    """The condition (with one ``?`` for ``host``) that a run is ``host``'s to work: claimed
    by it, or from before hosts were recorded; nothing when ``host`` is None (every run)."""
    if host is None:
        return ""
    return f" AND ({alias}.host = ? OR {alias}.host IS NULL)"


def lease_state(host: Mapping[str, Any], now: str) -> str:
    """``live``, ``stopped`` (cleanly), ``lost`` (its lease ran out; not yet recovered) or
    ``recovered`` (another host settled its runs)."""
    if host.get("stopped_at"):
        return "stopped"
    if host.get("recovered_by"):
        return "recovered"
    return "live" if str(host["lease_until"]) >= now else "lost"


@dataclass(frozen=True)
class Renewal:
    """What renewing a lease found, decided in the transaction that renewed it (or did not)."""

    outcome: Literal["kept", "recovered", "taken"]
    """``kept``: renewed. ``recovered``: still this incarnation's name, but another host
    recovered it meanwhile (its running runs were failed there); not renewed. ``taken``: the
    name is another incarnation's now, or was ended; not renewed."""
    late_s: float = 0.0
    """How long the lease had run out when it was renewed (0: renewed in time)."""
    found: dict[str, Any] | None = None
    """The name's row as found (``recovered``, ``taken``): who recovered it, or who holds it."""


def _seconds_between(earlier: str, later: str) -> float:
    return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()


def _host(row: dict[str, Any]) -> dict[str, Any]:
    lanes = row.get("lanes")
    return {**row, "lanes": json.loads(lanes) if lanes else None}


class HostReads(Statements):
    """The hosts, read."""

    def hosts(self) -> list[dict[str, Any]]:
        """Every host that ever served the store, with how many runs each runs now; lanes as a
        list (None: every lane)."""
        rows = self.rows(
            "SELECT h.name, h.incarnation, h.machine, h.pid, h.workspace, h.lanes, h.started_at, "
            "h.heartbeat_at, h.lease_until, h.stopped_at, h.recovered_by, h.recovered_at, "
            "(SELECT COUNT(*) FROM runs r WHERE r.host = h.name AND r.state = 'running') "
            "AS running FROM hosts h ORDER BY h.name"
        )
        return [_host(r) for r in rows]

    def host(self, name: str) -> dict[str, Any] | None:
        rows = self.rows("SELECT * FROM hosts WHERE name = ?", [name])
        return _host(rows[0]) if rows else None

    def lost_hosts(self, now: str, me: str) -> list[str]:
        """Hosts other than ``me`` whose lease ran out without a stop, not yet recovered."""
        rows = self.rows(
            "SELECT name FROM hosts WHERE stopped_at IS NULL AND recovered_by IS NULL "
            "AND lease_until < ? AND name != ? ORDER BY name",
            [now, me],
        )
        return [str(r["name"]) for r in rows]

    def runs_held(self, host: str, state: str) -> list[dict[str, Any]]:
        """Runs in ``state`` held by ``host``."""
        return self.rows(
            "SELECT * FROM runs WHERE host = ? AND state = ? ORDER BY run_id", [host, state]
        )

    def workers_left(self, host: str, state: str) -> list[dict[str, Any]]:
        """Runs in ``state`` held by ``host`` whose worker pid is still recorded: ``run_id``,
        ``worker_pid``."""
        return self.rows(
            "SELECT run_id, worker_pid FROM runs WHERE host = ? AND state = ? "
            "AND worker_pid IS NOT NULL ORDER BY run_id",
            [host, state],
        )


class HostWrites(Writes):
    """Leases and claims (inside a transaction)."""

    def register_host(
        self,
        name: str,
        *,
        incarnation: str,
        machine: str,
        pid: int,
        workspace: str,
        lanes: Sequence[str] | None,
        lease_until: str,
    ) -> None:
        """Take ``name`` for a starting host (the caller checked no live host holds it)."""
        values = [incarnation, machine, pid, workspace, None if lanes is None else json.dumps(
            list(lanes))]  # fmt: skip
        self.execute(
            "INSERT INTO hosts (name, incarnation, machine, pid, workspace, lanes, started_at, "
            "heartbeat_at, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET incarnation = excluded.incarnation, "
            "machine = excluded.machine, pid = excluded.pid, workspace = excluded.workspace, "
            "lanes = excluded.lanes, started_at = excluded.started_at, "
            "heartbeat_at = excluded.heartbeat_at, lease_until = excluded.lease_until, "
            "stopped_at = NULL, recovered_by = NULL, recovered_at = NULL",
            [name, *values, self.now, self.now, lease_until],
        )

    def renew_lease(self, name: str, incarnation: str, lease_until: str) -> Renewal:
        """Extend the lease if the name is still this incarnation's and nobody recovered it.

        A lease that ran out is renewed all the same when no other host acted on it: lateness
        alone (a paused process, a store away for a while) is no reason to give anything up.
        Recovery re-checks that the host is still lost in each of its transactions, and writes
        are serialised, so once this renewal commits no recovery fails another of its runs.
        """
        rows = self.rows(
            "SELECT incarnation, machine, pid, heartbeat_at, lease_until, stopped_at, "
            "recovered_by, recovered_at FROM hosts WHERE name = ?",
            [name],
        )
        row = rows[0] if rows else None
        if row is None or row["incarnation"] != incarnation or row["stopped_at"] is not None:
            return Renewal("taken", found=row)
        if row["recovered_by"] is not None:
            return Renewal("recovered", found=row)
        late_s = max(0.0, _seconds_between(str(row["lease_until"]), self.now))
        self.execute(
            "UPDATE hosts SET heartbeat_at = ?, lease_until = ? WHERE name = ? AND incarnation = ?",
            [self.now, lease_until, name, incarnation],
        )
        return Renewal("kept", late_s=late_s)

    def end_lease(self, name: str, incarnation: str) -> None:
        """A clean stop: the host holds nothing from now on."""
        self.execute(
            "UPDATE hosts SET stopped_at = ?, lease_until = ? WHERE name = ? AND incarnation = ?",
            [self.now, self.now, name, incarnation],
        )

    def mark_recovered(self, name: str, by: str) -> bool:
        """Record that ``by`` recovered the lost host ``name``; False when another did first."""
        return (
            self.execute(
                "UPDATE hosts SET recovered_by = ?, recovered_at = ? WHERE name = ? "
                "AND recovered_by IS NULL AND stopped_at IS NULL",
                [by, self.now, name],
            )
            == 1
        )

    def claim_queued(self, host: str, wants: Mapping[str, int], queued: str) -> list[str]:
        """Claim for ``host`` up to ``wants[lane]`` of each lane's longest-waiting queued runs
        that no live host holds; the run ids claimed. A paused lane's runs are never claimed
        (`core.store.lanes`); one claimed before the pause committed still starts."""
        claimed: list[str] = []
        for lane, count in wants.items():
            if count <= 0:
                continue
            rows = self.rows(
                "UPDATE runs SET host = ? WHERE run_id IN ("
                f"SELECT run_id FROM runs WHERE state = ? AND lane = ? AND {_FREE} "
                f"AND {not_paused()} "
                f"ORDER BY updated_at, run_id LIMIT ?{self.claim_lock}) RETURNING run_id",
                [host, queued, lane, host, self.now, count],
            )
            claimed.extend(str(r["run_id"]) for r in rows)
        return claimed

    #: What the claim's inner SELECT adds to skip rows another claim holds (PostgreSQL's
    #: ``FOR UPDATE SKIP LOCKED``); SQLite's write lock already keeps claims apart.
    claim_lock = ""
