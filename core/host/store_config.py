"""``[store]`` of ``jarvis.toml``: which store the workspace uses, and how long its history of
finished runs is kept (docs/configuration.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from core.store.retention import RetentionPolicy

#: Days of history: a whole number, 0 (remove as soon as a run is finished) to a century.
KeepDays = Annotated[int, Field(ge=0, le=36500, strict=True)]


class StoreConfig(BaseModel):
    """``[store]``: the store (its ``url`` is read by `core.store.location`) and retention."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str | None = None
    """A ``postgresql://`` URL, or an SQLite file (relative to the workspace); None: jarvis.db."""
    keep_days: KeepDays | None = None
    """Days the history of finished runs is kept, for every table below that names none of
    its own; None (the default): nothing is ever removed."""
    progress_keep_days: KeepDays | None = None
    """Progress events of finished runs."""
    journal_keep_days: KeepDays | None = None
    """Journal entries of finished runs."""
    receipts_keep_days: KeepDays | None = None
    """IPC receipts (only those whose file is gone from disk)."""

    def policy(self) -> RetentionPolicy:
        """The retention policy in force: each table's own days, else ``keep_days``."""

        def days(own: int | None) -> int | None:
            return own if own is not None else self.keep_days

        return RetentionPolicy(
            progress_days=days(self.progress_keep_days),
            journal_days=days(self.journal_keep_days),
            receipts_days=days(self.receipts_keep_days),
        )
