"""A run's verification of its criteria: which runs are due, the criterion command a host left
running, and the results kept — the SQLite backend's statements, as methods the store
(`VerificationReads`) and its transactions (`VerificationReads`, `VerificationWrites`) take
on. `core.criteria.run_criteria` is what the engine calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.store.hosts import held_by
from core.store.statements import Statements, Writes


class VerificationReads(Statements):
    """Verification, read."""

    def runs_in_stages(
        self, state: str, stages: Sequence[str], host: str | None = None
    ) -> list[str]:
        """Runs in ``state`` whose ``verification_state`` is one of ``stages``, longest
        unchanged first (of ``host``'s runs when given: `core.store.hosts.held_by`)."""
        marks = ", ".join("?" for _ in stages)
        rows = self.rows(
            f"SELECT run_id FROM runs r WHERE state = ? AND verification_state IN ({marks})"
            f"{held_by(host)} ORDER BY updated_at, run_id",
            [state, *stages, *([host] if host else [])],
        )
        return [str(row["run_id"]) for row in rows]

    def command_groups_left(self, host: str | None = None) -> list[tuple[str, int]]:
        """``(run_id, pgid)`` of every criterion command a host recorded as running (of
        ``host``'s runs when given)."""
        rows = self.rows(
            f"SELECT run_id, verify_pgid FROM runs r WHERE verify_pgid IS NOT NULL{held_by(host)}",
            [host] if host else [],
        )
        return [(str(r["run_id"]), int(r["verify_pgid"])) for r in rows]

    def latest_verification_results(self, run_id: str) -> dict[str, Any] | None:
        """The run's latest results row: ``id``, ``attempt``, ``results_json``."""
        found = self.rows(
            "SELECT id, attempt, results_json FROM verification_results WHERE run_id = ? "
            "ORDER BY id DESC LIMIT 1",
            [run_id],
        )
        return dict(found[0]) if found else None


class VerificationWrites(Writes):
    """Verification, written (inside a transaction)."""

    def set_command_group(self, run_id: str, pgid: int | None) -> None:
        """Which process group runs the run's criterion command now (None: none)."""
        self.execute("UPDATE runs SET verify_pgid = ? WHERE run_id = ?", [pgid, run_id])

    def add_verification_results(
        self, run_id: str, attempt: int, results_json: str, verified_at: str
    ) -> None:
        self.execute(
            "INSERT INTO verification_results (run_id, attempt, results_json, verified_at) "
            "VALUES (?, ?, ?, ?)",
            [run_id, attempt, results_json, verified_at],
        )

    def replace_verification_results(self, results_id: int, results_json: str) -> None:
        self.execute(
            "UPDATE verification_results SET results_json = ? WHERE id = ?",
            [results_json, results_id],
        )
