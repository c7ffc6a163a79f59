"""`jarvis store stats`: how big the store is, what an event costs, the retention policy in
force and what it would remove now.

Each ingested progress event writes a row to three tables: the event (``progress_events``), its
journal entry (``journal``) and its file's receipt (``ipc_receipts``); an event's cost is the
sum of their bytes per row. What the policy would remove is counted as the host removes it
(`core.host.retention`): history of finished runs last updated before the policy's days, and
receipts as old whose file is no longer in the IPC tree (nor ``work/requests/``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.host.config import ConfigError, load_config
from core.host.retention import FINISHED
from core.service.errors import ServiceError
from core.store.api import RunStore
from core.store.retention import TABLES, RetentionPolicy, cutoff
from core.workspace import Workspace

#: The tables an event writes a row to, in the order they are shown.
EVENT_TABLES = ("progress_events", "journal", "ipc_receipts")
#: Each retention table (the policy's names) and the store table it removes rows of.
POLICY_TABLES = dict(zip(TABLES, ("progress_events", "journal", "ipc_receipts"), strict=True))


@dataclass
class StoreStats:
    backend: str
    location: str
    rows: dict[str, int]
    bytes: dict[str, int] | None
    """Per table, indexes included; None when the database cannot say (SQLite without
    ``dbstat``: then `pages` says the file's pages)."""
    pages: dict[str, int]
    file_bytes: int | None
    """An SQLite store's file, its write-ahead log included; None on a server."""
    policy: dict[str, int | None]
    policy_from: str
    would_remove: dict[str, int | None] = field(default_factory=dict)
    """Rows per table the policy would remove now (None: it keeps that table's rows)."""

    def bytes_per_row(self, table: str) -> float | None:
        if self.bytes is None or not self.rows.get(table):
            return None
        return self.bytes.get(table, 0) / self.rows[table]

    @property
    def bytes_per_event(self) -> float | None:
        """A progress event's share of the three tables it writes to, summed."""
        each = [self.bytes_per_row(table) for table in EVENT_TABLES]
        return None if None in each else sum(b for b in each if b is not None)

    def to_json(self) -> dict[str, Any]:
        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 1)

        return {
            "backend": self.backend,
            "location": self.location,
            "tables": {
                name: {
                    "rows": count,
                    "bytes": None if self.bytes is None else self.bytes.get(name, 0),
                    "bytes_per_row": rounded(self.bytes_per_row(name)),
                }
                for name, count in self.rows.items()
            },
            "total_bytes": None if self.bytes is None else sum(self.bytes.values()),
            "file_bytes": self.file_bytes,
            "pages": self.pages,
            "bytes_per_event": rounded(self.bytes_per_event),
            "policy": {"keep_days": self.policy, "from": self.policy_from},
            "would_remove": self.would_remove,
        }


def policy_of(root: Path, keep_days: int | None) -> tuple[RetentionPolicy, str]:
    """The policy to show: ``keep_days`` for every table when given, else ``jarvis.toml``'s.

    Raises:
        ServiceError: ``config_unusable``: ``jarvis.toml`` cannot be used.
    """
    if keep_days is not None:
        return RetentionPolicy.every_table(keep_days), "--keep-days"
    try:
        return load_config(root).store.policy(), "jarvis.toml"
    except ConfigError as exc:
        raise ServiceError("config_unusable", str(exc)) from None


def files_on_disk(root: Path) -> list[str]:
    """Receipts' file names (relative) of every file now in the IPC tree and ``work/requests``."""
    found = []
    ipc = Workspace(root).ipc_dir
    for base, under in ((ipc, ipc), (root, root / "work" / "requests")):
        for folder, _dirs, files in os.walk(under):
            found += [(Path(folder) / name).relative_to(base).as_posix() for name in files]
    return found


def store_stats(store: RunStore, root: Path, keep_days: int | None = None) -> StoreStats:
    """The figures of the store at ``root``'s workspace, under its policy or ``keep_days``.

    Raises:
        ServiceError: ``config_unusable`` (no ``keep_days`` and ``jarvis.toml`` is unusable).
    """
    policy, source = policy_of(root, keep_days)
    file_bytes = None
    if store.path is not None:
        file_bytes = sum(
            os.path.getsize(p) for p in (store.path, Path(f"{store.path}-wal")) if os.path.exists(p)
        )
    stats = StoreStats(
        backend="postgres" if store.path is None else "sqlite",
        location=str(store.location),
        rows={name: store.row_count(name) for name in store.table_names()},
        bytes=store.table_bytes(),
        pages=store.pages(),
        file_bytes=file_bytes,
        policy={name: policy.days(name) for name in TABLES},
        policy_from=source,
    )
    now = store.now()
    for name, table in POLICY_TABLES.items():
        days = policy.days(name)
        if days is None:
            stats.would_remove[table] = None
        elif name == "receipts":
            before = cutoff(now, days)
            kept = sum(store.count_old_receipts(before, path) for path in files_on_disk(root))
            stats.would_remove[table] = store.count_old_receipts(before) - kept
        elif name == "progress" or name == "journal":
            stats.would_remove[table] = store.removable(name, FINISHED, cutoff(now, days))
    return stats


__all__ = ["StoreStats", "files_on_disk", "policy_of", "store_stats"]
