"""Paused lanes, and what each lane holds: the statements both backends run.

A paused lane is a row of ``lane_pauses``: while it is there no host claims the lane's queued
runs (`core.store.hosts.HostWrites.claim_queued` and `RunReads.queued_runs` leave them out),
and the lane's running runs go on to their end. The row is the pause: pausing inserts it (two
operators at once: one row, so one pause and one refusal), resuming deletes it.
"""

from __future__ import annotations

from typing import Any

from core.store.statements import Statements, Writes


def not_paused(alias: str = "runs") -> str:
    """The condition that the lane of the run row ``alias`` is not paused. Always qualified:
    a bare ``lane`` inside the subquery would be the pause's own column."""
    return f"NOT EXISTS (SELECT 1 FROM lane_pauses p WHERE p.lane = {alias}.lane)"


class LaneReads(Statements):
    """Paused lanes and each lane's runs by state, read."""

    def lane_pauses(self) -> list[dict[str, Any]]:
        """Every paused lane: ``lane``, ``reason``, ``paused_by``, ``paused_at``."""
        return self.rows("SELECT lane, reason, paused_by, paused_at FROM lane_pauses ORDER BY lane")

    def lane_state_counts(self) -> list[dict[str, Any]]:
        """How many runs each lane has in each state: ``lane``, ``state``, ``n``."""
        return self.rows(
            "SELECT lane, state, COUNT(*) AS n FROM runs GROUP BY lane, state ORDER BY lane, state"
        )


class LaneWrites(Writes):
    """Pausing and resuming a lane (inside a transaction)."""

    def pause_lane(self, lane: str, reason: str, operator: str) -> bool:
        """Pause ``lane``: False when it already was (the pause in place is kept)."""
        return (
            self.execute(
                "INSERT INTO lane_pauses (lane, reason, paused_by, paused_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (lane) DO NOTHING",
                [lane, reason, operator, self.now],
            )
            == 1
        )

    def resume_lane(self, lane: str) -> bool:
        """Resume ``lane``: False when it was not paused."""
        return self.execute("DELETE FROM lane_pauses WHERE lane = ?", [lane]) == 1

    def lane_pause(self, lane: str) -> dict[str, Any] | None:
        """``lane``'s pause as it is under this transaction's lock, or None."""
        rows = self.rows(
            "SELECT lane, reason, paused_by, paused_at FROM lane_pauses WHERE lane = ?", [lane]
        )
        return rows[0] if rows else None
