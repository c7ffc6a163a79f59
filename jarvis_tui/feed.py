"""What the console reads from the store, and how little: the journal says what changed.

`StoreFeed.read` runs in a thread worker. The console holds a window of its view, never the
whole table (`jarvis_tui.run_model`): the first read takes the window's first page; each later
read takes the journal entries after the last one seen and, when they may have changed what
the window holds or its order, reads the window again from the same place (one indexed page);
when they are only progress of runs in view under an order progress does not move, it re-reads
just those runs. A live console's cost follows the rate of change and the window's size, never
the size of the store. A read that finds the journal where it was returns None: an idle console
does no work and redraws nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.service.change_feed import FedChanges, FeedListener
from core.service.fleet import Fleet, open_fleet, open_writer
from core.service.hosting import host_status
from core.service.lanes import FleetLanes, LaneOutcome, LaneRequest
from core.service.reads import DiffOpening, HostLine, RunView
from core.service.window import RunsView, WindowRows
from jarvis_tui.run_model import WindowAsk

if TYPE_CHECKING:
    from core.service.logs import LogFiles, LogRefusal, Stream

__all__ = ["DiffOpening", "FeedRead", "HostLine", "RunView", "StoreFeed", "host_pid"]

#: More journal entries than this since the last read: the window is read again and the
#: entries are not handed on (a console suspended for a while catches up in one read).
CATCH_UP_LIMIT = 5000
#: Journal kinds that change nothing but a run's progress (its summary and times).
PROGRESS_ONLY = frozenset({"progress"})


@dataclass
class FeedRead:
    """One read's worth of change."""

    page: WindowRows | None
    """The window read again (or for the first time), None when only ``rows`` changed."""
    rows: list[dict[str, Any]]
    """Table rows of runs that changed in place: runs in the window the journal named, and the
    runs asked to be kept (the run on show, when the window does not hold it)."""
    counts: dict[str, int]
    """Runs per state, after the change."""
    journal: list[dict[str, Any]]
    """The new journal entries, oldest first (empty on the first read)."""
    last_seq: int
    """The journal position this read reflects."""
    ask: WindowAsk
    """What the read was asked for (its view's generation, the window's version)."""
    host_pid: int | None = None
    """The pid of the host holding the workspace, None when no host runs."""
    burn: dict[str, Any] | None = None
    """Tokens and cost every run's agent reported (`core.service.reads.FleetSummary.burn`),
    None when no agent reported any (or the read did not look)."""

    cut: int | None = None
    """The journal's horizon when entries after the position asked from were removed by
    retention: the window was read again (``page``) and ``journal`` is empty."""

    @property
    def full(self) -> bool:
        """The window was read (not only rows in it)."""
        return self.page is not None


def host_pid(workspace_root: Path) -> int | None:
    """The pid holding the workspace's host lock, if any (unknown reads as none)."""
    try:
        return host_status(workspace_root)
    except OSError:
        return None


def _moves_the_window(entries: list[dict[str, Any]], view: RunsView) -> bool:
    """Whether these entries may change which runs ``view`` holds, or their order: anything
    but progress, or progress where the view orders or filters by what progress changes (the
    last change's time, the progress text)."""
    if any(entry["kind"] not in PROGRESS_ONLY for entry in entries):
        return True
    return bool(entries) and (view.sort == "updated" or view.attention or bool(view.text))


def _page_and_kept(fleet: Fleet, ask: WindowAsk) -> tuple[WindowRows, list[str]]:
    """The window read again from where it stands, and the runs asked to be kept (the run on
    show) that it does not hold."""
    page = fleet.window(ask.view, limit=ask.size, after=ask.anchor, offset=ask.offset)
    held = {row["run_id"] for row in page.rows}
    return page, [run_id for run_id in ask.keep if run_id not in held]


