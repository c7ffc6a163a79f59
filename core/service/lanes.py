"""The fleet by lane: each lane's worker profile, sandbox, concurrency and runs, the hosts serving
it, and the operator's lane actions (pause, resume), declared once like the run actions.

`LANE_ACTIONS` is what the console's fleet view binds and lists in its palette, and what
``jarvis lane`` makes its verbs of; both carry an action out with one `LaneRequest` through
`lane_act`, whose engine call (`core.operator_actions.pause_lane`, `resume_lane`) is one
transaction, journaled and audited under ``lane:NAME``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.service.action_types import Refusal
from core.service.errors import ServiceError

if TYPE_CHECKING:
    from core.store.api import RunStore

__all__ = [
    "LANE_ACTIONS",
    "FleetLanes",
    "LaneAction",
    "LaneLine",
    "LaneOutcome",
    "LaneRequest",
    "fleet_lanes",
    "lane_act",
]


@dataclass(frozen=True)
class LaneAction:
    """One lane action, declared once."""

    name: str
    key: str
    """The fleet view's key."""
    label: str
    help: str
    asks: Literal["nothing", "reason"]
    verb: str
    """``jarvis lane VERB NAME``."""
    done: str
    """The notification's verb when it went through."""


LANE_ACTIONS: dict[str, LaneAction] = {
    action.name: action
    for action in (
        LaneAction("pause_lane", "p", "Pause lane",
                   "Pause the selected lane: its queued runs wait, running ones finish "
                   "(asks why)", "reason", "pause", "Paused"),
        LaneAction("resume_lane", "u", "Resume lane",
                   "Resume the selected lane: its queued runs start as its concurrency allows",
                   "nothing", "resume", "Resumed"),
    )
}  # fmt: skip
"""Every lane action by name, in the order the fleet view shows them."""


@dataclass(frozen=True)
class LaneRequest:
    action: str
    """`LaneAction.name`."""
    lane: str
    operator: str
    reason: str | None = None


@dataclass(frozen=True)
class LaneOutcome:
    request: LaneRequest
    ok: bool
    paused: bool
    """Whether the lane is paused now (as this transaction left or found it)."""
    pause: dict[str, Any] | None
    """The pause in place: ``reason``, ``paused_by``, ``paused_at``."""
    refusal: Refusal | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "action": self.request.action,
            "lane": self.request.lane,
            "paused": self.paused,
            "pause": self.pause,
            "refusal": self.refusal.to_json() if self.refusal else None,
        }


def lane_act(store: RunStore, request: LaneRequest) -> LaneOutcome:
    """Carry out ``request``: one transaction; a lane already paused (or not paused) is refused
    with a sentence, never paused twice.

    Raises:
        ServiceError: the request names no lane action (``unknown_action``).
    """
    from core import operator_actions

    if request.action == "pause_lane":
        done = operator_actions.pause_lane(store, request.lane, request.operator, request.reason)
    elif request.action == "resume_lane":
        done = operator_actions.resume_lane(store, request.lane, request.operator)
    else:
        raise ServiceError("unknown_action", f"There is no lane action {request.action!r}.")
    refusal = Refusal(done.refusal.code, done.refusal.message) if done.refusal else None
    return LaneOutcome(request, done.ok, done.pause is not None, done.pause, refusal)


@dataclass(frozen=True)
class LaneLine:
    """One lane as the fleet view shows it."""

    lane: str
    profile: str | None
    """Its worker profile's name; None: the plain ``[workers] command``."""
    agent: str
    """The profile's agent (``command`` for the plain command)."""
    sandbox: str
    """``bwrap``, ``none``, or ``auto`` (bwrap where it works on the host)."""
    concurrency: int
    """Runs at a time on one host (0: paused by configuration)."""
    counts: dict[str, int]
    """Its runs by state."""
    hosts: tuple[str, ...]
    """The live hosts serving it."""
    pause: dict[str, Any] | None
    """The operator's pause: ``reason``, ``paused_by``, ``paused_at``; None: not paused."""

    @property
    def worker(self) -> str:
        """What works it, in words: ``claude (claude-code)``, or ``[workers] command``."""
        return f"{self.profile} ({self.agent})" if self.profile else "[workers] command"

    @property
    def running(self) -> int:
        return self.counts.get("running", 0)

    @property
    def queued(self) -> int:
        return self.counts.get("queued", 0)


@dataclass(frozen=True)
class FleetLanes:
    """The fleet view's read: every lane, every host, and why ``jarvis.toml`` could not be used
    (the lanes are then shown with the defaults)."""

    lanes: tuple[LaneLine, ...]
    hosts: tuple[dict[str, Any], ...]
    config_problem: str | None


def fleet_lanes(store: RunStore, root: Path) -> FleetLanes:
    """Every lane the workspace knows (configured, with runs, paused, or named by a host), with
    what works it, its runs by state and its pause; every host with its lease's state."""
    from core.host.config import ConfigError, HostConfig, load_config
    from core.store.hosts import lease_state

    problem = None
    try:
        config = load_config(root)
    except ConfigError as exc:
        config, problem = HostConfig(), str(exc)
    now = store.now()
    hosts = store.hosts()
    for host in hosts:
        host["state"] = lease_state(host, now)
    counts: dict[str, dict[str, int]] = {}
    for row in store.lane_state_counts():
        counts.setdefault(str(row["lane"]), {})[str(row["state"])] = int(row["n"])
    pauses = {str(p["lane"]): p for p in store.lane_pauses()}
    named = {lane for host in hosts for lane in host["lanes"] or ()}
    names = sorted({*config.lanes, *config.workers.lane_concurrency, *counts, *pauses, *named})
    live = [h for h in hosts if h["state"] == "live"]
    lines = []
    for lane in names:
        found = config.profile_for(lane)
        profile, agent = (found[0], str(found[1].agent)) if found else (None, "command")
        serving = tuple(h["name"] for h in live if h["lanes"] is None or lane in h["lanes"])
        lines.append(LaneLine(
            lane, profile, agent, config.sandbox_for(lane) or "auto", config.lane_limit(lane),
            counts.get(lane, {}), serving, pauses.get(lane),
        ))  # fmt: skip
    return FleetLanes(tuple(lines), tuple(hosts), problem)
