"""Steers waiting to be delivered or expired: the SQLite backend's statements, as methods the
store (`SteerReads`) and its transactions (`SteerWrites`) take on (core/host/steering.py moves
them; docs/lifecycle.md gives the receipts)."""

from __future__ import annotations

from typing import Any

from core.store.statements import Statements, Writes


class SteerReads(Statements):
    """Steers the host has to act on."""

    def steers_to_deliver(self, running: str) -> list[dict[str, Any]]:
        """Pending steers of runs in state ``running`` that have none delivered and waiting,
        oldest first (in the order they were recorded), with each run's lane."""
        return self.rows(
            "SELECT s.steer_id, s.run_id, s.message, s.operator, r.lane FROM steering_events s "
            "JOIN runs r ON r.run_id = s.run_id "
            "WHERE s.status = 'pending' AND r.state = ? AND NOT EXISTS ("
            "  SELECT 1 FROM steering_events d "
            "  WHERE d.run_id = s.run_id AND d.status = 'delivered')"
            # rowid keeps the order steers were recorded in, even within one millisecond.
            " ORDER BY s.created_at, s.rowid",
            [running],
        )

    def steers_to_expire(self, sent_before: str, running: str) -> list[dict[str, Any]]:
        """Delivered steers sent before ``sent_before``, and pending or delivered steers of runs
        no longer ``running``, each with its run's state and lane."""
        return self.rows(
            "SELECT s.steer_id, s.run_id, s.status, s.sent_at, r.state, r.lane "
            "FROM steering_events s JOIN runs r ON r.run_id = s.run_id "
            "WHERE (s.status = 'delivered' AND s.sent_at < ?) "
            "   OR (s.status IN ('pending', 'delivered') AND r.state != ?)",
            [sent_before, running],
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
