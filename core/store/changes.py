"""Waking a reader when the store changes: PostgreSQL's LISTEN, else the reader's own poll.

A PostgreSQL writer announces every commit that journaled something (``NOTIFY jarvis_journal``
with the newest sequence number, `core.store.postgres_store`). A reader that waits on a
`ChangeListener` wakes as soon as one arrives, instead of at its next poll. The journal stays
the source of truth: a notification only says "read now". A commit before the LISTEN took
effect (the reader's first read came first, or the connection was being opened again) was
announced to nobody, so `listens` counts the LISTENs that took effect and the reader reads once
after each; its slower poll is only the last safety net. An SQLite store has nothing to listen
to; its listener only waits out the timeout, and the reader polls as before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.store.urls import is_postgres

if TYPE_CHECKING:  # psycopg is an optional extra: loaded only for a PostgreSQL store
    from psycopg import Connection


class ChangeListener:
    """Waits for the store's next change; this base class knows of none (SQLite)."""

    #: Whether a wake-up means a change (else the reader must poll at its usual pace).
    hears_changes = False
    #: Whether it may ever hear one (a thread waits on it then).
    may_hear = False
    #: How many LISTENs took effect: whatever was committed before the latest went unheard, so
    #: a reader reads once after it sees this grow.
    listens = 0

    def __init__(self) -> None:
        self._closed = threading.Event()

    def wait(self, timeout: float) -> int | None:
        """Block until a change is announced (its sequence number) or ``timeout`` passes (None)."""
        self._closed.wait(timeout)
        return None

    def close(self) -> None:
        self._closed.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


class PostgresListener(ChangeListener):
    """LISTEN on a connection of its own; opened again after the server drops it."""

    hears_changes = True
    may_hear = True

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._conn: Connection[Any] | None = None

    def _connection(self) -> Connection[Any]:
        import psycopg

        from core.store.postgres_store import CHANNEL

        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            conn.execute(f"LISTEN {CHANNEL}")  # in effect once this returns (autocommit)
            self._conn = conn
            self.listens += 1
        return conn

    def wait(self, timeout: float) -> int | None:
        """As `ChangeListener.wait`, with the newest of the notifications that arrived together;
        called from one thread. After `close` it drops its connection at its next return (never
        closed under a wait from another thread)."""
        import psycopg

        newest: int | None = None
        try:
            if not self._closed.is_set():
                conn = self._connection()
                # Read to the generator's end: it stops after the first read that brought any,
                # and leaving it early would drop the rest of that read, the newest among them.
                for note in conn.notifies(timeout=timeout, stop_after=1):
                    seq = int(note.payload) if note.payload.isdigit() else 0
                    newest = seq if newest is None else max(newest, seq)
        except psycopg.Error:
            # The server is away: the reader's poll meets the fault and says so; the next
            # wait opens the connection again.
            self._drop()
            self._closed.wait(min(timeout, 1.0))
        finally:
            if self._closed.is_set():
                self._drop()
        return newest

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def listener_for(location: str | Path) -> ChangeListener:
    """The listener for the store at ``location`` (`core.store.location`)."""
    if is_postgres(location):
        return PostgresListener(str(location))
    return ChangeListener()
