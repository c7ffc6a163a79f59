"""A batch's progress events, written together at its end: few statements, few round trips.

What a batch needs to know is read up front, a statement per question for the whole batch
rather than per event or per run: which of its files' receipts are stored, each run's lane and
attempt, and which of its runs' events are stored. Each event is then judged in Python and its
three rows (its receipt, its row, its journal entry) are held until the batch ends and written
together, a statement per table (``executemany``: on PostgreSQL one round trip for the lot,
where it was three per event; on SQLite the same statements with less Python around them). The
run rows take the batch's latest events in one more statement, a run each. Under a stream from
many runs a batch holds a file or two of each: per-run statements were most of its work.

Nothing changes in what is stored: the same rows, in one transaction, as one event at a time
would write. Only the journal's order within a batch differs: a batch's progress entries come
after its other entries (a flagged secret, an ack) rather than between them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.store.api import RunTransaction


@dataclass(slots=True)
class Latest:
    """The batch's latest event of one run's attempt: (time, seq, file name) orders them."""

    attempt: int
    at_utc: str
    seq: int
    name: str
    summary: str
    timestamp: str

    def key(self) -> tuple[str, int, str]:
        return self.at_utc, self.seq, self.name


class ProgressBatch:
    """One transaction's progress: read up front, written at `finish`.

    Args:
        files: the batch's progress files as (receipt key, run id, file name).
    """

    def __init__(self, tx: RunTransaction, files: Iterable[tuple[str, str, str]]) -> None:
        self.tx = tx
        listed = list(files)
        self._receipts = tx.stored_receipts([key for key, _, _ in listed])
        """Receipts stored, and those this batch will write: a file seen twice is one event."""
        self._names: dict[str, list[str]] = defaultdict(list)
        for _, run_id, name in listed:
            self._names[run_id].append(name)
        self._briefs = tx.run_briefs(list(self._names)) if self._names else {}
        self._stored: dict[tuple[str, int], set[str]] = (
            tx.stored_progress_names_of({
                (run_id, int(brief["retry_count"]) + 1): self._names[run_id]
                for run_id, brief in self._briefs.items()
            })
            if self._briefs
            else {}
        )  # fmt: skip
        self._latest: dict[str, Latest] = {}
        self._receipt_rows: list[tuple[str, str, str]] = []
        self._event_rows: list[tuple[Any, ...]] = []
        self._journal: list[tuple[str, str, Mapping[str, Any], str]] = []

    def has_receipt(self, key: str) -> bool:
        return key in self._receipts

    def brief(self, run_id: str) -> dict[str, Any] | None:
        """The run's lane, state and attempt, read for all the batch's runs at its start. Ingest
        changes none of them, and the batch's transaction holds the store's write lock; an
        unknown run is read again when asked (a dispatch earlier in the batch may have made it)."""
        found = self._briefs.get(run_id)
        if found is None:
            found = self.tx.run_brief(run_id)
            if found is not None:
                self._briefs[run_id] = found
        return found

    def stored(self, run_id: str, attempt: int, name: str) -> bool:
        """Whether the attempt already has an event of this file name (stored or in the batch):
        NanoClaw's worker starts seq again at 0 for each query, so the name is the event's."""
        names = self._stored.get((run_id, attempt))
        if names is None:
            names = self._stored[run_id, attempt] = self.tx.stored_progress_names(
                run_id, attempt, self._names.get(run_id, [name])
            )
        return name in names

    def receipt(self, key: str, lane: str) -> None:
        """A file taken with nothing to record (its event is stored under another receipt)."""
        self._receipts.add(key)
        self._receipt_rows.append((key, lane, "progress"))

    def record(
        self, key: str, lane: str, run_id: str, event: Latest, *, phase: str, tool_used: str | None
    ) -> None:
        """An event to write at `finish`, with its receipt and its journal entry."""
        self.receipt(key, lane)
        self._stored.setdefault((run_id, event.attempt), set()).add(event.name)
        self._event_rows.append((
            run_id, event.attempt, event.seq, event.name, event.timestamp, event.at_utc, phase,
            event.summary, tool_used,
        ))  # fmt: skip
        payload = {
            "attempt": event.attempt,
            "seq": event.seq,
            "phase": phase,
            "summary": event.summary,
            "tool_used": tool_used,
            "timestamp": event.timestamp,
        }
        self._journal.append((run_id, "progress", payload, lane))
        held = self._latest.get(run_id)
        if held is None or (held.attempt, held.key()) < (event.attempt, event.key()):
            self._latest[run_id] = event

    def finish(self) -> None:
        """Write what the batch holds, then touch each run once: its last progress when the
        batch's latest event is the latest of its attempt (files can come in out of order: a
        batch cut by a crash, a sweep after the watcher, a file that waited for its writer),
        and ``updated_at`` in any case."""
        tx = self.tx
        if self._receipt_rows:
            tx.put_receipts(self._receipt_rows)
        if self._event_rows:
            tx.add_progress_events(self._event_rows)
        if self._journal:
            tx.journal_many(self._journal)
        if self._latest:
            tx.touch_latest_progress([
                (run_id, e.attempt, e.at_utc, e.seq, e.name, e.summary, e.timestamp)
                for run_id, e in self._latest.items()
            ])  # fmt: skip
        self._receipt_rows, self._event_rows, self._journal = [], [], []
        self._latest.clear()
