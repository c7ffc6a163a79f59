"""Retention: the old history of finished runs removed, a batch per short transaction.

What a policy (`RetentionPolicy`, ``[store]`` of ``jarvis.toml``) lets go, and nothing else:

- progress events and journal entries of runs in a terminal state (``done``: the caller names
  it, `core.lifecycle.TERMINAL`) whose last update is older than the policy, each row itself
  older too (a row written for the run after its last update stays, and is kept for good once
  the walk below has passed the run). Live runs and runs waiting on an operator keep
  everything. The run row stays, with its last progress summary; ``run_retention`` sums per run
  what was removed and the span it covered.
- IPC receipts older than the policy whose file is gone: the caller checks the disk
  (`old_receipts`, then `remove_receipts`), since a receipt is what makes a file left by a
  crash between commit and unlink harmless when it is seen again.

Finished runs are walked in ``(updated_at, run_id)`` order from a mark per table
(``retention_marks``): a batch never scans runs already cleared, however many there are. The
journal's row of that table also holds its horizon: a batch raises it above the entries it
deletes before deleting them, in the same transaction, and the database refuses any delete at
or above it (and of a run not finished); a reader that asks for entries after a seq below it
learns that history was cut (`cut_below`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from core.store.statements import Statements, Writes, marks

Table = Literal["progress", "journal", "receipts"]
TABLES: Final[tuple[Table, ...]] = ("progress", "journal", "receipts")

#: Rows removed per transaction: the write lock is held for one batch, then let go.
BATCH_ROWS: Final = 1000
#: Finished runs looked at per batch (each may have no rows left).
BATCH_RUNS: Final = 200

#: Each walked table: its rows' table, its key, and the time column its span is read from.
_WALKED: Final = {
    "progress": ("progress_events", "id", "ingested_at"),
    "journal": ("journal", "seq", "at"),
}


@dataclass(frozen=True)
class RetentionPolicy:
    """Days of history kept per table; None keeps everything (the default)."""

    progress_days: int | None = None
    journal_days: int | None = None
    receipts_days: int | None = None

    def days(self, table: Table) -> int | None:
        return {
            "progress": self.progress_days,
            "journal": self.journal_days,
            "receipts": self.receipts_days,
        }[table]

    @property
    def removes_anything(self) -> bool:
        return any(self.days(table) is not None for table in TABLES)

    @classmethod
    def every_table(cls, days: int | None) -> RetentionPolicy:
        return cls(days, days, days)


def cutoff(now: str, days: int) -> str:
    """The store time ``days`` before ``now`` (both as the store writes times)."""
    moment = datetime.fromisoformat(now.replace("Z", "+00:00")) - timedelta(days=days)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Batch:
    """What one batch removed, and whether more may be waiting."""

    removed: int = 0
    more: bool = False


class RetentionReads(Statements):
    """What a store tells of retention: its horizon, a run's summary, what a policy would do."""

    def journal_horizon(self) -> int:
        """Every journal entry at or above this seq is kept (0: none was ever removed)."""
        found = self.rows("SELECT seq FROM retention_marks WHERE name = 'journal'")
        return int(found[0]["seq"]) if found else 0

    def cut_below(self, since_seq: int) -> int | None:
        """The horizon when entries after ``since_seq`` may have been removed, else None."""
        horizon = self.journal_horizon()
        return horizon if since_seq + 1 < horizon else None

    def retention_of(self, run_id: str) -> dict[str, Any] | None:
        """What retention removed of ``run_id``'s history (None: nothing)."""
        found = self.rows("SELECT * FROM run_retention WHERE run_id = ?", [run_id])
        return found[0] if found else None

    def removable(self, table: Literal["progress", "journal"], finished: str, before: str) -> int:
        """How many rows of ``table``, written before ``before``, belong to finished runs last
        updated before it."""
        name, _, at = _WALKED[table]
        return int(
            self.rows(
                f"SELECT COUNT(*) AS n FROM {name} x JOIN runs r ON r.run_id = x.run_id "
                f"WHERE r.state = ? AND r.updated_at < ? AND x.{at} < ?",
                [finished, before, before],
            )[0]["n"]
        )

    def old_receipts(self, before: str, skip: int, limit: int) -> list[str]:
        """Keys of receipts written before ``before``, oldest first, past the first ``skip``
        (those the caller kept, its files still on disk: every other one it removed)."""
        return [
            str(r["key"])
            for r in self.rows(
                "SELECT key FROM ipc_receipts WHERE at < ? ORDER BY at LIMIT ? OFFSET ?",
                [before, limit, skip],
            )
        ]

    def count_old_receipts(self, before: str, path: str | None = None) -> int:
        """Receipts written before ``before`` (with ``path``: of that file only)."""
        if path is None:
            sql, params = "SELECT COUNT(*) AS n FROM ipc_receipts WHERE at < ?", [before]
        else:
            sql = "SELECT COUNT(*) AS n FROM ipc_receipts WHERE at < ? AND key LIKE ? ESCAPE '!'"
            escaped = path.replace("!", "!!").replace("%", "!%").replace("_", "!_")
            params = [before, f"{escaped}:%"]
        return int(self.rows(sql, params)[0]["n"])


