"""The demo's live fleet: a stand-in coordinator that keeps dispatching work until stopped.

``python -m jarvis_sim.demo_fleet --workspace DIR [--interval S] [--seed N]`` dispatches a new run
every ``interval`` seconds (jittered), as a day of real work goes: of every forty dispatches,
thirty-seven end well (``ok``, some ``slow``) and three fail, each failure scenario in turn, so
every scenario comes up within `EVERY_SCENARIO_WITHIN` dispatches — to the lanes
``jarvis-worker-1`` to ``jarvis-worker-4``, from the ``main`` lane and now and then from
``andy-developer``. The first few go out at once, so a console shows live work within moments of
the start. Now and then it also steers a running ``slow`` run (the worker acknowledges it) or a
``hang`` run (which never does, so the steer expires), so steer receipts move live too. A
teammate reviews the runs that ended well: after a few seconds in review it approves them (the
one store write the fleet makes), but one in fifteen it leaves to the operator, so what needs a
human stays a few runs, as on a real day (tests/demo/test_fleet_share.py bounds the share).

How it dispatches: by writing ``tasks/<name>.json`` files — ``{"type": "dispatch", "target",
"payload"}`` and ``{"type": "steer_worker", "run_id", "message"}`` — into its own lane folder of
the IPC tree, temp file then rename (docs/ipc.md). That is what a real coordinating lane does,
and it is why this feeder does not call `submit_dispatch`: the demo then exercises the path real
work takes (the lane folder as the writer's identity, authorization, intake, quarantine), the
feeder never competes for the store's write lock, and it would work unchanged against a host that
shares only the folder. It reads the store, read-only, for one thing: backpressure. When the
queued runs plus its own not-yet-ingested files reach ``--max-backlog``, it waits, so a slow or
stopped host never faces a growing pile.

It runs until SIGTERM or SIGINT and then exits 0 at once (within one 50 ms tick), printing one
JSON line with what it sent.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from core.ipc.files import atomic_write_json
from core.ipc.layout import IpcLayout
from core.lifecycle import RunState
from core.store.location import open_store
from core.workspace import Workspace, WorkspaceError
from jarvis_sim.demo_tasks import TASKS, WORKER_LANES, build_dispatch

#: What a deck of forty dispatches holds: runs that end well (most of a day's work), and
#: `FAILING_PER_DECK` that fail, each a different failure taken in turn from `FAILURES`, so
#: every scenario comes up within `EVERY_SCENARIO_WITHIN` dispatches. Failing a third of the
#: time (as once) made the demo noise: after nine minutes 364 of 382 runs needed a human.
ENDS_WELL = {"ok": 33, "slow": 4}
FAILURES = (
    "fail_contract", "crash", "verify_fail", "hang",
    # The demo's projects are real repositories: some workers lie about what they committed,
    # and the git gates show the evidence.
    "lie_files", "lie_unclaimed", "lie_commit", "stale_commit", "uncommitted", "leak_secret",
)  # fmt: skip
FAILING_PER_DECK = 3
DECK_SIZE = sum(ENDS_WELL.values()) + FAILING_PER_DECK
EVERY_SCENARIO_WITHIN = DECK_SIZE * -(-len(FAILURES) // FAILING_PER_DECK)
#: The teammate who reviews the fleet's work leaves one review in this many to the operator.
LEFT_TO_THE_OPERATOR_EVERY = 15
#: Seconds a run that ended well waits in review before the teammate approves it: long enough
#: to be seen there.
REVIEW_DELAY_S = (3.0, 10.0)
REVIEW_EVERY_S = 1.0
TEAMMATE = "teammate"
SOURCES = ("main", "main", "main", "main", "andy-developer")
DEFAULT_INTERVAL_S = 1.5
DEFAULT_BURST = len(WORKER_LANES)
DEFAULT_MAX_BACKLOG = 8
STEER_EVERY_S = 6.0
TICK_S = 0.05
_STEERABLE = {"slow": 2, "hang": 1}
"""Scenarios the fleet steers, and how many steers each such run gets at most."""
_STEERS = (
    "Focus on the failing test first.",
    "Keep the public API unchanged.",
    "Add a regression test before the fix.",
    "Leave the migrations folder alone.",
    "Run the linter before you commit.",
    "Post your plan before editing more files.",
)
_HANG_STEER = "No progress for a while: are you stuck? Report your current step."


@dataclass
class Fleet:
    """The feeder's state: what it dispatched, and which runs it may still steer."""

    root: Path
    rng: random.Random
    lanes: Sequence[str] = WORKER_LANES
    max_backlog: int = DEFAULT_MAX_BACKLOG
    sent: Counter[str] = field(default_factory=Counter)
    steers: int = 0
    deck: list[str] = field(default_factory=list)
    failures_dealt: int = 0
    reviews: dict[str, float] = field(default_factory=dict)
    """Runs that should end well → when the teammate may review them (monotonic)."""
    reviewed: int = 0
    approved: int = 0
    steerable: dict[str, tuple[str, int, float]] = field(default_factory=dict)
    """run_id → (scenario, steers left, dispatched at)."""
    _files: int = 0
    _runs: int = 0
    _day: str = ""
    _lane_turn: int = 0

    def __post_init__(self) -> None:
        self.layout = IpcLayout(Workspace(self.root).ipc_dir)
        for source in set(SOURCES):
            self.layout.ensure_lane(source)
        self.store = open_store(Workspace(self.root).db_path)

    def close(self) -> None:
        self.store.close()

    def deal(self) -> str:
        if not self.deck:
            self.deck = new_deck(self.rng, self.failures_dealt)
            self.failures_dealt += FAILING_PER_DECK
        return self.deck.pop()

    def backlog(self) -> int:
        queued = self.store.state_counts().get(RunState.QUEUED.value, 0)
        waiting = 0
        for source in set(SOURCES):
            with contextlib.suppress(OSError):
                waiting += sum(
                    1
                    for entry in os.scandir(self.layout.tasks_dir(source))
                    if entry.name.endswith(".json") and not entry.name.startswith(".")
                )
        return int(queued) + waiting

    def _write(self, source: str, doc: dict[str, Any]) -> Path:
        self._files += 1
        stamp = time.time_ns() // 1_000_000
        path = self.layout.tasks_dir(source) / f"{stamp}-{os.getpid()}-{self._files}.json"
        atomic_write_json(path, doc)
        return path

    def next_run_id(self) -> str:
        """``task-<today>-<n>`` as a dispatcher numbers them: one past the day's highest."""
        day = f"task-{datetime.now(UTC):%Y%m%d}-"
        if day != self._day:
            self._day = day
            self._runs = 0
            for run_id in self.store.run_ids_starting(day):
                number = run_id[len(day) :]
                if number.isdigit():
                    self._runs = max(self._runs, int(number))
        self._runs += 1
        return f"{day}{self._runs:03d}"

    def dispatch(self) -> str:
        """Send one dispatch; returns its run id."""
        scenario = self.deal()
        run_id = self.next_run_id()
        self._lane_turn += 1
        lane = self.lanes[self._lane_turn % len(self.lanes)]
        source = self.rng.choice(SOURCES)
        doc = build_dispatch(
            self.rng.choice(TASKS),
            run_id,
            scenario=scenario,
            request_id=f"req-{self.rng.getrandbits(40):010x}",
            priority=self.rng.choice(("low", "normal", "normal", "normal", "high", "urgent")),
        )
        self._write(source, {"type": "dispatch", "target": lane, "payload": doc})
        self.sent[scenario] += 1
        if scenario in _STEERABLE:
            self.steerable[run_id] = (scenario, _STEERABLE[scenario], time.monotonic())
        if scenario in ENDS_WELL:
            self.reviews[run_id] = time.monotonic() + self.rng.uniform(*REVIEW_DELAY_S)
        return run_id

    def review(self) -> list[str]:
        """The teammate's turn: approve the runs that ended well and waited long enough in
        review, but one in `LEFT_TO_THE_OPERATOR_EVERY`, left for the operator; the runs
        approved. Approved without merging: the branch stays for whoever merges the day's work.
        """
        from core.operator_actions import approve

        now = time.monotonic()
        due = [run_id for run_id, at in self.reviews.items() if at <= now]
        approved = []
        for run_id, state in self.store.states_of(due).items():
            if state in (RunState.QUEUED.value, RunState.RUNNING.value):
                continue  # not ended yet: looked at again next turn
            del self.reviews[run_id]
            if state != RunState.REVIEW_REQUESTED.value:
                continue  # it did not end well after all: the operator's
            self.reviewed += 1
            if leaves_to_the_operator(self.reviewed):
                continue
            if approve(self.store, run_id, TEAMMATE, merge=False).ok:
                approved.append(run_id)
        self.approved += len(approved)
        return approved

    def steer_one(self) -> str | None:
        """Steer one running slow or hang run this fleet sent, if there is one; its run id."""
        now = time.monotonic()
        for run_id, (_, left, at) in list(self.steerable.items()):
            if left <= 0 or now - at > 300:
                del self.steerable[run_id]
        if not self.steerable:
            return None
        ids = list(self.steerable)
        running = [
            run_id
            for run_id, state in self.store.states_of(ids).items()
            if RunState(state) is RunState.RUNNING
        ]
        if not running:
            return None
        run_id = self.rng.choice(running)
        scenario, left, at = self.steerable[run_id]
        message = _HANG_STEER if scenario == "hang" else self.rng.choice(_STEERS)
        self._write("main", {"type": "steer_worker", "run_id": run_id, "message": message})
        self.steerable[run_id] = (scenario, left - 1, at)
        self.steers += 1
        return run_id

    def report(self) -> dict[str, Any]:
        return {
            "dispatched": sum(self.sent.values()),
            "by_scenario": dict(sorted(self.sent.items())),
            "steers": self.steers,
            "approved": self.approved,
        }


