"""What a run's attempts produced — progress events, gate results, failures, the end of a
worker's stderr: the SQLite backend's statements, as methods its transactions take on
(`ResultWrites`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.store.statements import Writes, marks

_ARMS = 200
"""A statement's arms at most: SQLite takes 500 terms in a compound SELECT."""
_PARAMS = 20_000
"""A statement's parameters at most: SQLite takes 32,766, PostgreSQL 65,535."""


class ResultWrites(Writes):
    """An attempt's results, recorded (inside a transaction)."""

    def add_progress_event(
        self,
        run_id: str,
        attempt: int,
        seq: int,
        name: str,
        *,
        timestamp: str,
        at_utc: str,
        phase: str,
        summary: str,
        tool_used: str | None,
    ) -> bool:
        """Record one event unless its (run, attempt, file name) already is; whether it was
        new."""
        return bool(
            self.execute(
                "INSERT INTO progress_events (run_id, attempt, seq, name, timestamp, at_utc, "
                "phase, summary, tool_used, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                [
                    run_id,
                    attempt,
                    seq,
                    name,
                    timestamp,
                    at_utc,
                    phase,
                    summary,
                    tool_used,
                    self.now,
                ],
            )  # fmt: skip
        )

    def add_progress_events(self, rows: Sequence[Sequence[Any]]) -> None:
        """Events written together, each (run, attempt, seq, name, timestamp, at_utc, phase,
        summary, tool_used); one whose (run, attempt, name) is stored is left out."""
        self.execute_many(
            "INSERT INTO progress_events (run_id, attempt, seq, name, timestamp, at_utc, phase, "
            "summary, tool_used, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [[*row, self.now] for row in rows],
        )

    def stored_progress_names(self, run_id: str, attempt: int, names: Sequence[str]) -> set[str]:
        """Which of ``names`` the attempt has an event of (a read per 500 names)."""
        found: set[str] = set()
        for start in range(0, len(names), 500):
            chunk = list(names[start : start + 500])
            rows = self.rows(
                "SELECT name FROM progress_events WHERE run_id = ? AND attempt = ? "
                f"AND name IN ({marks(chunk)})",
                [run_id, attempt, *chunk],
            )
            found.update(str(row["name"]) for row in rows)
        return found

    def stored_progress_names_of(
        self, wanted: Mapping[tuple[str, int], Sequence[str]]
    ) -> dict[tuple[str, int], set[str]]:
        """For each (run, attempt), which of its names it has an event of: one statement for
        a batch's runs (an arm each, by the unique index), where `stored_progress_names` is
        one per run."""
        found: dict[tuple[str, int], set[str]] = {key: set() for key in wanted}
        arms: list[str] = []
        params: list[Any] = []
        for (run_id, attempt), names in wanted.items():
            for start in range(0, len(names), 500):
                chunk = list(names[start : start + 500])
                arms.append(
                    "SELECT run_id, attempt, name FROM progress_events "
                    f"WHERE run_id = ? AND attempt = ? AND name IN ({marks(chunk)})"
                )
                params += [run_id, attempt, *chunk]
                if len(arms) == _ARMS or len(params) > _PARAMS:
                    self._stored_names(arms, params, found)
                    arms, params = [], []
        if arms:
            self._stored_names(arms, params, found)
        return found

    def _stored_names(
        self, arms: list[str], params: list[Any], found: dict[tuple[str, int], set[str]]
    ) -> None:
        for row in self.rows(" UNION ALL ".join(arms), params):
            found[str(row["run_id"]), int(row["attempt"])].add(str(row["name"]))

    def add_gate_result(
        self,
        run_id: str,
        attempt: int,
        name: str,
        passed: bool,
        detail: str,
        status: str | None = None,
    ) -> None:
        """One gate's verdict on an attempt; ``status`` for the git gates (``not_checked``…)."""
        self.execute(
            "INSERT INTO gate_results (run_id, attempt, name, passed, detail, evaluated_at, "
            "status) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [run_id, attempt, name, int(passed), detail, self.now, status],
        )

    def add_failure(
        self,
        run_id: str,
        attempt: int,
        *,
        error_class: str,
        error_code: str,
        step_id: str,
        message: str,
        fingerprint: str,
    ) -> None:
        self.execute(
            "INSERT INTO failures (run_id, attempt, error_class, error_code, step_id, url, "
            "message, fingerprint, at) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?)",
            [run_id, attempt, error_class, error_code, step_id, message, fingerprint, self.now],
        )

    def keep_stderr(
        self, run_id: str, attempt: int, exit_code: int | None, tail: str, total_bytes: int
    ) -> None:
        """The end of an attempt's stderr, once (a second record of the attempt is ignored)."""
        self.execute(
            "INSERT INTO worker_stderr (run_id, attempt, exit_code, tail, total_bytes, at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [run_id, attempt, exit_code, tail, total_bytes, self.now],
        )
