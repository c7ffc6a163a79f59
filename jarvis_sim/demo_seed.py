"""A realistic history for a fresh workspace, built from ``sample_runs/`` through the engine.

`seed_workspace` fills a store with a few hours of past work so that the console opens on runs in
every state an operator meets: done (some approved, some overridden with a reason), waiting for
review, failed its contract (with the failed gates), failed (with error.v1 failure records, several
sharing one fingerprint), retried, cancelled, OpenClaw runs through the risk gate, and steers that
were acknowledged or expired. Nothing is written around the engine: every run is dispatched with
`submit_dispatch` (or an IPC task file), started and ended with the host's own moves, its progress,
acknowledgements and dispatch files go through the host's `Ingestor`, steers through the steer
API and the host's delivery and expiry, and completions through the real gates. So the journal,
the audit trail and the gate rows agree exactly as they would after a real day of work.

Completions come from ``sample_runs/outputs`` where a sample fits, and otherwise from the
simulated worker's own completion and progress builders, so seeded and live runs read alike.

No seeded run is left ``queued`` or ``running``: the live fleet supplies those, and a host's
start-up recovery would fail a ``running`` run whose worker does not exist.

Time: pass the `SeedClock` the store was opened with and the history is spread over the hours
before now, in order (`seed_new_workspace` does both). With any other clock, everything is
stamped with that clock's time.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.lifecycle import RunState
from core.operator_actions import ActionResult, approve, cancel, override, retry
from core.store.api import RunStore
from core.store.location import open_store
from core.workspace import Workspace
from jarvis_sim.demo_tasks import TASKS, WORKER_LANES, build_dispatch
from jarvis_sim.seeder import SeedClock, Seeder, SeedError

__all__ = ["DEFAULT_HOURS", "SeedClock", "SeedError", "seed_new_workspace", "seed_workspace"]

DEFAULT_HOURS = 8.0


def seed_workspace(
    store: RunStore,
    *,
    clock: SeedClock | None = None,
    workspace_root: Path | None = None,
    seed: int = 20260301,
    hours: float = DEFAULT_HOURS,
) -> dict[str, Any]:
    """Fill a fresh workspace's store with a realistic history; returns what it made.

    Args:
        store: the workspace's store (``<workspace>/jarvis.db``), with no runs yet.
        clock: the clock the store was opened with, to spread the history over ``hours``.
        workspace_root: where the IPC tree, logs and OpenClaw folders go (default: the store's
            folder).
        seed: the random seed: the same seed tells the same story.

    Raises:
        SeedError: the engine refused a step (a sample no longer behaves as its name says).
    """
    root = workspace_root
    if root is None:
        if store.path is None:
            raise SeedError("a store on a database server needs its workspace named")
        root = store.path.parent
    rng = random.Random(seed)
    s = Seeder(store, root, clock, rng)
    stories = _stories(s)
    if clock is not None:
        start = clock.moment
        spacing = timedelta(hours=hours) / (len(stories) + 1)
    for index, story in enumerate(stories):
        if clock is not None:
            clock.at_least(start + spacing * index)
        story()
    openclaw = s.openclaw()
    return _report(store, openclaw)


def _stories(s: Seeder) -> list[Callable[[], object]]:
    backend = "dispatches/valid-backend-fix.json"
    ui = "dispatches/valid-ui-dashboard.json"
    out = "outputs/backend-fix/"
    ui_out = "outputs/ui-dashboard/"
    first: dict[str, str] = {}

    def approved_backend() -> None:
        run_id, _ = s.from_sample(backend, out + "review-pr-url.txt", RunState.REVIEW_REQUESTED)
        first["backend"] = run_id
        s.act(approve, run_id)

    def approved_ui() -> None:
        run_id, _ = s.from_sample(
            ui, ui_out + "review-with-browser-evidence.txt", RunState.REVIEW_REQUESTED
        )
        s.act(approve, run_id)

    def left(output: str, expect: RunState, dispatch: str = backend) -> Callable[[], None]:
        def story() -> None:
            s.from_sample(dispatch, output, expect)

        return story

    def overridden(output: str, dispatch: str, reason: str) -> Callable[[], None]:
        def story() -> None:
            run_id, _ = s.from_sample(dispatch, output, RunState.FAILED_CONTRACT)
            s.act(override, run_id, reason)

        return story

    def contract_then_retried() -> None:
        run_id, doc = s.from_sample(
            backend, out + "failed_contract-no-completion-block.txt", RunState.FAILED_CONTRACT
        )
        s.act(retry, run_id)
        s.start(run_id)
        steps, _ = s.plan(doc, "ok")
        s.progress(run_id, steps[:-1])
        s.attempt_output(run_id, out + "review-pr-url.txt", RunState.REVIEW_REQUESTED)
        s.act(approve, run_id)

    def mismatch_then_retried() -> None:
        run_id, doc = s.from_sample(
            backend, out + "failed_contract-run-id-mismatch.txt", RunState.FAILED_CONTRACT
        )
        s.act(retry, run_id)
        s.attempt(run_id, doc, "ok")

    def expired_on_contract_failure() -> None:
        run_id = s.run_id()
        doc = s.sample_dispatch(backend, run_id)
        s.submit(doc, s.lane())
        s.start(run_id)
        steps, _ = s.plan(doc, "ok")
        s.progress(run_id, steps[:2])
        s.steer_expired(run_id, "Stop and report what you have; the release branch is frozen.")
        s.progress(run_id, steps[2:-1])
        s.attempt_output(
            run_id, out + "failed_contract-missing-artifacts.txt", RunState.FAILED_CONTRACT
        )

    def crashed() -> None:
        s.simulated("crash")

    def crashed_twice_more() -> None:
        run_id, doc = s.simulated("crash")
        for _ in range(2):
            s.act(retry, run_id)
            s.attempt(run_id, doc, "crash")

    def crashed_then_fixed() -> None:
        run_id, doc = s.simulated("crash")
        s.act(retry, run_id)
        s.attempt(run_id, doc, "ok")
        s.act(approve, run_id)

    def hung() -> None:
        s.simulated("hang", steer_with=("Are you stuck? Post your current step.",))

    def hung_then_fixed() -> None:
        run_id, doc = s.simulated("hang")
        s.act(retry, run_id)
        s.attempt(run_id, doc, "ok")

    def hard_limit() -> None:
        run_id = s.run_id()
        doc = build_dispatch(s.rng.choice(TASKS), run_id, scenario="slow")
        s.submit(doc, s.lane())
        s.start(run_id)
        steps, _ = s.plan(doc, "slow")
        s.progress(run_id, steps[: len(steps) - 4], gap=(60, 110))
        s.fail(run_id, "hard_limit", "still running after the 3600 s limit")

    def host_restarted() -> None:
        run_id = s.run_id()
        doc = build_dispatch(s.rng.choice(TASKS), run_id)
        s.submit(doc, s.lane())
        s.start(run_id)
        steps, _ = s.plan(doc, "ok")
        s.progress(run_id, steps[:3])
        s.steer_unsent(run_id, "Keep the public API unchanged.")
        s.later(30, 90)
        s.fail(
            run_id,
            "host_restart",
            "the host restarted while this run was running; its worker was stopped",
        )

    def cancelled_queued() -> None:
        run_id = s.run_id()
        s.submit(build_dispatch(s.rng.choice(TASKS), run_id), s.lane())
        s.act(cancel, run_id, "Superseded: the same fix landed from another branch.")

    def cancelled_running() -> None:
        run_id = s.run_id()
        doc = build_dispatch(s.rng.choice(TASKS), run_id)
        s.submit(doc, s.lane())
        s.start(run_id)
        steps, _ = s.plan(doc, "ok")
        s.progress(run_id, steps[:3])
        s.steer_unsent(run_id, "Wait: the base branch is about to change.")
        s.later(5, 30)
        s.ok(cancel(s.store, run_id, s.operator(), "Wrong base branch; will re-dispatch."))
        s.settle_steers()

    def continued_session() -> None:
        run_id = s.run_id()
        doc = s.sample_dispatch("dispatches/valid-continue-session.json", run_id)
        doc["parent_run_id"] = first.get("backend", doc["parent_run_id"])
        s.submit(doc, WORKER_LANES[1])
        s.attempt(run_id, doc, "ok")

    def from_lead_lane() -> None:
        run_id = s.run_id()
        doc = build_dispatch(s.rng.choice(TASKS), run_id, priority="high")
        s.submit_by_file(doc, s.lane(), "andy-developer")
        s.attempt(run_id, doc, "ok", steer_with=("Add a regression test for the bug first.",))

    def plain(
        scenario: str,
        *,
        then: Callable[..., ActionResult] | None = None,
        args: tuple[str, ...] = (),
        steers: tuple[str, ...] = (),
    ) -> Callable[[], None]:
        def story() -> None:
            run_id, _ = s.simulated(scenario, steer_with=steers)
            if then is not None:
                s.act(then, run_id, *args)

        return story

    return [
        approved_backend,
        plain("ok", then=approve),
        crashed,
        approved_ui,
        left(out + "failed_contract-bad-commit-sha.txt", RunState.FAILED_CONTRACT),
        hung,
        overridden(
            out + "failed_contract-branch-mismatch.txt",
            backend,
            "Branch renamed by the merge queue; commit checked on the new branch by hand.",
        ),
        plain(
            "slow",
            steers=(
                "Run the full suite, not only the touched tests.",
                "Keep the diff under 200 lines.",
            ),
        ),
        crashed,
        contract_then_retried,
        cancelled_queued,
        plain("fail_contract"),
        crashed_then_fixed,
        left(
            ui_out + "failed_contract-evidence-cites-screenshot.txt", RunState.FAILED_CONTRACT, ui
        ),
        host_restarted,
        overridden(
            ui_out + "failed_contract-base-url-not-loopback.txt",
            ui,
            "Staging is only reachable over the VPN; evidence checked on loopback by hand.",
        ),
        plain("verify_fail"),
        expired_on_contract_failure,
        continued_session,
        crashed,
        hard_limit,
        plain(
            "fail_contract",
            then=override,
            args=("Gate false positive: the sha is a valid short sha on a fork.",),
        ),
        left(out + "review-pr-skipped.txt", RunState.REVIEW_REQUESTED),
        cancelled_running,
        crashed_twice_more,
        hung_then_fixed,
        from_lead_lane,
        left(ui_out + "review-last-parsing-block-wins.txt", RunState.REVIEW_REQUESTED, ui),
        mismatch_then_retried,
        plain("ok", steers=("Use the existing helper in utils instead of a new one.",)),
        plain("verify_fail"),
        plain("ok"),
    ]


def _report(store: RunStore, openclaw: list[str]) -> dict[str, Any]:
    by_state = store.state_counts()
    steers: Counter[str] = Counter()
    for row in store.steer_counts(None):
        steers[str(row["status"])] += int(row["n"])
    runs = store.runs_by_id(None)
    span = store.journal_span()
    return {
        "runs": sum(by_state.values()),
        "by_state": dict(sorted(by_state.items())),
        "overridden": sorted(r["run_id"] for r in runs if r["overridden"]),
        "retried": sorted(r["run_id"] for r in runs if r["retry_count"] > 0),
        "steers": dict(sorted(steers.items())),
        "progress_events": store.progress_event_count(),
        "shared_fingerprint": store.most_shared_fingerprint(),
        "openclaw": openclaw,
        "first_at": span["first"],
        "last_at": span["last"],
    }


def seed_new_workspace(
    root: Path, *, hours: float = DEFAULT_HOURS, seed: int = 20260301
) -> dict[str, Any]:
    """Seed the workspace at ``root`` with history ending a few minutes ago; returns the report."""
    workspace = Workspace.resolve(root)
    clock = SeedClock(datetime.now(UTC) - timedelta(hours=hours))
    store = open_store(workspace.db_path, clock=clock)
    try:
        if store.newest_run_ids(1):
            raise SeedError(f"{workspace.db_path} already holds runs; seed only a new workspace.")
        return seed_workspace(
            store, clock=clock, workspace_root=workspace.root, seed=seed, hours=hours * 0.9
        )
    finally:
        store.close()
