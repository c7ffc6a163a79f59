"""An open store of one workspace, as the front ends use it: typed reads and `act`.

`open_fleet` opens the store a workspace uses (`core.store.location`) the way a front end asks
for it (`Access`); the `Fleet` it returns is all a front end holds: it never sees the store's
interface, its backends or their drivers. A driver's fault while a fleet is in use comes out as
the store's `StoreError`: its backends translate every driver's exception themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.run_views import (
    fingerprint_peers,
    journal_entry,
    quarantine_counts,
    quarantined_files,
    run_detail,
    run_journal,
    run_summary,
    state_counts,
    table_rows,
)
from core.service.action_types import ActionRequest, Outcome
from core.service.reads import FleetSummary, HostLine, Row, RunView
from core.service.window import RunsView, WindowRows, read_window, run_ids_from
from core.store.hosts import lease_state
from core.store.location import open_store, store_location

if TYPE_CHECKING:
    from core.criteria.run_criteria import CriteriaChange
    from core.intake import IntakeResult
    from core.repos.diff import DiffRefusal, DiffSource
    from core.service.bulk import RunResult, Selection
    from core.service.lanes import FleetLanes, LaneOutcome, LaneRequest
    from core.service.store_stats import StoreStats
    from core.store.api import RunStore
    from core.worker_logs import LogFiles, LogRefusal, Stream

Access = Literal["create", "write", "read", "console"]
"""How a front end uses the store: ``create`` makes the workspace's store when there is none,
``write`` changes runs in an existing one, ``read`` needs only read access and writes nothing,
``console`` reads through a long-lived connection that never migrates (a console never takes
the write lock) and writes through one of its own per action."""


class Fleet:
    """The runs of one workspace through one open store.

    Args:
        store: The open store (the fleet closes it).
        root: The workspace (its logs, checkouts and ``jarvis.toml``).
    """

    def __init__(self, store: RunStore, root: Path) -> None:
        self._store = store
        self.root = root

    # -- the store it is --------------------------------------------------------------------------

    @property
    def created(self) -> bool:
        """Opening made a new store."""
        return self._store.created

    @property
    def location(self) -> str:
        """Where the store is, as people read it (a database URL masked)."""
        return str(self._store.location)

    @property
    def path(self) -> Path | None:
        """An SQLite store's file; None on a database server."""
        return self._store.path

    @property
    def where(self) -> Path | str:
        """What a fault's sentence names: the file, else the location."""
        return self._store.path or self._store.location

    @property
    def immutable(self) -> bool:
        """Opened as the file was: it never sees later commits (a new open does)."""
        return self._store.immutable

    def now(self) -> str:
        """The store's clock, as ISO text."""
        return self._store.now()

    def close(self) -> None:
        self._store.close()

    # -- typed reads ------------------------------------------------------------------------------

    def summary(self, *, burn: bool = True) -> FleetSummary:
        """Runs per state, the journal's position and (with ``burn``) what agents spent."""
        spent = self._store.workspace_usage() if burn else None
        if spent is not None and not (spent["tokens_in"] or spent["tokens_out"]
                                      or spent["cost_usd"]):  # fmt: skip
            spent = None
        return FleetSummary(state_counts(self._store), self._store.last_seq(), spent)

    def last_seq(self) -> int:
        return self._store.last_seq()

    def counts(self) -> dict[str, int]:
        """Runs per state."""
        return state_counts(self._store)

    @staticmethod
    def summary_of(run: Row) -> dict[str, Any]:
        """A run as ``--json`` lists it (`core.run_views.run_summary`)."""
        return run_summary(run)

    def runs(
        self, *, states: tuple[str, ...] = (), lane: str | None = None, limit: int | None = None
    ) -> list[Row]:
        """A page of runs, most recently changed first."""
        return self._store.list_runs(states=states, lane=lane, limit=limit)

    def table_rows(self, run_ids: list[str] | None = None) -> list[Row]:
        """The console's table rows of ``run_ids`` (None: every run)."""
        return table_rows(self._store, run_ids)

    def window(self, view: RunsView, *, limit: int, **where: Any) -> WindowRows:
        """A page of ``view`` as table rows (`core.service.window.read_window`: ``after``,
        ``before``, ``from_end``, ``around``, ``offset``)."""
        return read_window(self._store, view, limit=limit, **where)

    def run_ids_from(self, prefix: str, *, limit: int) -> list[Row]:
        """Up to ``limit`` runs whose id starts with ``prefix`` (`window.run_ids_from`)."""
        return run_ids_from(self._store, prefix, limit=limit)

    def newest_run_ids(self, limit: int) -> list[str]:
        return self._store.newest_run_ids(limit)

    def run(self, run_id: str) -> Row | None:
        """The run as stored, None when there is none."""
        return self._store.get_run(run_id)

    def detail(self, run_id: str, *, events: int = 50) -> dict[str, Any] | None:
        """A run's detail: gates, steers, its newest ``events``, audit, trouble."""
        return run_detail(self._store, run_id, events=events)

    def run_view(self, run_id: str, *, journal_limit: int) -> RunView:
        """A run's detail, its newest journal entries and its shared fingerprints."""
        detail = run_detail(self._store, run_id, events=0)
        if detail is None:
            return RunView(run_id, None)
        return RunView(
            run_id,
            detail,
            run_journal(self._store, run_id, limit=journal_limit),
            fingerprint_peers(self._store, run_id),
        )

    def journal(self, since_seq: int, *, limit: int) -> list[Row]:
        """Journal entries after ``since_seq``, oldest first, their payloads decoded."""
        return [journal_entry(row) for row in self._store.journal_since(since_seq, limit=limit)]

    def journal_cut(self, since_seq: int) -> int | None:
        """The journal's horizon when entries after ``since_seq`` may have been removed by
        retention (a reader must read its view again, not go on from there), else None. Asked
        after reading the entries: a removal raises the horizon in its own transaction."""
        return self._store.cut_below(since_seq)

    def stats(self, keep_days: int | None = None) -> StoreStats:
        """The store's size per table, an event's bytes, the retention policy in force (or
        ``keep_days`` for every table) and what it would remove now (`jarvis store stats`).

        Raises:
            ServiceError: ``config_unusable``: ``jarvis.toml`` cannot be used.
        """
        from core.service.store_stats import store_stats

        return store_stats(self._store, self.root, keep_days)

    def run_journal(self, run_id: str | None, *, limit: int) -> list[Row]:
        """A run's newest journal entries (None: every run's), oldest first."""
        return run_journal(self._store, run_id, limit=limit)

    def hosts(self, now: str | None = None) -> list[Row]:
        """Every host that served the store, with its lease's ``state`` as of ``now`` (the
        store's clock by default)."""
        now = self._store.now() if now is None else now
        hosts = self._store.hosts()
        for host in hosts:
            host["state"] = lease_state(host, now)
        return hosts

    def live_hosts(self) -> tuple[HostLine, ...]:
        """The live and lost hosts, as a live view shows them."""
        lines = []
        for host in self.hosts():
            if host["state"] in ("live", "lost"):
                lanes = None if host["lanes"] is None else tuple(host["lanes"])
                lines.append(HostLine(host["name"], lanes, host["state"], host["heartbeat_at"]))
        return tuple(lines)

    def lanes(self) -> FleetLanes:
        """Every lane with what works it, its runs and its pause, and every host
        (`core.service.lanes.fleet_lanes`)."""
        from core.service.lanes import fleet_lanes

        return fleet_lanes(self._store, self.root)

    def refusals(
        self, *, run_id: str | None = None, limit: int = 100, unattached: bool = False
    ) -> list[Row]:
        """Files the host refused, newest first (`core.run_views.quarantined_files`)."""
        return quarantined_files(self._store, run_id=run_id, limit=limit, unattached=unattached)

    def refusal_counts(self, since: datetime) -> dict[str, int]:
        """How many files were refused at or after ``since``, and how many of no run."""
        from core.store.api import iso

        return quarantine_counts(self._store, iso(since))

    def diff_source(self, run_id: str) -> DiffSource | DiffRefusal:
        """Where a run's diff is (its repository, base and head), or why it has none."""
        from core.repos.diff import run_diff_source

        return run_diff_source(self._store, run_id)

    def find_log(
        self, run_id: str, *, attempt: int | None = None, stream: Stream = "stdout"
    ) -> LogFiles | LogRefusal:
        """Where one stream of a run's attempt is logged, or why there is none."""
        from core.worker_logs import find_log

        return find_log(self._store, run_id, attempt=attempt, stream=stream, root=self.root)

    def attempt_running(self, log: LogFiles) -> bool:
        """Whether the attempt ``log`` belongs to still runs (its log may still grow)."""
        from core.worker_logs import attempt_is_running

        return attempt_is_running(self._store, log)

    # -- writes -----------------------------------------------------------------------------------

    def act(self, request: ActionRequest) -> Outcome:
        """Carry out an operator action (`core.service.actions.act`)."""
        from core.service.actions import act

        return act(self._store, self.root, request)

    def act_on_runs(
        self,
        action: str,
        run_ids: Sequence[str],
        operator: str,
        *,
        reason: str | None = None,
        options: Mapping[str, Any] | None = None,
        strict: bool = False,
    ) -> list[RunResult]:
        """One action on many runs, each exactly once (`core.service.bulk.act_on_runs`)."""
        from core.service.bulk import act_on_runs

        return act_on_runs(self._store, self.root, action, run_ids, operator, reason=reason,
                           options=options, strict=strict)  # fmt: skip

    def select_runs(
        self, action: str, *, states: Sequence[str] = (), lane: str | None = None
    ) -> Selection:
        """The runs a ``--state``/``--lane`` selection matches (`core.service.bulk.select_runs`)."""
        from core.service.bulk import select_runs

        return select_runs(self._store, action, states=states, lane=lane)

    def lane_act(self, request: LaneRequest) -> LaneOutcome:
        """Pause or resume a lane (`core.service.lanes.lane_act`)."""
        from core.service.lanes import lane_act

        return lane_act(self._store, request)

    def submit(self, data: bytes, **how: Any) -> IntakeResult:
        """A dispatch into a queued run (`core.intake.submit_dispatch`)."""
        from core.intake import submit_dispatch

        return submit_dispatch(self._store, data, **how)

    def edit_criteria(
        self,
        run_id: str,
        operator: str,
        *,
        add: Any = None,
        remove: int | None = None,
        expected_version: int | None = None,
    ) -> CriteriaChange:
        """Add ``add`` to a queued run's criteria, or remove the one at ``remove``."""
        from core.criteria import run_criteria

        if remove is not None:
            return run_criteria.remove_criterion(
                self._store, run_id, remove, operator, expected_version=expected_version
            )
        return run_criteria.add_criterion(
            self._store, run_id, add, operator, expected_version=expected_version
        )


