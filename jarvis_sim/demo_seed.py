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

import json
import random
import shutil
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.criteria import run_criteria
from core.criteria.allowlist import DEFAULT_POLICY
from core.host.ingest import Ingestor
from core.host.openclaw import gate_finished_results, ingest_requests
from core.host.openclaw import requests_dir as openclaw_requests_dir
from core.host.openclaw import results_dir as openclaw_results_dir
from core.host.steering import deliver_pending, expire_steers
from core.intake import submit_dispatch
from core.ipc.files import atomic_write_json
from core.ipc.layout import IpcLayout
from core.ipc.worker_env import OUTPUT_END, OUTPUT_START, iso_ms
from core.lifecycle import Action, stage_of
from core.moves import host_move
from core.operator_actions import ActionResult, approve, cancel, override, retry, steer
from core.store.sqlite_store import SqliteStore
from core.verdicts import record_completion, record_failure
from core.worker_logs import attempt_dir
from core.workspace import Workspace
from jarvis_sim.demo_tasks import TASKS, WORKER_LANES, DemoTask, build_dispatch
from jarvis_sim.samples import samples_dir
from jarvis_sim.simworker import Step, build_completion, build_plan, read_task, write_checkout

#: Who acted in the seeded history (role accounts, as a shared console would show them).
OPERATORS = ("oncall", "release-lead", "qa-lead")
#: The steer acknowledgement timeout the seeded expiries are measured against.
SEED_STEER_ACK_S = 30.0
DEFAULT_HOURS = 8.0
_CRASH_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/agent/loop.py", line 212, in run_step\n'
    "    result = tool.execute(call)\n"
    "ToolProcessError: simulated crash: the edit tool exited with code 137\n"
)


class SeedClock:
    """A settable clock for `SqliteStore`: the seeded history happens in the past, in order."""

    def __init__(self, start: datetime) -> None:
        self.moment = start.astimezone(UTC)

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)

    def at_least(self, moment: datetime) -> None:
        """Move to ``moment`` unless the clock is already past it (time never goes back)."""
        self.moment = max(self.moment, moment)


class SeedError(Exception):
    """The engine refused a step of the seeded history: the samples and the engine disagree."""


