"""Messages the console's workers post to the app: past-tense facts, declared as dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class RunsSnapshotReceived(Message):
    """A fresh read of every run; a newer snapshot makes an unprocessed older one worthless."""

    rows: list[dict[str, Any]]
    """Run summaries (`core.run_views.run_summary`), most recently updated first."""
    counts: dict[str, int]
    """How many runs are in each state."""
    last_seq: int
    """The journal position the read reflects."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunsSnapshotReceived)


@dataclass
class RunDetailReceived(Message):
    """One run's detail (`core.run_views.run_detail`), or None when the run is gone."""

    run_id: str
    """The run that was read."""
    detail: dict[str, Any] | None
    """Its gates, steers, recent events and audit trail."""
