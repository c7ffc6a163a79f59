"""Files the host refused (``quarantined_files``): the SQLite backend's statements, as methods
the store (`RefusalReads`) and its transactions (`RefusalReads`, `RefusalWrites`) take on."""

from __future__ import annotations

from typing import Any

from core.store.statements import Statements, Writes

_FIELDS = (
    "run_id, named_run, lane, code, message, original_path, stored_as, outcome, quarantined_at"
)
_WRITTEN = (*_FIELDS.split(", "), "target_jid")


class RefusalReads(Statements):
    """Refusals, read."""

    def refusal_reason_files(self) -> set[str]:
        """The names of every reason file already recorded."""
        return {r["reason_file"] for r in self.rows("SELECT reason_file FROM quarantined_files")}

    def refusals(
        self, *, run_id: str | None = None, unattached: bool = False, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Refused files, newest first: one run's, those of no known run, or all (see
        `core.run_views.quarantined_files` for the fields)."""
        where, params = "", []
        if run_id is not None:
            where, params = "WHERE run_id = ?", [run_id]
        elif unattached:
            where = "WHERE run_id IS NULL"
        return self.rows(
            f"SELECT {_FIELDS} FROM quarantined_files {where} ORDER BY id DESC LIMIT ?",
            [*params, limit],
        )

    def lane_refusals(self, lane: str | None, limit: int) -> list[dict[str, Any]]:
        """Refused files found in ``lane``'s folder (every lane's when None), newest first:
        ``quarantined_at``, ``lane``, ``code``, ``message``, ``named_run``, ``original_path``,
        ``target_jid``."""
        where, params = ("WHERE lane = ? ", [lane]) if lane is not None else ("", [])
        return self.rows(
            "SELECT quarantined_at, lane, code, message, named_run, original_path, target_jid "
            f"FROM quarantined_files {where}ORDER BY id DESC LIMIT ?",
            [*params, limit],
        )

    def refusal_count(self, run_id: str) -> int:
        return int(
            self.rows("SELECT COUNT(*) AS n FROM quarantined_files WHERE run_id = ?", [run_id])[0][
                "n"
            ]
        )

    def refusal_counts(self, since: str) -> dict[str, int]:
        """How many files were refused at or after ``since`` (ISO text), and how many of no
        run."""
        row = self.rows(
            "SELECT COUNT(*) AS total, "
            "COALESCE(SUM(CASE WHEN run_id IS NULL THEN 1 ELSE 0 END), 0) AS unattached "
            "FROM quarantined_files WHERE quarantined_at >= ?",
            [since],
        )[0]
        return {"total": int(row["total"]), "unattached": int(row["unattached"])}


class RefusalWrites(Writes):
    """A refusal, recorded (inside a transaction)."""

    def record_refusal(self, reason_file: str, fields: dict[str, Any]) -> bool:
        """Record one refused file under its reason file's name, unless it already is; whether
        it was new. ``fields``: ``run_id``, ``named_run``, ``lane``, ``code``, ``message``,
        ``original_path``, ``stored_as``, ``outcome``, ``quarantined_at``, and optionally
        ``target_jid``."""
        return bool(
            self.execute(
                "INSERT INTO quarantined_files (reason_file, run_id, named_run, lane, code, "
                "message, original_path, stored_as, outcome, quarantined_at, target_jid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (reason_file) DO NOTHING",
                [reason_file, *(fields.get(k) for k in _WRITTEN)],
            )
        )
