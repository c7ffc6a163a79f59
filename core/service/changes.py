"""Waking a live view when the store changes: LISTEN on PostgreSQL, nothing on SQLite (the view
polls). Through the front door, so a console never names a database driver."""

from __future__ import annotations

from core.store.changes import ChangeListener, listener_for

__all__ = ["ChangeListener", "listener_for"]