def new_deck(rng: random.Random, failures_dealt: int) -> list[str]:
    """A shuffled deck of `DECK_SIZE`: the runs that end well, and the next
    `FAILING_PER_DECK` failures in turn after the ``failures_dealt`` before."""
    deck = [name for name, cards in ENDS_WELL.items() for _ in range(cards)]
    deck += [FAILURES[(failures_dealt + n) % len(FAILURES)] for n in range(FAILING_PER_DECK)]
    rng.shuffle(deck)
    return deck


def leaves_to_the_operator(nth_review: int) -> bool:
    """Whether the teammate leaves its ``nth_review`` (from 1) to the operator."""
    return nth_review % LEFT_TO_THE_OPERATOR_EVERY == 0


def run_fleet(
    root: Path,
    *,
    should_stop: Callable[[], bool],
    interval_s: float = DEFAULT_INTERVAL_S,
    seed: int | None = None,
    burst: int = DEFAULT_BURST,
    max_backlog: int = DEFAULT_MAX_BACKLOG,
    steer_every_s: float = STEER_EVERY_S,
) -> dict[str, Any]:
    """Dispatch until ``should_stop()``; returns what was sent (see `Fleet.report`)."""
    fleet = Fleet(root, random.Random(seed), max_backlog=max_backlog)
    try:
        for _ in range(burst):  # live work at once, one run per lane
            fleet.dispatch()
        next_dispatch = time.monotonic() + interval_s
        next_steer = time.monotonic() + steer_every_s / 2
        next_review = time.monotonic() + REVIEW_EVERY_S
        while not should_stop():
            now = time.monotonic()
            if now >= next_dispatch:
                if fleet.backlog() < fleet.max_backlog:
                    fleet.dispatch()
                next_dispatch = now + interval_s * fleet.rng.uniform(0.5, 1.5)
            if now >= next_steer:
                fleet.steer_one()
                next_steer = now + steer_every_s * fleet.rng.uniform(0.5, 1.5)
            if now >= next_review:
                fleet.review()
                next_review = now + REVIEW_EVERY_S
            time.sleep(TICK_S)
        return fleet.report()
    finally:
        fleet.close()


