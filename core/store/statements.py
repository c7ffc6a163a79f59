"""What every group of named reads and writes (`core/store/*`) runs its statements through.

The groups are mixins: the backend's store and transaction classes take them on and provide
these members, so a group's methods hold the SQL and the backend holds the connection.
"""

from __future__ import annotations

from typing import Any


class Statements:
    """What a group of named reads uses: the backend's store or transaction provides it."""

    def rows(self, sql: str, params: list[Any] | None = None) -> list[Any]:
        """Run a read and return its rows as dicts."""
        raise NotImplementedError  # the backend's store or transaction runs it


class Writes(Statements):
    """What a group of named writes uses: the backend's transaction provides it."""

    now: str
    """The transaction's timestamp: every row it writes carries the same time."""

    def execute(self, sql: str, params: list[Any]) -> int:
        """Run a write inside the transaction; how many rows it changed."""
        raise NotImplementedError  # the backend's transaction runs it