def open_fleet(
    location: str | Path,
    root: Path,
    *,
    access: Access,
    busy_timeout_s: float = 30.0,
) -> Fleet:
    """Open the store at ``location`` (`workspace_store`) for ``access``.

    Raises:
        StoreError: the store cannot be opened (the sentence says why).
    """
    if access == "console":
        store = open_store(location, migrate=False, shared=True)
    elif access == "read":
        store = _open_reading(location, busy_timeout_s)
    else:
        store = open_store(location, create=access == "create", busy_timeout_s=busy_timeout_s)
    return Fleet(store, root)


def open_writer(location: str | Path, root: Path) -> Fleet:
    """A connection of a console's own for one operator action (the caller closes it)."""
    return Fleet(open_store(location, migrate=False), root)


def _open_reading(location: str | Path, busy_timeout_s: float) -> RunStore:
    from core.store.errors import StoreError

    try:
        return open_store(location, read_only=True, busy_timeout_s=busy_timeout_s)
    except StoreError as exc:
        if exc.code != "store_outdated":
            raise
        behind = exc
    # A store older than this code's schema: brought up to date once, by a user who may.
    try:
        open_store(location, create=False, busy_timeout_s=busy_timeout_s).close()
    except StoreError as exc:
        raise (behind if exc.code == "store_read_only" else exc) from None
    return open_store(location, read_only=True, busy_timeout_s=busy_timeout_s)


def workspace_store(root: Path, given: str | None = None) -> str | Path:
    """The store a workspace uses: ``given`` (``--db``), else ``JARVIS_DB``, else
    ``[store] url`` in its ``jarvis.toml``, else its ``jarvis.db``."""
    return store_location(root, given)
