"""The typed reads of the front door: what a front end gets back when it asks about the fleet.

A run itself stays the mapping of `core.run_views` (its JSON shape, which ``--json`` prints and
the console's table reads); what is typed here is what gathers runs: the fleet's summary, a run
with everything its panels show, a diff's opening, the hosts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.repos.claims import FileChange
    from core.repos.diff import DiffRefusal, DiffSource, PatchPage

Row = dict[str, Any]
"""A run, a journal entry, a host: a row as `core.run_views` shapes it."""


@dataclass(frozen=True)
class FleetSummary:
    """The fleet at a glance: runs per state, where the journal stands, what agents spent."""

    counts: dict[str, int]
    """Runs per state."""
    last_seq: int
    """The newest journal entry's number."""
    burn: dict[str, Any] | None
    """Tokens and cost every run's agent reported, None when none reported any."""


@dataclass(frozen=True)
class HostLine:
    """One host serving the store, as a live view shows it."""

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


@dataclass
class RunView:
    """A run's detail: everything the console's panels show for one run."""

    run_id: str
    detail: dict[str, Any] | None
    """`core.run_views.run_detail`, or None when the run is gone."""
    journal: list[dict[str, Any]] = field(default_factory=list)
    """The run's newest journal entries, oldest first."""
    peers: list[dict[str, Any]] = field(default_factory=list)
    """Its failure fingerprints and how many other runs share each."""


@dataclass
class DiffOpening:
    """What a diff view shows first: where the run's diff is (or why there is none), its
    files, those a gate's finding names, and the patch's first page."""

    run_id: str
    source: DiffSource | None
    refusal: DiffRefusal | None
    files: list[FileChange] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    """Paths of ``files`` named by a finding of the latest attempt's gates, in diff order."""
    first: PatchPage | None = None
