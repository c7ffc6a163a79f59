"""What the console reads from the store, and how little: the journal says what changed.

`StoreFeed.read` runs in a thread worker. The first read takes every run (on a big store after
`first_page`, the newest runs, so the table fills while the rest are read); each later read takes
the journal entries after the last one seen and re-reads only the runs they name, so a live
console's cost follows the rate of change, not the size of the store. A read that finds the
journal where it was returns None: an idle console does no work and redraws nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.service.fleet import Fleet, open_fleet, open_writer
from core.service.hosting import host_status
from core.service.reads import DiffOpening, HostLine, RunView
from jarvis_tui.run_model import search_text

if TYPE_CHECKING:
    from core.service.logs import LogFiles, LogRefusal, Stream

__all__ = ["DiffOpening", "FeedRead", "HostLine", "RunView", "StoreFeed", "host_pid"]

#: More journal entries than this since the last read: re-read everything instead (a console
#: that was suspended for a while catches up in one read, not thousands of small ones).
CATCH_UP_LIMIT = 5000
#: A store with more runs than this shows its newest ones first, while the rest are read: a
#: screenful arrives in a few milliseconds, every run of 10,000 in about half a second.
FIRST_PAGE = 200


@dataclass
class FeedRead:
    """One read's worth of change."""

    rows: list[dict[str, Any]]
    """Table rows (`core.run_views.table_rows`) of the runs that changed, or of every run."""
    full: bool
    """``rows`` is the whole run list (first read, or catching up after a long gap)."""
    counts: dict[str, int]
    """Runs per state, after the change."""
    journal: list[dict[str, Any]]
    """The new journal entries, oldest first (empty on a full read)."""
    last_seq: int
    """The journal position this read reflects."""
    host_pid: int | None = None
    """The pid of the host holding the workspace, None when no host runs."""
    partial: bool = False
    """A full read's first page: the newest runs only (``counts`` are every run's), shown while
    the whole list is read; that read follows at once."""
    burn: dict[str, Any] | None = None
    """Tokens and cost every run's agent reported (`core.service.reads.FleetSummary.burn`),
    None when no agent reported any (or the read did not look)."""


def host_pid(workspace_root: Path) -> int | None:
    """The pid holding the workspace's host lock, if any (unknown reads as none)."""
    try:
        return host_status(workspace_root)
    except OSError:
        return None


def _searchable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Prepared here, on the reading thread: the first `/` keystroke over 10,000 runs would
    # otherwise build every run's search text on the UI thread (about 40 ms).
    for row in rows:
        search_text(row)
    return rows


