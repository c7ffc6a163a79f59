"""Named reads of runs and of the journal: statements both backends run, as methods the store
(`RunReads`) takes on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.store.statements import Statements


class RunReads(Statements):
    """Which runs are where, and the journal consoles follow."""

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        found = self.rows("SELECT * FROM runs WHERE run_id = ?", [run_id])
        return found[0] if found else None

    def list_runs(
        self,
        *,
        states: tuple[str, ...] = (),
        lane: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Runs, most recently changed first."""
        where: list[str] = []
        params: list[Any] = []
        if states:
            where.append(f"state IN ({', '.join('?' for _ in states)})")
            params.extend(states)
        if lane:
            where.append("lane = ?")
            params.append(lane)
        sql = "SELECT * FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, run_id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self.rows(sql, params)

    def journal_since(
        self, seq: int, *, limit: int = 1000, run_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Journal entries after ``seq``, oldest first: the change feed consoles follow."""
        if run_id is None:
            return self.rows(
                "SELECT * FROM journal WHERE seq > ? ORDER BY seq LIMIT ?", [seq, limit]
            )
        return self.rows(
            "SELECT * FROM journal WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            [run_id, seq, limit],
        )

    def last_seq(self) -> int:
        return int(self.rows("SELECT COALESCE(MAX(seq), 0) AS seq FROM journal")[0]["seq"])

    def queued_runs(
        self, queued: str, limit: int, lanes: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` runs in state ``queued``, longest waiting first: ``run_id``, ``lane``
        (of ``lanes`` only, when given)."""
        if lanes is not None and not lanes:
            return []
        where = "" if lanes is None else f" AND lane IN ({', '.join('?' for _ in lanes)})"
        return self.rows(
            f"SELECT run_id, lane FROM runs WHERE state = ?{where} "
            "ORDER BY updated_at, run_id LIMIT ?",
            [queued, *(lanes or []), limit],
        )

    def states_of(self, run_ids: Sequence[str]) -> dict[str, str]:
        """Each named run's state, by run id (a run that does not exist has no entry)."""
        if not run_ids:
            return {}
        marks = ", ".join("?" for _ in run_ids)
        rows = self.rows(f"SELECT run_id, state FROM runs WHERE run_id IN ({marks})", list(run_ids))
        return {r["run_id"]: r["state"] for r in rows}

    def newest_run_ids(self, limit: int) -> list[str]:
        """The ``limit`` most recently created runs' ids, newest first."""
        rows = self.rows(
            "SELECT run_id FROM runs ORDER BY created_at DESC, run_id LIMIT ?", [limit]
        )
        return [str(r["run_id"]) for r in rows]

    def runs_from(self, source_lane: str, state: str) -> list[dict[str, Any]]:
        """Runs dispatched from ``source_lane`` now in ``state``: ``run_id``, ``dispatch_json``."""
        return self.rows(
            "SELECT run_id, dispatch_json FROM runs WHERE source_lane = ? AND state = ?",
            [source_lane, state],
        )

    def runs_in_scope(
        self,
        *,
        lane_like: str | None = None,
        lane: str | None = None,
        states: Sequence[str] = (),
        limit: int,
    ) -> list[dict[str, Any]]:
        """Whole runs of lanes matching ``lane_like`` (an SQL LIKE pattern) and/or ``lane``, in
        ``states`` when given, the most recently started (else created) first."""
        where: list[str] = []
        params: list[Any] = []
        if lane_like is not None:
            where.append("lane LIKE ?")
            params.append(lane_like)
        if lane is not None:
            where.append("lane = ?")
            params.append(lane)
        if states:
            where.append(f"state IN ({', '.join('?' for _ in states)})")
            params.extend(states)
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        return self.rows(
            f"SELECT * FROM runs {clause}"
            "ORDER BY COALESCE(started_at, created_at) DESC, run_id DESC LIMIT ?",
            [*params, limit],
        )

    def lanes_with_runs(self) -> set[str]:
        return {str(r["lane"]) for r in self.rows("SELECT DISTINCT lane FROM runs")}

    def change_signature(self) -> tuple[Any, ...]:
        """Something that changes whenever a run or a refusal does: the newest run change,
        how many runs there are, the newest refusal."""
        (row,) = self.rows(
            "SELECT (SELECT MAX(updated_at) FROM runs) AS runs, "
            "(SELECT COUNT(*) FROM runs) AS count, "
            "(SELECT MAX(id) FROM quarantined_files) AS refused"
        )
        return (row["runs"], row["count"], row["refused"])

    def run_ids_starting(self, prefix: str) -> list[str]:
        """Every run id that starts with ``prefix`` (taken literally)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self.rows("SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\'", [f"{escaped}%"])
        return [str(r["run_id"]) for r in rows]
