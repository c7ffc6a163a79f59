"""Steers waiting to be delivered or expired: the SQLite backend's statements, as methods the
store (`SteerReads`) and its transactions (`SteerWrites`) take on (core/host/steering.py moves
them; docs/lifecycle.md gives the receipts)."""

from __future__ import annotations

from typing import Any

from core.store.hosts import held_by
from core.store.statements import Statements, Writes


class SteerReads(Statements):
    """Steers the host has to act on."""

    #: How steers are ordered within one millisecond: the order they were recorded in.
    steer_order = "s.rowid"

    def steers_to_deliver(self, running: str, host: str | None = None) -> list[dict[str, Any]]:
        """Pending steers of runs in state ``running`` that have none delivered and waiting,
        oldest first (in the order they were recorded), with each run's lane; of the runs
        ``host`` holds (and runs from before hosts were recorded) when it is given."""
        return self.rows(
            "SELECT s.steer_id, s.run_id, s.message, s.operator, r.lane FROM steering_events s "
            "JOIN runs r ON r.run_id = s.run_id "
            "WHERE s.status = 'pending' AND r.state = ? AND NOT EXISTS ("
            "  SELECT 1 FROM steering_events d "
            f"  WHERE d.run_id = s.run_id AND d.status = 'delivered'){held_by(host)}"
            f" ORDER BY s.created_at, {self.steer_order}",
            [running, *([host] if host else [])],
        )

    def steers_to_expire(
        self, sent_before: str, running: str, host: str | None = None
    ) -> list[dict[str, Any]]:
        """Delivered steers sent before ``sent_before``, and pending or delivered steers of runs
        no longer ``running``, each with its run's state and lane (of ``host``'s runs, as in
        `steers_to_deliver`)."""
        return self.rows(
            "SELECT s.steer_id, s.run_id, s.status, s.sent_at, r.state, r.lane "
            "FROM steering_events s JOIN runs r ON r.run_id = s.run_id "
            "WHERE ((s.status = 'delivered' AND s.sent_at < ?) "
            f"   OR (s.status IN ('pending', 'delivered') AND r.state != ?)){held_by(host)}",
            [sent_before, running, *([host] if host else [])],
        )


class SteerWrites(Writes):
    """A steer's status moved, inside a transaction; each returns whether it moved (a steer
    another writer moved first is left as it is)."""

    def steer_status(self, steer_id: str, run_id: str) -> str | None:
        """The run's steer's status, or None when the run has no such steer."""
        found = self.rows(
            "SELECT status FROM steering_events WHERE steer_id = ? AND run_id = ?",
            [steer_id, run_id],
        )
        return str(found[0]["status"]) if found else None

    def ack_steer(self, steer_id: str, acked_at: str) -> None:
        """The worker acknowledged the steer at ``acked_at`` (its own clock)."""
        self.execute(
            "UPDATE steering_events SET status = 'acked', acked_at = ?, status_reason = NULL "
            "WHERE steer_id = ?",
            [acked_at, steer_id],
        )

    def mark_steer_delivered(self, steer_id: str) -> bool:
        return bool(
            self.execute(
                "UPDATE steering_events SET status = 'delivered', sent_at = ? "
                "WHERE steer_id = ? AND status = 'pending'",
                [self.now, steer_id],
            )
        )

    def expire_steer(self, steer_id: str, status: str, reason: str) -> bool:
        """Expire the steer if it is still ``status``."""
        return bool(
            self.execute(
                "UPDATE steering_events SET status = 'expired', status_reason = ? "
                "WHERE steer_id = ? AND status = ?",
                [reason, steer_id, status],
            )
        )
