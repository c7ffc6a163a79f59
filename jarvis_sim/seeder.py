"""The seeder's hands: each step of a seeded run as the engine takes it, never around it.

A `Seeder` dispatches through intake (or an IPC task file), starts and ends runs with the host's
own moves, ingests progress, acknowledgements and dispatch files through the host's `Ingestor`,
delivers and expires steers through the steer API, gates completions for real
(`core.verdicts`), verifies criteria as the host does, and acts as an operator. The stories it
tells are `jarvis_sim.demo_seed`'s.
"""

from __future__ import annotations

import json
import random
import shutil
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
from core.lifecycle import Action, RunState, stage_of
from core.moves import host_move
from core.operator_actions import ActionResult, steer
from core.store.api import RunStore
from core.verdicts import record_completion, record_failure
from core.worker_logs import attempt_dir
from core.workspace import Workspace
from jarvis_sim.demo_tasks import TASKS, WORKER_LANES, DemoTask, build_dispatch
from jarvis_sim.samples import samples_dir
from jarvis_sim.sim_task import Step, read_task
from jarvis_sim.sim_work import build_completion, build_plan, write_checkout

#: Who acted in the seeded history (role accounts, as a shared console would show them).
OPERATORS = ("oncall", "release-lead", "qa-lead")
#: The steer acknowledgement timeout the seeded expiries are measured against.
SEED_STEER_ACK_S = 30.0
_CRASH_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/agent/loop.py", line 212, in run_step\n'
    "    result = tool.execute(call)\n"
    "ToolProcessError: simulated crash: the edit tool exited with code 137\n"
)


class SeedClock:
    """A settable clock for the store: the seeded history happens in the past, in order."""

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


class Seeder:
    def __init__(
        self, store: RunStore, root: Path, clock: SeedClock | None, rng: random.Random
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

    def complete(self, run_id: str, output: str, expect: RunState, doc: dict[str, Any]) -> None:
        self.later(2, 15)
        run = record_completion(self.store, run_id, output.encode())
        if run is not None and stage_of(run) is run_criteria.PENDING:
            run = self.verify(run_id, output, doc)
            if RunState(run["state"]) is RunState.FAILED:
                expect = RunState.FAILED  # the worker left out what the task asked for
        if run is None or RunState(run["state"]) is not expect:
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
        self, dispatch: str, output: str, expect: RunState, *, lane: str | None = None
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

    def attempt_output(self, run_id: str, output: str, expect: RunState) -> None:
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
            failing = scenario == "fail_contract"
            expect = RunState.FAILED_CONTRACT if failing else RunState.REVIEW_REQUESTED
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
