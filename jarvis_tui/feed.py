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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.host.launcher import host_status
from core.run_views import (
    fingerprint_peers,
    journal_entry,
    run_detail,
    run_journal,
    state_counts,
    table_rows,
)
from core.store.api import RunStore
from core.store.hosts import lease_state
from core.store.location import open_store
from jarvis_tui.run_model import search_text

if TYPE_CHECKING:
    from core.repos.claims import FileChange
    from core.repos.diff import DiffRefusal, DiffSource, PatchPage
    from core.worker_logs import LogFiles, LogRefusal, Stream

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
    """Tokens and cost every run's agent reported (`SqliteStore.workspace_usage`), None
    when no agent reported any (or the read did not look)."""


@dataclass(frozen=True)
class HostLine:
    """One host serving the store, as the header shows it."""

    name: str
    lanes: tuple[str, ...] | None
    """None: every lane."""
    state: str
    """``live`` or ``lost`` (`core.store.hosts.lease_state`); stopped and recovered hosts are
    history, not shown."""
    heartbeat_at: str
    """Its last heartbeat; for a lost host, when it went quiet."""

    def key(self) -> tuple[object, ...]:
        """What a change of is worth a read: not a live host's every heartbeat."""
        return (
            self.name,
            self.lanes,
            self.state,
            self.heartbeat_at if self.state == "lost" else "",
        )


def _hosts(store: RunStore) -> tuple[HostLine, ...]:
    now = store.now()
    lines = []
    for host in store.hosts():
        state = lease_state(host, now)
        if state in ("live", "lost"):
            lanes = None if host["lanes"] is None else tuple(host["lanes"])
            lines.append(HostLine(host["name"], lanes, state, host["heartbeat_at"]))
    return tuple(lines)


def _burn(store: RunStore) -> dict[str, Any] | None:
    used = store.workspace_usage()
    return used if used["tokens_in"] or used["tokens_out"] or used["cost_usd"] else None


@dataclass
class RunView:
    """Everything the side panels show for one run."""

    run_id: str
    detail: dict[str, Any] | None
    """`core.run_views.run_detail`, or None when the run is gone."""
    journal: list[dict[str, Any]] = field(default_factory=list)
    """The run's newest journal entries, oldest first."""
    peers: list[dict[str, Any]] = field(default_factory=list)
    """Its failure fingerprints and how many other runs share each."""


@dataclass
class DiffOpening:
    """What the diff screen shows first: where the run's diff is (or why there is none), its
    files, those a gate's finding names, and the patch's first page."""

    run_id: str
    source: DiffSource | None
    refusal: DiffRefusal | None
    files: list[FileChange] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    """Paths of ``files`` named by a finding of the latest attempt's gates, in diff order."""
    first: PatchPage | None = None


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
        self._store: RunStore | None = None
        self._lock = threading.Lock()
        self.opened = 0
        """How many connections this feed has opened (one, on a healthy store)."""
        self.hosts: tuple[HostLine, ...] = ()
        """The store's live and lost hosts as the last `read` found them (whether or not it
        found a change to return), their heartbeats fresh."""

    def open_writer(self) -> RunStore:
        """A connection of its own for one operator action (the caller closes it)."""
        return open_store(self.location, migrate=False)

    @contextmanager
    def _reading(self) -> Iterator[RunStore]:
        with self._lock:
            if self._store is None:
                # A reader: the schema is the writers' business, so a console never takes the
                # write lock.
                self._store = open_store(self.location, migrate=False, shared=True)
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
        with self._reading() as store:
            seq = store.last_seq()
            host = host_pid(self.root)
            self.hosts = _hosts(store)
            if since_seq is not None and seq == since_seq:
                if host == last_host:
                    return None
                return FeedRead([], False, {}, [], seq, host)  # only the host changed
            burn = _burn(store)
            if since_seq is None or seq - since_seq > CATCH_UP_LIMIT:
                rows = _searchable(table_rows(store))
                return FeedRead(rows, True, state_counts(store), [], seq, host, burn=burn)
            entries = [
                journal_entry(row)
                for row in store.journal_since(since_seq, limit=CATCH_UP_LIMIT + 1)
            ]
            changed = list(dict.fromkeys(entry["run_id"] for entry in entries))
            rows = _searchable(table_rows(store, changed))
            last = entries[-1]["seq"] if entries else seq
            return FeedRead(rows, False, state_counts(store), entries, last, host, burn=burn)

    def first_page(self, limit: int | None = None) -> FeedRead | None:
        """The newest ``limit`` runs (default FIRST_PAGE; the table's top under its default
        order, newest first), or None when the store holds no more: a full read is as quick."""
        limit = FIRST_PAGE if limit is None else limit
        with self._reading() as store:
            counts = state_counts(store)
            if sum(counts.values()) <= limit:
                return None
            seq = store.last_seq()
            rows = _searchable(table_rows(store, store.newest_run_ids(limit)))
            return FeedRead(rows, True, counts, [], seq, host_pid(self.root), True)

    def run_view(self, run_id: str, *, journal_limit: int) -> RunView:
        """The selected run's detail, newest journal entries and shared fingerprints."""
        with self._reading() as store:
            detail = run_detail(store, run_id, events=0)
            if detail is None:
                return RunView(run_id, None)
            return RunView(
                run_id,
                detail,
                run_journal(store, run_id, limit=journal_limit),
                fingerprint_peers(store, run_id),
            )

    def diff_opening(self, run_id: str, *, page_lines: int) -> DiffOpening:
        """Where ``run_id``'s diff is, its files and findings, and its first ``page_lines``
        lines (git is read for those only); a refusal's sentence when there is none to show."""
        # Imported here: the console's first paint does not need git.
        from core.repos.diff import (
            DiffRefusal,
            diff_files,
            finding_files,
            patch_page,
            run_diff_source,
        )
        from core.repos.git import GitError

        with self._reading() as store:
            found = run_diff_source(store, run_id)
            detail = None if isinstance(found, DiffRefusal) else run_detail(store, run_id, events=0)
        if isinstance(found, DiffRefusal):
            return DiffOpening(run_id, None, found)
        gates = (detail or {}).get("gates") or []
        try:
            files = diff_files(found.repo, found.base, found.head)
            first = patch_page(found.repo, found.base, found.head, 0, page_lines)
        except GitError as exc:
            refusal = DiffRefusal("no_diff", f"git could not read run {run_id}'s diff: {exc}")
            return DiffOpening(run_id, None, refusal)
        findings = finding_files(gates, [f.path for f in files])
        return DiffOpening(run_id, found, None, files, findings, first)

    def find_log(
        self, run_id: str, *, attempt: int | None = None, stream: Stream = "stdout"
    ) -> LogFiles | LogRefusal:
        """Where one stream of a run's attempt is logged (the latest attempt with logs by
        default), or core's sentence saying why there is none."""
        from core.worker_logs import find_log

        with self._reading() as store:
            return find_log(store, run_id, attempt=attempt, stream=stream, root=self.root)

    def attempt_running(self, log: LogFiles) -> bool:
        """Whether the attempt ``log`` belongs to is still running (its log may still grow)."""
        from core.worker_logs import attempt_is_running

        with self._reading() as store:
            return attempt_is_running(store, log)

    def all_journal(self, *, limit: int) -> list[dict[str, Any]]:
        """The newest journal entries of every run, oldest first."""
        with self._reading() as store:
            return run_journal(store, None, limit=limit)