class RetentionWrites(RetentionReads, Writes):
    """Retention's deletions, each one batch inside the caller's (short) transaction."""

    def remove_history(
        self, table: Literal["progress", "journal"], finished: str, keep_days: int
    ) -> Batch:
        """Remove up to `BATCH_ROWS` rows of ``table`` of finished runs last updated more than
        ``keep_days`` before this transaction's time, in the walk's order."""
        name, key, at = _WALKED[table]
        before = cutoff(self.now, keep_days)
        (mark,) = self.rows(
            "SELECT seq, run_updated_at, run_id FROM retention_marks WHERE name = ?", [table]
        )
        runs = self.rows(
            "SELECT run_id, updated_at FROM runs WHERE state = ? AND updated_at < ? "
            "AND (updated_at > ? OR (updated_at = ? AND run_id > ?)) "
            "ORDER BY updated_at, run_id LIMIT ?",
            [finished, before, mark["run_updated_at"], mark["run_updated_at"], mark["run_id"],
             BATCH_RUNS],
        )  # fmt: skip
        batch = Batch(more=len(runs) == BATCH_RUNS)
        cleared: dict[str, Any] | None = None
        for run in runs:
            budget = BATCH_ROWS - batch.removed
            # Its rows' own times too: a row written for the run after its last update (a
            # refused file naming it) is not old, and stays.
            found = self.rows(
                f"SELECT {key} AS k, {at} AS at FROM {name} WHERE run_id = ? AND {at} < ? "
                f"ORDER BY {key} LIMIT ?",
                [run["run_id"], before, budget + 1],
            )
            doomed = found[:budget]
            if doomed:
                self._remove(table, run["run_id"], doomed, keep_days, mark)
                batch.removed += len(doomed)
            if len(found) > budget:
                batch.more = True  # this run has more: the mark stays before it
                break
            cleared = run
            if batch.removed >= BATCH_ROWS:
                batch.more = True
                break
        if cleared is not None:
            self.execute(
                "UPDATE retention_marks SET run_updated_at = ?, run_id = ? WHERE name = ?",
                [cleared["updated_at"], cleared["run_id"], table],
            )
        return batch

    def _remove(
        self,
        table: Literal["progress", "journal"],
        run_id: str,
        doomed: list[dict[str, Any]],
        keep_days: int,
        mark: dict[str, Any],
    ) -> None:
        name, key, _ = _WALKED[table]
        keys = [row["k"] for row in doomed]
        if table == "journal":
            # Raised first: the database refuses a delete at or above it.
            horizon = max(int(mark["seq"]), max(keys) + 1)
            self.execute("UPDATE retention_marks SET seq = ? WHERE name = 'journal'", [horizon])
            mark["seq"] = horizon
        self.execute(f"DELETE FROM {name} WHERE {key} IN ({marks(keys)})", keys)
        times = [str(row["at"]) for row in doomed]
        first, last = min(times), max(times)
        self.execute(
            "INSERT INTO run_retention (run_id, updated_at) VALUES (?, ?) "
            "ON CONFLICT (run_id) DO NOTHING",
            [run_id, self.now],
        )
        self.execute(
            f"UPDATE run_retention SET {table}_removed = {table}_removed + ?, "
            f"{table}_first_at = CASE WHEN {table}_first_at IS NULL OR {table}_first_at > ? "
            f"THEN ? ELSE {table}_first_at END, "
            f"{table}_last_at = CASE WHEN {table}_last_at IS NULL OR {table}_last_at < ? "
            f"THEN ? ELSE {table}_last_at END, "
            f"{table}_keep_days = ?, updated_at = ? WHERE run_id = ?",
            [len(keys), first, first, last, last, keep_days, self.now, run_id],
        )

    def remove_receipts(self, keys: list[str]) -> int:
        """Remove these receipts (the caller found each old and its file gone)."""
        if not keys:
            return 0
        return self.execute(f"DELETE FROM ipc_receipts WHERE key IN ({marks(keys)})", keys)