class _Stop:
    """Set from a signal handler; the loop looks at it every tick."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        del frame
        self.signum = signum

    def __call__(self) -> bool:
        return self.signum is not None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jarvis_sim.demo_fleet",
        description="Keep dispatching simulated work to a workspace's host until SIGTERM.",
    )
    parser.add_argument("--workspace", required=True, metavar="DIR")
    parser.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL_S,
        metavar="S",
        help=f"seconds between dispatches, jittered (default: {DEFAULT_INTERVAL_S:g})",
    )
    parser.add_argument("--seed", type=int, default=None, metavar="N", help="random seed")
    parser.add_argument(
        "--burst",
        type=int,
        default=DEFAULT_BURST,
        metavar="N",
        help=f"dispatches sent at once on start (default: {DEFAULT_BURST})",
    )
    parser.add_argument(
        "--max-backlog",
        type=int,
        default=DEFAULT_MAX_BACKLOG,
        metavar="N",
        help="wait while this many runs are queued or not yet ingested "
        f"(default: {DEFAULT_MAX_BACKLOG})",
    )
    args = parser.parse_args(argv)
    if args.interval <= 0 or args.burst < 0 or args.max_backlog < 1:
        parser.error("--interval must be positive, --burst >= 0 and --max-backlog >= 1")
    stop = _Stop()
    signal.signal(signal.SIGTERM, stop.handle)
    signal.signal(signal.SIGINT, stop.handle)
    try:
        root = Workspace.resolve(args.workspace).root
        report = run_fleet(
            root,
            should_stop=stop,
            interval_s=args.interval,
            seed=args.seed,
            burst=args.burst,
            max_backlog=args.max_backlog,
        )
    except (WorkspaceError, OSError) as exc:
        print(f"demo_fleet: {exc}", file=sys.stderr, flush=True)
        return 2
    with contextlib.suppress(OSError):
        print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