class StoreFeed:
    """Reads for one console, through one long-lived connection of its own.

    The calls come from worker threads; a lock lets one at a time use the connection. Opening
    a store checks its schema, so a poll that opened one each time paid that every second. The
    connection is dropped and opened again at the next call after a read failed (the store
    was replaced, or a fault), and after every call when it is immutable (a read-only
    workspace with no writer: such a connection never sees later commits).
    """

    def __init__(self, db_path: Path, store_at: str | Path | None = None) -> None:
        """
        Args:
            db_path: the workspace's ``jarvis.db`` (its folder is the workspace).
            store_at: the store when it is not that file (`core.store.location`: a database
                URL, or another SQLite file).
        """
        self.db_path = db_path
        self.root = db_path.parent
        self.location: str | Path = db_path if store_at is None else store_at
        self._store: Fleet | None = None
        self._lock = threading.Lock()
        self.opened = 0
        """How many connections this feed has opened (one, on a healthy store)."""
        self.hosts: tuple[HostLine, ...] = ()
        """The store's live and lost hosts as the last `read` found them (whether or not it
        found a change to return), their heartbeats fresh."""

    def open_writer(self) -> Fleet:
        """A connection of its own for one operator action (the caller closes it)."""
        return open_writer(self.location, self.root)

    @contextmanager
    def _reading(self) -> Iterator[Fleet]:
        with self._lock:
            if self._store is None:
                # A reader: the schema is the writers' business, so a console never takes the
                # write lock.
                self._store = open_fleet(self.location, self.root, access="console")
                self.opened += 1
            store = self._store
            try:
                yield store
            except BaseException:
                self._drop()
                raise
            if store.immutable:
                self._drop()

    def _drop(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            finally:
                self._store = None

    def close(self) -> None:
        """Close the connection (the console is leaving); a later call opens one again."""
        with self._lock:
            self._drop()

    def read(self, since_seq: int | None, *, last_host: int | None = None) -> FeedRead | None:
        """What changed after ``since_seq`` (None: everything), or None when nothing did;
        either way `hosts` is the store's hosts as this read found them."""
        with self._reading() as fleet:
            seq = fleet.last_seq()
            host = host_pid(self.root)
            self.hosts = fleet.live_hosts()
            if since_seq is not None and seq == since_seq:
                if host == last_host:
                    return None
                return FeedRead([], False, {}, [], seq, host)  # only the host changed
            summary = fleet.summary()
            if since_seq is None or seq - since_seq > CATCH_UP_LIMIT:
                rows = _searchable(fleet.table_rows())
                return FeedRead(rows, True, summary.counts, [], seq, host, burn=summary.burn)
            entries = fleet.journal(since_seq, limit=CATCH_UP_LIMIT + 1)
            changed = list(dict.fromkeys(entry["run_id"] for entry in entries))
            rows = _searchable(fleet.table_rows(changed))
            last = entries[-1]["seq"] if entries else seq
            return FeedRead(rows, False, summary.counts, entries, last, host, burn=summary.burn)

    def first_page(self, limit: int | None = None) -> FeedRead | None:
        """The newest ``limit`` runs (default FIRST_PAGE; the table's top under its default
        order, newest first), or None when the store holds no more: a full read is as quick."""
        limit = FIRST_PAGE if limit is None else limit
        with self._reading() as fleet:
            counts = fleet.counts()
            if sum(counts.values()) <= limit:
                return None
            seq = fleet.last_seq()
            rows = _searchable(fleet.table_rows(fleet.newest_run_ids(limit)))
            return FeedRead(rows, True, counts, [], seq, host_pid(self.root), True)

    def run_view(self, run_id: str, *, journal_limit: int) -> RunView:
        """The selected run's detail, newest journal entries and shared fingerprints."""
        with self._reading() as fleet:
            return fleet.run_view(run_id, journal_limit=journal_limit)

    def diff_opening(self, run_id: str, *, page_lines: int) -> DiffOpening:
        """Where ``run_id``'s diff is, its files and findings, and its first ``page_lines``
        lines (git is read for those only); a refusal's sentence when there is none to show."""
        # Imported here: the console's first paint does not need git.
        from core.service.diffs import DiffRefusal, opening_of

        with self._reading() as fleet:
            found = fleet.diff_source(run_id)
            detail = None if isinstance(found, DiffRefusal) else fleet.detail(run_id, events=0)
        return opening_of(run_id, found, detail, page_lines=page_lines)

    def find_log(
        self, run_id: str, *, attempt: int | None = None, stream: Stream = "stdout"
    ) -> LogFiles | LogRefusal:
        """Where one stream of a run's attempt is logged (the latest attempt with logs by
        default), or the engine's sentence saying why there is none."""
        with self._reading() as fleet:
            return fleet.find_log(run_id, attempt=attempt, stream=stream)

    def attempt_running(self, log: LogFiles) -> bool:
        """Whether the attempt ``log`` belongs to is still running (its log may still grow)."""
        with self._reading() as fleet:
            return fleet.attempt_running(log)

    def all_journal(self, *, limit: int) -> list[dict[str, Any]]:
        """The newest journal entries of every run, oldest first."""
        with self._reading() as fleet:
            return fleet.run_journal(None, limit=limit)