class _Seeder:
    def __init__(
        self, store: SqliteStore, root: Path, clock: SeedClock | None, rng: random.Random
    ) -> None:
        self.store = store
        self.root = root
        self.clock = clock
        self.rng = rng
        self.layout = IpcLayout(Workspace(root).ipc_dir)
        self.ingestor = Ingestor(store, self.layout)
        self.samples = samples_dir()
        self.counter = 100
        self.lane_turn = 0
        self.attempt_seq: dict[str, int] = {}

    # -- time -------------------------------------------------------------------------------

    def later(self, low: float, high: float) -> None:
        if self.clock is not None:
            self.clock.advance(self.rng.uniform(low, high))

    def now_ms(self) -> int:
        return int(datetime.fromisoformat(self.store.now()).timestamp() * 1000)

    # -- names ------------------------------------------------------------------------------

    def run_id(self) -> str:
        self.counter += 1
        day = datetime.fromisoformat(self.store.now())
        return f"task-{day:%Y%m%d}-{self.counter:03d}"

    def lane(self) -> str:
        self.lane_turn += 1
        return WORKER_LANES[self.lane_turn % len(WORKER_LANES)]

    def operator(self) -> str:
        return self.rng.choice(OPERATORS)

    # -- dispatching ------------------------------------------------------------------------

    def sample_dispatch(self, name: str, run_id: str) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((self.samples / name).read_text("utf-8"))
        doc["run_id"] = run_id
        # History made by simulated workers: no real code, so no universal checklist.
        doc.setdefault("universal_criteria", False)
        doc["request_id"] = f"req-{run_id.rsplit('-', 1)[-1]}{self.rng.getrandbits(24):06x}"
        return doc

    def submit(self, doc: dict[str, Any], lane: str, source: str = "main") -> str:
        result = submit_dispatch(
            self.store, doc, source_lane=source, target_lane=lane, actor=source
        )
        if not result.accepted:
            raise SeedError(f"dispatch {doc.get('run_id')} refused: {result.to_json()}")
        return str(doc["run_id"])

    def submit_by_file(self, doc: dict[str, Any], lane: str, source: str) -> str:
        """A dispatch the way a coordinating lane sends one: a task file the host ingests."""
        self.layout.ensure_lane(source)
        path = self.layout.tasks_dir(source) / f"{self.now_ms()}-dispatch.json"
        atomic_write_json(path, {"type": "dispatch", "target": lane, "payload": doc})
        self.ingest(path)
        return str(doc["run_id"])

    def ingest(self, path: Path) -> None:
        result = self.ingestor.handle(path)
        if result.outcome != "ingested":
            raise SeedError(f"{path.name} was not ingested: {result.outcome} {result.detail}")

    # -- one attempt ------------------------------------------------------------------------

    def start(self, run_id: str) -> None:
        self.later(2, 40)
        run = host_move(self.store, run_id, Action.START)
        self.layout.ensure_lane(run["lane"])
        self.attempt_seq[run_id] = 0

    def progress(
        self, run_id: str, steps: list[Step], *, gap: tuple[float, float] = (4, 30)
    ) -> None:
        run = self.store.get_run(run_id)
        assert run is not None
        lane = run["lane"]
        folder = self.layout.progress_dir(lane, run_id)
        folder.mkdir(parents=True, exist_ok=True)
        for step in steps:
            self.later(*gap)
            self.attempt_seq[run_id] += 1
            seq = self.attempt_seq[run_id]
            stamp = self.now_ms()
            doc: dict[str, Any] = {
                "kind": "worker_progress",
                "run_id": run_id,
                "group_folder": lane,
                "timestamp": iso_ms(stamp),
                "phase": step.phase,
                "summary": step.summary,
                "seq": seq,
            }
            if step.tool_used:
                doc["tool_used"] = step.tool_used
            path = folder / f"{stamp}-{seq}.json"
            atomic_write_json(path, doc)
            self.ingest(path)
        self.log(run_id, steps)

    def log_dir(self, run_id: str) -> Path:
        """The log folder of the run's current attempt, as the host names it."""
        run = self.store.get_run(run_id)
        assert run is not None
        return attempt_dir(self.root, run_id, int(run["retry_count"]) + 1)

    def log(self, run_id: str, steps: list[Step], tail: str = "", stderr: str = "") -> None:
        folder = self.log_dir(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"#{n} {s.phase}: {s.summary}" for n, s in enumerate(steps, 1)]
        (folder / "stdout.log").write_text("\n".join(lines) + "\n" + tail, "utf-8")
        (folder / "stderr.log").write_text(stderr, "utf-8")

    def plan(self, doc: dict[str, Any], scenario: str) -> tuple[list[Step], str]:
        """The simulated worker's events for ``scenario``, and its output (completion block)."""
        task = read_task(doc, str(doc["run_id"]))
        outcome = build_completion(doc, task, scenario, self.rng)
        steps, count = build_plan(task, outcome, scenario, self.rng)
        body = json.dumps(outcome.completion, indent=2)
        output = f"{OUTPUT_START}\n<completion>\n{body}\n</completion>\n{OUTPUT_END}\n"
        return steps[:count], output

    def steer_acked(self, run_id: str, message: str) -> None:
        """Steer, deliver, and acknowledge as a worker does; the worker then says so."""
        self.later(3, 20)
        sent = self.ok(steer(self.store, run_id, self.operator(), message))
        self.later(0.5, 2)
        deliver_pending(self.store, self.layout)
        self.later(0.1, 0.4)
        run = self.store.get_run(run_id)
        assert run is not None and sent.steer_id is not None
        ack = self.layout.ack_file(run["lane"], run_id)
        atomic_write_json(ack, {"steer_id": sent.steer_id, "acked_at": iso_ms(self.now_ms())})
        self.ingest(ack)
        text = " ".join(message.split())
        self.progress(
            run_id, [Step("steering", f"steer {sent.steer_id} acknowledged: {text}")], gap=(0.5, 3)
        )

    def steer_expired(self, run_id: str, message: str) -> None:
        """Steer and deliver; the worker never acknowledges, so it expires."""
        self.later(3, 20)
        self.ok(steer(self.store, run_id, self.operator(), message))
        self.later(0.5, 2)
        deliver_pending(self.store, self.layout)
        self.later(SEED_STEER_ACK_S + 1, SEED_STEER_ACK_S + 20)
        expire_steers(self.store, self.layout, ack_timeout_s=SEED_STEER_ACK_S)

    def steer_unsent(self, run_id: str, message: str) -> None:
        """Steer a run that ends before the steer is delivered (`settle_steers` expires it)."""
        self.later(1, 5)
        self.ok(steer(self.store, run_id, self.operator(), message))

    def settle_steers(self) -> None:
        expire_steers(self.store, self.layout, ack_timeout_s=SEED_STEER_ACK_S)

    def complete(self, run_id: str, output: str, expect: str, doc: dict[str, Any]) -> None:
        self.later(2, 15)
        run = record_completion(self.store, run_id, output.encode())
        if run is not None and stage_of(run) is run_criteria.PENDING:
            run = self.verify(run_id, output, doc)
            if run["state"] == "failed":
                expect = "failed"  # the worker left out what the task asked for
        if run is None or run["state"] != expect:
            state = run["state"] if run else None
            raise SeedError(f"run {run_id} ended {state}, expected {expect}")
        self.settle_steers()

    def verify(self, run_id: str, output: str, doc: dict[str, Any]) -> dict[str, Any]:
        """The host's verification, after the worker left its files in the run's checkout."""
        body = output.split("<completion>", 1)[1].split("</completion>", 1)[0]
        checkout = run_criteria.checkout_dir(self.root, run_id)
        write_checkout(str(checkout), json.loads(body), read_task(doc, run_id))
        run = run_criteria.begin(self.store, run_id)
        if run is None:
            raise SeedError(f"run {run_id} was not due for verification")
        verification = run_criteria.verify_run(
            self.store, self.root, run, DEFAULT_POLICY,
            now=lambda: datetime.fromisoformat(self.store.now()),
        )  # fmt: skip
        ended = run_criteria.finish(self.store, run_id, verification)
        if ended is None:
            raise SeedError(f"run {run_id}'s verification was not recorded")
        return ended

    def fail(self, run_id: str, kind: str, message: str) -> None:
        self.later(2, 15)
        if record_failure(self.store, run_id, kind, message) is None:
            raise SeedError(f"run {run_id} could not be failed ({kind})")
        self.settle_steers()

    # -- operators --------------------------------------------------------------------------

    def ok(self, result: ActionResult) -> ActionResult:
        if not result.ok:
            raise SeedError(f"operator action refused: {result.to_json()}")
        return result

    def act(self, action: Callable[..., ActionResult], run_id: str, *args: str) -> None:
        self.later(60, 900)
        self.ok(action(self.store, run_id, self.operator(), *args))

    # -- stories ----------------------------------------------------------------------------

    def from_sample(
        self, dispatch: str, output: str, expect: str, *, lane: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """A run whose completion is a bundled sample output, gated for real."""
        run_id = self.run_id()
        doc = self.sample_dispatch(dispatch, run_id)
        self.submit(doc, lane or self.lane())
        self.start(run_id)
        steps, _ = self.plan(doc, "ok")
        self.progress(run_id, steps[:-1])  # the last step names the simulator's own commit
        self.attempt_output(run_id, output, expect)
        return run_id, doc

    def attempt_output(self, run_id: str, output: str, expect: str) -> None:
        """End the attempt with a sample output, its run id rewritten to this run's."""
        sample = self.samples / output
        dispatch = json.loads((sample.parent / "dispatch.json").read_text("utf-8"))
        text = sample.read_text("utf-8").replace(str(dispatch["run_id"]), run_id)
        self.complete(run_id, text, expect, dispatch)
        with (self.log_dir(run_id) / "stdout.log").open("a", encoding="utf-8") as handle:
            handle.write(text)

    def simulated(
        self,
        scenario: str,
        *,
        task: DemoTask | None = None,
        lane: str | None = None,
        doc: dict[str, Any] | None = None,
        steer_with: tuple[str, ...] = (),
    ) -> tuple[str, dict[str, Any]]:
        """A run played by the simulated worker's own builders, ended as the host would."""
        if doc is None:
            run_id = self.run_id()
            doc = build_dispatch(
                task or self.rng.choice(TASKS),
                run_id,
                scenario=scenario,
                request_id=f"req-{self.rng.getrandbits(32):08x}",
                priority=self.rng.choice(("low", "normal", "normal", "high")),
            )
            self.submit(doc, lane or self.lane())
        run_id = str(doc["run_id"])
        self.attempt(run_id, doc, scenario, steer_with=steer_with)
        return run_id, doc

    def attempt(
        self, run_id: str, doc: dict[str, Any], scenario: str, *, steer_with: tuple[str, ...] = ()
    ) -> None:
        self.start(run_id)
        steps, output = self.plan(doc, scenario)
        half = max(1, len(steps) // 2)
        self.progress(run_id, steps[:half])
        for message in steer_with:
            if scenario == "hang":
                self.steer_expired(run_id, message)
            else:
                self.steer_acked(run_id, message)
        self.progress(run_id, steps[half:])
        if scenario == "crash":
            self.log(run_id, steps, stderr=_CRASH_TRACE)
            self.fail(run_id, "crash", "the worker exited with code 1 without a completion")
        elif scenario == "hang":
            self.later(100, 140)
            self.fail(run_id, "no_output", "no output for 120 s")
        else:
            expect = "failed_contract" if scenario == "fail_contract" else "review_requested"
            self.complete(run_id, output, expect, doc)
            with (self.log_dir(run_id) / "stdout.log").open("a", encoding="utf-8") as f:
                f.write(output)

    def openclaw(self) -> list[str]:
        """OpenClaw result folders as a supervisor leaves them, through the risk gate."""
        made: list[str] = []
        requests = openclaw_requests_dir(self.root)
        requests.mkdir(parents=True, exist_ok=True)
        for folder in sorted((self.samples / "openclaw").glob("results-*")):
            request = json.loads((folder / "request.json").read_text("utf-8"))
            task_id = str(request["task_id"])
            self.later(60, 600)
            (requests / f"{task_id}.json").write_bytes((folder / "request.json").read_bytes())
            ingest_requests(self.store, self.root, self.layout.errors_dir)
            results = openclaw_results_dir(self.root, task_id)
            shutil.copytree(folder, results, ignore=shutil.ignore_patterns("request.json"))
            self.later(300, 1500)
            gate_finished_results(self.store, self.root)
            made.append(task_id)
        return made


def seed_workspace(
    store: SqliteStore,
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
    root = workspace_root or store.path.parent
    rng = random.Random(seed)
    s = _Seeder(store, root, clock, rng)
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


def _stories(s: _Seeder) -> list[Callable[[], object]]:
    backend = "dispatches/valid-backend-fix.json"
    ui = "dispatches/valid-ui-dashboard.json"
    out = "outputs/backend-fix/"
    ui_out = "outputs/ui-dashboard/"
    first: dict[str, str] = {}

    def approved_backend() -> None:
        run_id, _ = s.from_sample(backend, out + "review-pr-url.txt", "review_requested")
        first["backend"] = run_id
        s.act(approve, run_id)

    def approved_ui() -> None:
        run_id, _ = s.from_sample(
            ui, ui_out + "review-with-browser-evidence.txt", "review_requested"
        )
        s.act(approve, run_id)

    def left(output: str, expect: str, dispatch: str = backend) -> Callable[[], None]:
        def story() -> None:
            s.from_sample(dispatch, output, expect)

        return story

    def overridden(output: str, dispatch: str, reason: str) -> Callable[[], None]:
        def story() -> None:
            run_id, _ = s.from_sample(dispatch, output, "failed_contract")
            s.act(override, run_id, reason)

        return story

    def contract_then_retried() -> None:
        run_id, doc = s.from_sample(
            backend, out + "failed_contract-no-completion-block.txt", "failed_contract"
        )
        s.act(retry, run_id)
        s.start(run_id)
        steps, _ = s.plan(doc, "ok")
        s.progress(run_id, steps[:-1])
        s.attempt_output(run_id, out + "review-pr-url.txt", "review_requested")
        s.act(approve, run_id)

    def mismatch_then_retried() -> None:
        run_id, doc = s.from_sample(
            backend, out + "failed_contract-run-id-mismatch.txt", "failed_contract"
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
        s.attempt_output(run_id, out + "failed_contract-missing-artifacts.txt", "failed_contract")

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
        left(out + "failed_contract-bad-commit-sha.txt", "failed_contract"),
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
        left(ui_out + "failed_contract-evidence-cites-screenshot.txt", "failed_contract", ui),
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
        left(out + "review-pr-skipped.txt", "review_requested"),
        cancelled_running,
        crashed_twice_more,
        hung_then_fixed,
        from_lead_lane,
        left(ui_out + "review-last-parsing-block-wins.txt", "review_requested", ui),
        mismatch_then_retried,
        plain("ok", steers=("Use the existing helper in utils instead of a new one.",)),
        plain("verify_fail"),
        plain("ok"),
    ]


def _report(store: SqliteStore, openclaw: list[str]) -> dict[str, Any]:
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
    store = SqliteStore(workspace.db_path, clock=clock)
    try:
        if store.newest_run_ids(1):
            raise SeedError(f"{workspace.db_path} already holds runs; seed only a new workspace.")
        return seed_workspace(
            store, clock=clock, workspace_root=workspace.root, seed=seed, hours=hours * 0.9
        )
    finally:
        store.close()
