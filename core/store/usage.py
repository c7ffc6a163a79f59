"""Tokens and cost a run's agent reported: kept per attempt, summed per run and per workspace.

An agent's adapter reports cumulative figures for its attempt with its progress events
(``usage``, docs/ipc.md). They are taken in the order they arrive, and each figure keeps the
largest value reported: a cumulative figure only grows, so files ingested out of order never
move it backwards, and no event can pin the figures by its own claims (a timestamp in 2099
once kept a run's cost at $0 while its agent reported $50). Figures are bounded at ingest
(`core.ipc.payloads.Usage`), and sums are taken in floating point, so no store of any size
overflows adding them up. A report that could not be read marks the attempt (``unreadable``,
with why): its figures are unknown, and no budget on them can be passed.

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
    @property
    def cost_computed(self) -> bool: ...


def _totals(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "tokens_in": round(float(row["tokens_in"])),
        "tokens_out": round(float(row["tokens_out"])),
        "cost_usd": round(float(row["cost_usd"]), 6),
        "cost_computed": bool(row.get("cost_computed")),
    }


#: Sums in floating point (in both dialects): an integer SUM overflows SQLite's 64 bits.
_SUMS = (
    "SUM(CAST(tokens_in AS DOUBLE PRECISION)) AS tokens_in, "
    "SUM(CAST(tokens_out AS DOUBLE PRECISION)) AS tokens_out, "
    "SUM(cost_usd) AS cost_usd"
)


def _larger(column: str) -> str:
    """The larger of the stored and the arriving figure (portable: no MAX/GREATEST of two)."""
    return (
        f"{column} = CASE WHEN excluded.{column} > run_usage.{column} "
        f"THEN excluded.{column} ELSE run_usage.{column} END"
    )


class UsageReads(Statements):
    """What runs' agents reported, read."""

    def run_usage(self, run_id: str) -> dict[str, Any] | None:
        """The run's totals over its attempts, or None when its agent reported nothing."""
        return self.usage_by_run([run_id]).get(run_id)

    def usage_by_run(self, run_ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Each run's totals over its attempts, by run id, in one query: of ``run_ids`` (None:
        every run). A run whose agent reported nothing has no entry. ``unreadable``: why one
        of its attempts' usage could not be read, else None."""
        where, params = "", list(run_ids or ())
        if run_ids is not None:
            if not params:
                return {}
            where = f"WHERE run_id IN ({', '.join('?' for _ in params)}) "
        rows = self.rows(
            f"SELECT run_id, {_SUMS}, MAX(cost_computed) AS cost_computed, "
            "MAX(unreadable) AS unreadable FROM run_usage "
            f"{where}GROUP BY run_id",
            params,
        )
        return {row["run_id"]: {**_totals(row), "unreadable": row["unreadable"]} for row in rows}

    def attempt_usage(self, run_ids: Sequence[str]) -> dict[str, Any]:
        """Each running run's current attempt's figures (what its budget is checked against),
        with ``unreadable``: why some report of it could not be read, else None."""
        if not run_ids:
            return {}
        marks = ", ".join("?" for _ in run_ids)
        rows = self.rows(
            "SELECT u.run_id, u.tokens_in, u.tokens_out, u.cost_usd, u.cost_computed, "
            "u.unreadable "
            "FROM run_usage u "
            f"JOIN runs r ON r.run_id = u.run_id AND u.attempt = r.retry_count + 1 "
            f"WHERE u.run_id IN ({marks})",
            list(run_ids),
        )
        return {r["run_id"]: r for r in rows}

    def workspace_usage(self) -> dict[str, Any]:
        """Every run's figures together, what could be read of them: the fleet's burn, as the
        store keeps it (``usage_totals``, summed as figures change), not summed from every
        attempt's row."""
        row = self.rows(
            "SELECT tokens_in, tokens_out, cost_usd, cost_computed_rows > 0 AS cost_computed "
            "FROM usage_totals"
        )[0]
        return _totals(row)

    def workspace_usage_summed(self) -> dict[str, Any]:
        """`workspace_usage` summed from every attempt's row: what the kept totals must equal
        (a check, and the benchmark's baseline)."""
        row = self.rows(f"SELECT {_SUMS}, MAX(cost_computed) AS cost_computed FROM run_usage")[0]
        return _totals({key: value or 0 for key, value in row.items()})

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
        """Take ``usage`` into the attempt's figures: each keeps the largest value reported,
        and whether the cost was computed follows the cost that stands.

        ``seq``, ``at_utc`` and ``name`` record the report that arrived last (for people
        reading the row; they decide nothing).
        """
        self.execute(
            "INSERT INTO run_usage (run_id, attempt, seq, at_utc, name, tokens_in, tokens_out, "
            "cost_usd, cost_computed, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, attempt) DO UPDATE SET "
            "seq = excluded.seq, at_utc = excluded.at_utc, name = excluded.name, "
            f"{_larger('tokens_in')}, {_larger('tokens_out')}, "
            # Every SET reads the row as it was: the flag of the cost that stands.
            "cost_computed = CASE WHEN excluded.cost_usd >= run_usage.cost_usd "
            "THEN excluded.cost_computed ELSE run_usage.cost_computed END, "
            f"{_larger('cost_usd')}, updated_at = excluded.updated_at",
            [run_id, attempt, seq, at_utc, name, usage.tokens_in, usage.tokens_out,
             usage.cost_usd, int(usage.cost_computed), self.now],
        )  # fmt: skip

    def record_unreadable_usage(self, run_id: str, attempt: int, seq: int, why: str) -> None:
        """Mark the attempt's usage as not all read, saying why (the first reason stands)."""
        self.execute(
            "INSERT INTO run_usage (run_id, attempt, seq, tokens_in, tokens_out, cost_usd, "
            "updated_at, unreadable) VALUES (?, ?, ?, 0, 0, 0, ?, ?) "
            "ON CONFLICT (run_id, attempt) DO UPDATE SET "
            "unreadable = COALESCE(run_usage.unreadable, excluded.unreadable), "
            "updated_at = excluded.updated_at",
            [run_id, attempt, seq, self.now, why],
        )
