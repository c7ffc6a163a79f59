"""The notifications' mark: how far the fleet's notifications have read the journal.

One row per notifier (``name``; the host's webhook is ``webhook``). A host claims the journal's
next stretch by moving the mark from the value it read to the stretch's end in one statement:
on a store shared by many hosts only one move succeeds, and only that host tells of the
stretch's transitions (`core.host.notifier`).
"""

from __future__ import annotations

from typing import Any

from core.store.statements import Statements, Writes


class NotifyReads(Statements):
    def notify_mark(self, name: str) -> int | None:
        """The journal's seq up to which ``name`` claimed entries; None before its first."""
        found = self.rows("SELECT seq FROM notify_marks WHERE name = ?", [name])
        return int(found[0]["seq"]) if found else None

    def transitions_between(self, after: int, upto: int) -> list[dict[str, Any]]:
        """The journal's transitions with ``after < seq <= upto``, oldest first (their payload
        as stored: JSON text)."""
        return self.rows(
            "SELECT seq, run_id, kind, payload, at FROM journal "
            "WHERE seq > ? AND seq <= ? AND kind = 'transition' ORDER BY seq",
            [after, upto],
        )


class NotifyWrites(NotifyReads, Writes):
    def start_notify_mark(self, name: str, seq: int) -> None:
        """Put ``name``'s mark at ``seq`` unless it has one (the first host to start sets it at
        the journal's end: what happened before is not news)."""
        self.execute(
            "INSERT INTO notify_marks (name, seq) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            [name, seq],
        )

    def claim_notified(self, name: str, after: int, upto: int) -> bool:
        """Move ``name``'s mark from ``after`` to ``upto``: True when this moved it (the
        entries between are the caller's to tell of), False when another got there first."""
        return (
            self.execute(
                "UPDATE notify_marks SET seq = ? WHERE name = ? AND seq = ?", [upto, name, after]
            )
            == 1
        )
