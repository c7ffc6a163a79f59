"""Tokens and cost a run's agent reported: kept per attempt, summed per run and per workspace.

An agent's adapter reports cumulative figures for its attempt with its progress events
(``usage``, docs/ipc.md); the latest event's figures stand, so files ingested out of order
never move a figure backwards. "Latest" is the attempt's order of events: by time (``at_utc``,
the timestamp as fixed-width UTC text), then seq, then file name. Not seq alone: NanoClaw's
worker starts seq again at 0 for each query of an attempt.

The SQLite backend's statements, as methods the store (`UsageReads`) and its transactions
(`UsageReads`, `UsageWrites`) take on; callers name the read or write, never the SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from core.store.statements import Statements, Writes


class UsageFigures(Protocol):
    @property
    def tokens_in(self) -> int: ...
    @property
    def tokens_out(self) -> int: ...
    @property
    def cost_usd(self) -> float: ...


def _totals(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "tokens_in": int(row["tokens_in"]),
        "tokens_out": int(row["tokens_out"]),
        "cost_usd": round(float(row["cost_usd"]), 6),
    }


class UsageReads(Statements):
    """What runs' agents reported, read."""

    def run_usage(self, run_id: str) -> dict[str, Any] | None:
        """The run's totals over its attempts, or None when its agent reported nothing."""
        return self.usage_by_run([run_id]).get(run_id)

    def usage_by_run(self, run_ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Each run's totals over its attempts, by run id, in one query: of ``run_ids`` (None:
        every run). A run whose agent reported nothing has no entry."""
        where, params = "", list(run_ids or ())
        if run_ids is not None:
            if not params:
                return {}
            where = f"WHERE run_id IN ({', '.join('?' for _ in params)}) "
        rows = self.rows(
            "SELECT run_id, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out, "
            f"SUM(cost_usd) AS cost_usd FROM run_usage {where}GROUP BY run_id",
            params,
        )
        return {row["run_id"]: _totals(row) for row in rows}

    def attempt_usage(self, run_ids: Sequence[str]) -> dict[str, Any]:
        """Each running run's current attempt's figures (what its budget is checked against)."""
        if not run_ids:
            return {}
        marks = ", ".join("?" for _ in run_ids)
        rows = self.rows(
            f"SELECT u.run_id, u.tokens_in, u.tokens_out, u.cost_usd FROM run_usage u "
            f"JOIN runs r ON r.run_id = u.run_id AND u.attempt = r.retry_count + 1 "
            f"WHERE u.run_id IN ({marks})",
            list(run_ids),
        )
        return {r["run_id"]: r for r in rows}

    def workspace_usage(self) -> dict[str, Any]:
        """Every run's figures together: the fleet's burn."""
        row = self.rows(
            "SELECT COALESCE(SUM(tokens_in), 0) AS tokens_in, "
            "COALESCE(SUM(tokens_out), 0) AS tokens_out, "
            "COALESCE(SUM(cost_usd), 0) AS cost_usd FROM run_usage"
        )[0]
        return _totals(row)

    def workspace_worked(self) -> tuple[float, list[str]]:
        """Seconds every run's workers have worked in ended attempts, and when each attempt at
        work now began (``started_at`` of runs running and not yet in verification)."""
        ended = self.rows("SELECT COALESCE(SUM(worked_s), 0) AS s FROM runs")[0]["s"]
        live = self.rows(
            "SELECT started_at FROM runs WHERE state = 'running' "
            "AND verification_state IS NULL AND started_at IS NOT NULL"
        )
        return float(ended), [r["started_at"] for r in live]


class UsageWrites(Writes):
    """What an agent reported, kept (inside a transaction)."""

    def record_usage(
        self,
        run_id: str,
        attempt: int,
        seq: int,
        usage: UsageFigures,
        *,
        at_utc: str = "",
        name: str = "",
    ) -> None:
        """Keep ``usage`` as the attempt's figures unless a later event's already stand.

        ``at_utc``, ``seq`` and ``name`` place the event in its attempt (by that order).
        """
        self.execute(
            "INSERT INTO run_usage (run_id, attempt, seq, at_utc, name, tokens_in, tokens_out, "
            "cost_usd, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, attempt) DO UPDATE SET "
            "seq = excluded.seq, at_utc = excluded.at_utc, name = excluded.name, "
            "tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out, "
            "cost_usd = excluded.cost_usd, updated_at = excluded.updated_at "
            "WHERE (excluded.at_utc, excluded.seq, excluded.name) "
            "> (run_usage.at_utc, run_usage.seq, run_usage.name)",
            [run_id, attempt, seq, at_utc, name, usage.tokens_in, usage.tokens_out,
             usage.cost_usd, self.now],
        )  # fmt: skip
