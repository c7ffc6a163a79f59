"""What every group of named reads and writes (`core/store/*`) runs its statements through.

The groups are mixins: the backend's store and transaction classes take them on and provide
these members, so a group's methods hold the SQL and the backend holds the connection. Every
backend binds a statement's parameters through `bound`, which holds the one rule for text that
the backends would otherwise take differently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

#: What a NUL in stored text becomes: U+FFFD, the character that stands for one that could not
#: be kept. PostgreSQL refuses a NUL in a text value, which SQLite keeps; replacing it on both
#: makes a worker's text stored, and read back, the same whichever backend holds it.
NUL_STAND_IN: Final = "\ufffd"


def bound(params: Sequence[Any]) -> list[Any]:
    """A statement's parameters as every backend binds them: each NUL in a text `NUL_STAND_IN`.

    Reads as well as writes, so a lookup by a text holding a NUL finds what was stored under it.
    """
    return [
        p.replace("\x00", NUL_STAND_IN) if isinstance(p, str) and "\x00" in p else p for p in params
    ]


def without_nul(value: Any) -> Any:
    """``value`` (JSON-like) with each NUL in its strings, keys too, `NUL_STAND_IN`: what the
    store writes as a journal payload, whose JSON would keep a NUL as ``\\u0000``."""
    if isinstance(value, str):
        return value.replace("\x00", NUL_STAND_IN)
    if isinstance(value, Mapping):
        return {without_nul(key): without_nul(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_nul(item) for item in value]
    return value


def marks(values: Sequence[Any]) -> str:
    """One ``?`` per value, for an ``IN (…)`` list."""
    return ", ".join("?" for _ in values)


class Where:
    """A read's WHERE clause made of the conditions that apply, and their parameters in order:
    ``f"SELECT … FROM runs{where} ORDER BY …"`` with ``where.params`` (no condition, no clause)."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.params: list[Any] = []

    def add(self, condition: str, *params: Any) -> Where:
        """``condition`` (its ``?`` bound to ``params``), ANDed with the others."""
        self.terms.append(condition)
        self.params.extend(params)
        return self

    def among(self, column: str, values: Sequence[Any]) -> Where:
        """``column IN (values)``; no condition at all when ``values`` is empty."""
        return self.add(f"{column} IN ({marks(values)})", *values) if values else self

    def __str__(self) -> str:
        return f" WHERE {' AND '.join(self.terms)}" if self.terms else ""


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

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one write for each of ``rows`` inside the transaction, together: on PostgreSQL
        in one round trip (psycopg pipelines ``executemany``)."""
        raise NotImplementedError  # the backend's transaction runs it
