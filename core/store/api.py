"""The store's interface: what the engine, the host and the consoles may ask of a store.

`RunStore` is a store (one connection; reads, and `transaction` for writes) and
`RunTransaction` one unit of work in it. Both are made of named reads and writes — the groups
in this package (`lanes`, `usage`, `steers`, `refusals`, `results`, `runs`, `git_records`, `views`,
`verification`, `retention`, `notify_marks`),
whose methods hold the statements — plus the core members each backend implements below (the
connection, transactions and savepoints, the journal's append). A backend subclasses both, provides
``rows``/``execute`` and those members, and overrides any group's method whose SQL its dialect
speaks differently. `core.store.sqlite_store` is the SQLite backend. No statement is written
outside this package (tests/core/test_sql_lives_in_the_store.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.store.git_records import GitReads, GitWrites
from core.store.hosts import HostReads, HostWrites
from core.store.lanes import LaneReads, LaneWrites
from core.store.notify_marks import NotifyReads, NotifyWrites
from core.store.refusals import RefusalReads, RefusalWrites
from core.store.results import ResultWrites
from core.store.retention import RetentionReads, RetentionWrites
from core.store.runs import RunReads, RunWrites
from core.store.side_tables import SideTables
from core.store.sizes import SizeReads
from core.store.steers import SteerReads, SteerWrites
from core.store.usage import UsageReads, UsageWrites
from core.store.verification import VerificationReads, VerificationWrites
from core.store.views import ViewReads
from core.store.window import WindowReads

Row = dict[str, Any]
"""A row as every backend returns it: column name to value."""

Clock = Callable[[], datetime]
"""Where a store reads the time (tests pass their own)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``moment`` as the store writes times: UTC, to the millisecond, ``Z`` — text that sorts
    as time does, on every backend."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RunTransaction(
    RunReads,
    RunWrites,
    HostReads,
    HostWrites,
    LaneReads,
    LaneWrites,
    UsageReads,
    UsageWrites,
    SteerWrites,
    RefusalReads,
    RefusalWrites,
    ResultWrites,
    GitReads,
    GitWrites,
    SideTables,
    VerificationReads,
    VerificationWrites,
    RetentionWrites,
    NotifyWrites,
    ABC,
):
    """One unit of work: every write of it commits together, or none does."""

    now: str
    """The transaction's timestamp: every row it writes carries the same time."""

    @abstractmethod
    def savepoint(self) -> AbstractContextManager[None]:
        """A nested step: rolled back alone if it raises, the outer transaction going on."""

    @abstractmethod
    def journal(self, run_id: str, kind: str, payload: Mapping[str, Any], actor: str) -> int:
        """Append to the journal; the new entry's sequence number."""

    @abstractmethod
    def journal_many(self, entries: Sequence[tuple[str, str, Mapping[str, Any], str]]) -> None:
        """Append several entries, in order, together: (run id, kind, payload, actor) each."""


class RunStore(
    HostReads,
    LaneReads,
    UsageReads,
    SteerReads,
    RefusalReads,
    RunReads,
    GitReads,
    ViewReads,
    WindowReads,
    VerificationReads,
    RetentionReads,
    NotifyReads,
    SizeReads,
    ABC,
):
    """One connection to a workspace's store."""

    location: str
    """Where the store is, fit to show: an SQLite file's path, or a database URL with its
    password masked."""
    path: Path | None
    """The SQLite file (None for a database server)."""
    created: bool
    """Whether this open made a new store (commands that may create one say so)."""
    read_only: bool
    immutable: bool
    """Whether this read-only open sees the store as it was when opened (an SQLite file in a
    read-only folder): a reader that polls opens again to see later commits."""

    @abstractmethod
    def now(self) -> str:
        """The store clock's time, as the store writes it."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[RunTransaction]:
        """A write transaction; writers are serialised for its whole length."""

    @abstractmethod
    def close(self) -> None: ...

    def claim_runs(self, host: str, wants: Mapping[str, int], queued: str) -> list[str]:
        """Claim queued runs for ``host`` (`HostWrites.claim_queued`) in a transaction of
        their own; a backend whose claims can run side by side overrides it."""
        with self.transaction() as tx:
            return tx.claim_queued(host, wants, queued)

    @abstractmethod
    def check_integrity(self) -> None:
        """Refuse a damaged store (StoreError)."""


__all__ = ["Clock", "Row", "RunStore", "RunTransaction", "iso", "utc_now"]