def _shown(entries: list[dict[str, Any]], ask: WindowAsk) -> list[str]:
    """The runs these entries name that the window holds or keeps, once each, in order."""
    named = dict.fromkeys(entry["run_id"] for entry in entries)
    return [run_id for run_id in named if run_id in ask.loaded or run_id in ask.keep]


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
        self.fed: FeedListener | None = None
        """The host's change feed, when the console listens to it: a read it can answer
        reads nothing from the store (but the window, when the changes move it)."""
        self.fed_reads = 0
        """Reads the feed answered (for tests and the benchmark)."""
        self.quiet_answers = 0
        """Polls the feed answered with "nothing changed" on the console's loop (`unchanged`)."""

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

    def read(
        self, since_seq: int | None, ask: WindowAsk, *, last_host: int | None = None
    ) -> FeedRead | None:
        """What changed after ``since_seq`` (None: the first read), with the window ``ask``
        says; None when nothing did. Either way `hosts` is the store's hosts as found."""
        listener = self.fed
        fed = listener.changes_after(since_seq) if listener and since_seq is not None else None
        if listener is not None and fed is not None and since_seq is not None:
            self.fed_reads += 1
            read = self._read_fed(since_seq, fed, ask, last_host)
            listener.consumed(fed.to_seq)
            return read
        with self._reading() as fleet:
            seq = fleet.last_seq()
            host = host_pid(self.root)
            self.hosts = fleet.live_hosts()
            if since_seq is not None and seq == since_seq:
                if host == last_host:
                    return None
                # Only the host changed.
                return FeedRead(None, [], {}, [], seq, ask, host)
            summary = fleet.summary()
            entries: list[dict[str, Any]] = []
            cut = None
            if since_seq is not None:
                entries = fleet.journal(since_seq, limit=CATCH_UP_LIMIT + 1)
                # Entries after since_seq were removed by retention: going on from the rest
                # would skip them silently; the window is read again, as after a long absence.
                cut = fleet.journal_cut(since_seq)
            caught_up = len(entries) <= CATCH_UP_LIMIT and cut is None
            last = entries[-1]["seq"] if entries and caught_up else seq
            page = None
            if since_seq is None or not caught_up or _moves_the_window(entries, ask.view):
                page, wanted = _page_and_kept(fleet, ask)
            else:
                wanted = _shown(entries, ask)
            rows = fleet.table_rows(wanted) if wanted else []
            return FeedRead(
                page, rows, summary.counts, entries if caught_up else [], last, ask, host,
                burn=summary.burn, cut=cut,
            )  # fmt: skip

    def unchanged(self, since_seq: int, last_host: int | None) -> bool:
        """Whether the feed says nothing changed after ``since_seq`` and the host is the same:
        what `read` would answer with None, said from the feed's messages alone (no store, no
        thread: the console's loop asks it each second on a quiet workspace)."""
        listener = self.fed
        fed = listener.changes_after(since_seq) if listener is not None else None
        if fed is None or fed.changed or fed.pid != last_host:
            return False
        self.hosts = fed.hosts
        self.quiet_answers += 1
        return True

    def _read_fed(
        self, since_seq: int, fed: FedChanges, ask: WindowAsk, last_host: int | None
    ) -> FeedRead | None:
        """`read` from what the feed said: the store is read only for a window the changes
        move (one indexed page), never for the counts, the journal or the rows."""
        self.hosts = fed.hosts
        host = fed.pid
        if not fed.changed:
            if host == last_host:
                return None
            return FeedRead(None, [], {}, [], since_seq, ask, host)
        entries = fed.entries
        page = None
        if _moves_the_window(entries, ask.view):
            with self._reading() as fleet:
                page, wanted = _page_and_kept(fleet, ask)
                rows = fleet.table_rows(wanted) if wanted else []
        else:
            rows = [fed.rows[run_id] for run_id in _shown(entries, ask) if run_id in fed.rows]
        return FeedRead(page, rows, fed.counts or {}, entries, fed.to_seq, ask, host, burn=fed.burn)

    def window(self, view: RunsView, *, limit: int, **where: Any) -> WindowRows:
        """A page of ``view`` (`core.service.window.read_window`)."""
        with self._reading() as fleet:
            return fleet.window(view, limit=limit, **where)

    def run_ids_from(self, prefix: str, *, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` runs whose id starts with ``prefix``: ``run_id`` and ``state``."""
        with self._reading() as fleet:
            return fleet.run_ids_from(prefix, limit=limit)

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

    # -- the fleet view and the quarantine view ---------------------------------------------------

    def lanes(self) -> FleetLanes:
        """Every lane and every host (`core.service.lanes.fleet_lanes`)."""
        with self._reading() as fleet:
            return fleet.lanes()

    def lane_act(self, request: LaneRequest) -> LaneOutcome:
        """Pause or resume a lane, through a connection of its own (as every action)."""
        writer = self.open_writer()
        try:
            return writer.lane_act(request)
        finally:
            writer.close()
