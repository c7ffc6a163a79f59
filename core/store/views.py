"""What `core.run_views` shows of runs — one run's history, a run table's summaries, the
journal: the SQLite backend's statements, as methods the store takes on (`ViewReads`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.store.statements import Statements, Where, marks

#: SQLite binds at most 32,766 parameters; reads by id go in chunks well under that.
CHUNK = 500

_GATE_TOTALS = (
    "SELECT g.run_id, "
    "SUM(CASE WHEN g.passed != 0 AND COALESCE(g.status, '') != 'not_checked' THEN 1 ELSE 0 END)"
    " AS passed, "
    "SUM(CASE WHEN COALESCE(g.status, '') = 'not_checked' THEN 1 ELSE 0 END) AS not_checked, "
    "COUNT(*) AS total FROM gate_results g "
    "JOIN (SELECT run_id, MAX(attempt) AS attempt FROM gate_results {inner} GROUP BY run_id) "
    "latest ON latest.run_id = g.run_id AND latest.attempt = g.attempt {where} GROUP BY g.run_id"
)


class ViewReads(Statements):
    """Reads for operators' views: bounded, and a fixed number of queries per call."""

    # -- one run ------------------------------------------------------------------------------

    def gate_results(self, run_id: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT attempt, name, passed, status, detail, evaluated_at FROM gate_results "
            "WHERE run_id = ? ORDER BY attempt, id",
            [run_id],
        )

    def steers_of(self, run_id: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT steer_id, message, operator, status, status_reason, created_at, sent_at, "
            "acked_at FROM steering_events WHERE run_id = ? ORDER BY created_at, steer_id",
            [run_id],
        )

    def recent_events(self, run_id: str, limit: int) -> list[dict[str, Any]]:
        """The run's newest ``limit`` progress events, newest first: an attempt's events in
        their order (time, then seq, then file name), the latest attempt's first."""
        return self.rows(
            "SELECT attempt, seq, timestamp, phase, summary, tool_used FROM progress_events "
            "WHERE run_id = ? ORDER BY attempt DESC, at_utc DESC, seq DESC, name DESC LIMIT ?",
            [run_id, limit],
        )

    def event_count(self, run_id: str) -> int:
        """How many progress events the run has, over every attempt."""
        found = self.rows("SELECT COUNT(*) AS n FROM progress_events WHERE run_id = ?", [run_id])
        return int(found[0]["n"])

    def failures_of(self, run_id: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT attempt, error_class, error_code, step_id, url, message, fingerprint, at "
            "FROM failures WHERE run_id = ? ORDER BY id",
            [run_id],
        )

    def audit_of(self, run_id: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT actor, action, from_state, to_state, reason, at FROM audit "
            "WHERE run_id = ? ORDER BY id",
            [run_id],
        )

    def latest_verification(self, run_id: str) -> dict[str, Any] | None:
        """The run's latest ``verification_results`` row (``attempt``, ``results_json``)."""
        found = self.rows(
            "SELECT attempt, results_json FROM verification_results WHERE run_id = ? "
            "ORDER BY id DESC LIMIT 1",
            [run_id],
        )
        return dict(found[0]) if found else None

    def stderr_of(self, run_id: str) -> list[dict[str, Any]]:
        """The end of each attempt's stderr, oldest attempt first."""
        return self.rows(
            "SELECT attempt, exit_code, tail, total_bytes, at FROM worker_stderr "
            "WHERE run_id = ? ORDER BY attempt",
            [run_id],
        )

    def fingerprint_peers(self, run_id: str) -> list[dict[str, Any]]:
        """Each distinct failure fingerprint of the run, newest first, with how many other
        runs failed with it."""
        return self.rows(
            "SELECT f.fingerprint, f.error_class, f.error_code, MAX(f.at) AS at, "
            "  (SELECT COUNT(DISTINCT o.run_id) FROM failures o "
            "   WHERE o.fingerprint = f.fingerprint AND o.run_id != ?) AS other_runs "
            "FROM failures f WHERE f.run_id = ? "
            "GROUP BY f.fingerprint, f.error_class, f.error_code ORDER BY MAX(f.id) DESC",
            [run_id, run_id],
        )

    # -- many runs ----------------------------------------------------------------------------

    def runs_by_id(
        self, run_ids: Sequence[str] | None, columns: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Runs: the named ones (in chunks), or every run, newest first; whole, or only
        ``columns`` (a table's summary: never a dispatch's JSON it does not show).

        Raises:
            ValueError: ``columns`` names one that is not a column of ``runs``.
        """
        picked = "*" if columns is None else ", ".join(_run_columns(columns))
        if run_ids is None:
            return self.rows(f"SELECT {picked} FROM runs ORDER BY created_at DESC, run_id")
        found: list[dict[str, Any]] = []
        for chunk in _chunks(run_ids):
            found += self.rows(f"SELECT {picked} FROM runs WHERE run_id IN ({marks(chunk)})",
                               chunk)  # fmt: skip
        return found

    def steer_counts(self, run_ids: Sequence[str] | None) -> list[dict[str, Any]]:
        """``run_id``, ``status``, ``n``: how many of each run's steers are in each status."""
        if run_ids is None:
            return self.rows(
                "SELECT run_id, status, COUNT(*) AS n FROM steering_events GROUP BY run_id, status"
            )
        found: list[dict[str, Any]] = []
        for chunk in _chunks(run_ids):
            found += self.rows(
                "SELECT run_id, status, COUNT(*) AS n FROM steering_events "
                f"WHERE run_id IN ({marks(chunk)}) GROUP BY run_id, status",
                chunk,
            )
        return found

    def gate_totals(self, run_ids: Sequence[str] | None) -> list[dict[str, Any]]:
        """Each run's latest gated attempt: ``passed``, ``not_checked`` and ``total`` gates."""
        if run_ids is None:
            return self.rows(_GATE_TOTALS.format(inner="", where=""))
        found: list[dict[str, Any]] = []
        for chunk in _chunks(run_ids):
            listed = marks(chunk)
            found += self.rows(
                _GATE_TOTALS.format(
                    inner=f"WHERE run_id IN ({listed})", where=f"WHERE g.run_id IN ({listed})"
                ),
                chunk + chunk,
            )
        return found

    def state_counts(self) -> dict[str, int]:
        """How many runs are in each state: the counts the store keeps as runs change
        (``run_counts``), not a count of every run."""
        rows = self.rows("SELECT state, n FROM run_counts WHERE n > 0")
        return {str(row["state"]): int(row["n"]) for row in rows}

    def recount_states(self) -> dict[str, int]:
        """How many runs are in each state, counted from every run: what ``run_counts`` must
        always equal (a check, and the benchmark's baseline)."""
        rows = self.rows("SELECT state, COUNT(*) AS n FROM runs GROUP BY state")
        return {str(row["state"]): int(row["n"]) for row in rows}

    def journal_span(self) -> dict[str, Any]:
        """When the journal's first and last entries were written (``first``, ``last``)."""
        return dict(self.rows("SELECT MIN(at) AS first, MAX(at) AS last FROM journal")[0])

    def progress_event_count(self) -> int:
        return int(self.rows("SELECT COUNT(*) AS n FROM progress_events")[0]["n"])

    def most_shared_fingerprint(self) -> dict[str, Any] | None:
        """The failure fingerprint most runs share (``fingerprint``, ``error_code``, ``runs``)."""
        found = self.rows(
            "SELECT fingerprint, error_code, COUNT(DISTINCT run_id) AS runs FROM failures "
            "GROUP BY fingerprint, error_code ORDER BY runs DESC, fingerprint LIMIT 1"
        )
        return dict(found[0]) if found else None

    def journal_page(
        self, run_id: str | None, *, limit: int, before_seq: int | None = None
    ) -> list[dict[str, Any]]:
        """The newest ``limit`` journal entries (of one run, or all) before ``before_seq``,
        newest first."""
        where = Where()
        if run_id is not None:
            where.add("run_id = ?", run_id)
        if before_seq is not None:
            where.add("seq < ?", before_seq)
        return self.rows(
            f"SELECT * FROM journal{where} ORDER BY seq DESC LIMIT ?", [*where.params, limit]
        )


_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def _run_columns(columns: Sequence[str]) -> Sequence[str]:
    """``columns``, each a plain column name: they are written into the statement."""
    for column in columns:
        if not _NAME.fullmatch(column):
            raise ValueError(f"not a column name: {column!r}")
    return columns


def _chunks(items: Sequence[str]) -> list[list[str]]:
    ordered = sorted(set(items))
    return [ordered[i : i + CHUNK] for i in range(0, len(ordered), CHUNK)]
