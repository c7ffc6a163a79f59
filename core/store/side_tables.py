"""A transaction's writes and reads beside the run row — the journal, the audit trail, receipts,
idempotency keys, sessions, new steers: statements both backends run, as methods their
transactions take on (`SideTables`). The journal's own append is the backend's (it returns the
entry's number its own way)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.store.statements import Writes, marks


class SideTables(Writes):
    """Rows beside the run, inside a transaction."""

    def has_receipt(self, key: str) -> bool:
        return bool(self.rows("SELECT 1 AS found FROM ipc_receipts WHERE key = ?", [key]))

    def put_receipt(self, key: str, lane: str, kind: str) -> None:
        self.execute(
            "INSERT INTO ipc_receipts (key, lane, kind, at) VALUES (?, ?, ?, ?)",
            [key, lane, kind, self.now],
        )

    def take_receipt(self, key: str, lane: str, kind: str) -> bool:
        """Write a file's receipt unless it is already there: whether it was new (one statement
        where `has_receipt` and `put_receipt` are two: the ingest hot path's)."""
        return bool(
            self.execute(
                "INSERT INTO ipc_receipts (key, lane, kind, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key) DO NOTHING",
                [key, lane, kind, self.now],
            )
        )

    def put_receipts(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Receipts (key, lane, kind) written together, those already there left as they are."""
        self.execute_many(
            "INSERT INTO ipc_receipts (key, lane, kind, at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            [[key, lane, kind, self.now] for key, lane, kind in rows],
        )

    def stored_receipts(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` have a receipt (a read per 500 keys)."""
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            rows = self.rows(f"SELECT key FROM ipc_receipts WHERE key IN ({marks(chunk)})", chunk)
            found.update(str(row["key"]) for row in rows)
        return found

    def drop_receipt(self, key: str) -> None:
        """Take back a receipt written in this transaction for a file that is then refused."""
        self.execute("DELETE FROM ipc_receipts WHERE key = ?", [key])

    def audit(
        self,
        run_id: str,
        *,
        actor: str,
        action: str,
        from_state: str | None,
        to_state: str | None,
        reason: str | None = None,
    ) -> None:
        self.execute(
            "INSERT INTO audit (run_id, actor, action, from_state, to_state, reason, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [run_id, actor, action, from_state, to_state, reason, self.now],
        )

    def get_idempotency(self, key: str) -> dict[str, Any] | None:
        found = self.rows("SELECT * FROM idempotency_keys WHERE key = ?", [key])
        return found[0] if found else None

    def put_idempotency(self, key: str, payload_hash: str, run_id: str) -> None:
        self.execute(
            "INSERT INTO idempotency_keys (key, payload_hash, run_id, created_at) "
            "VALUES (?, ?, ?, ?)",
            [key, payload_hash, run_id, self.now],
        )

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        found = self.rows("SELECT * FROM sessions WHERE session_id = ?", [session_id])
        return found[0] if found else None

    def put_session(self, session_id: str, lane: str, run_id: str) -> None:
        self.execute(
            "INSERT INTO sessions (session_id, lane, last_run_id, last_used_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET lane = excluded.lane, "
            "last_run_id = excluded.last_run_id, last_used_at = excluded.last_used_at",
            [session_id, lane, run_id, self.now],
        )

    def add_steer(self, steer_id: str, run_id: str, message: str, operator: str) -> None:
        self.execute(
            "INSERT INTO steering_events (steer_id, run_id, message, operator, status, created_at) "
            "VALUES (?, ?, ?, ?, 'pending', ?)",
            [steer_id, run_id, message, operator, self.now],
        )
