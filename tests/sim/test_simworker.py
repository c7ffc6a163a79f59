"""The simulated worker, run as the host runs it: a real process on a temporary IPC tree.

Every scenario is checked through its exit code, its progress files (the wire format the host
ingests) and the completion gates of `core.contracts.completion`; the completion builder is also
checked in process over many seeds, where a subprocess per case would be too slow.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from core.contracts.completion import evaluate_completion, extract_completion
from core.contracts.dispatch import validate_dispatch
from core.ipc.worker_env import REQUIRED_ENV
from jarvis_sim import sim_task, sim_work, simworker
from tests.processes import HANG_GUARD_S, PipedProcess

ROOT = Path(__file__).resolve().parents[2]
DISPATCHES = ROOT / "sample_runs" / "dispatches"
LANE = "jarvis-worker-1"
# The dispatch record is the other dispatch format; the worker is handed Jarvis dispatches.
SAMPLES = sorted(
    p.name for p in DISPATCHES.glob("valid-*.json") if p.name != "valid-dispatch-record.json"
)
FAST = "5,15"
NAME = re.compile(r"(\d{13})-([1-9]\d*)\.json")
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
T = TypeVar("T")


def load(sample: str, scenario: str | None = None) -> dict[str, Any]:
    dispatch: dict[str, Any] = json.loads((DISPATCHES / sample).read_text())
    if scenario is not None:
        dispatch["input"] = f"{dispatch['input']} sim:{scenario}"
    return dispatch


@dataclass
class Lane:
    """One run's IPC tree and the environment the host would give its worker."""

    dispatch: dict[str, Any]
    env: dict[str, str]
    workdir: Path
    progress_dir: Path
    steer_file: Path
    ack_file: Path


def make_lane(
    tmp_path: Path, dispatch: dict[str, Any], *, interval: str = FAST, seed: str = "7"
) -> Lane:
    run_id = dispatch["run_id"]
    ipc = tmp_path / "data" / "ipc" / LANE
    progress = ipc / "progress" / run_id
    progress.mkdir(parents=True)
    (ipc / "steer").mkdir()
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("JARVIS_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(
        JARVIS_RUN_ID=run_id,
        JARVIS_LANE=LANE,
        JARVIS_ATTEMPT="1",
        JARVIS_DISPATCH=json.dumps(dispatch),
        JARVIS_IPC_DIR=str(ipc),
        JARVIS_PROGRESS_DIR=str(progress),
        JARVIS_STEER_FILE=str(ipc / "steer" / f"{run_id}.json"),
        JARVIS_ACK_FILE=str(ipc / "steer" / f"{run_id}.acked.json"),
        JARVIS_SIM_INTERVAL_MS=interval,
        JARVIS_SIM_SEED=seed,
    )
    return Lane(
        dispatch,
        env,
        workdir,
        progress,
        ipc / "steer" / f"{run_id}.json",
        ipc / "steer" / f"{run_id}.acked.json",
    )


COMMAND = [sys.executable, "-m", "jarvis_sim.simworker"]


def run(lane: Lane) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        COMMAND, env=lane.env, cwd=lane.workdir, capture_output=True, text=True,
        timeout=HANG_GUARD_S,
    )  # fmt: skip


@pytest.fixture
def spawn() -> Iterator[Callable[[Lane], PipedProcess]]:
    """Start workers in the background, their output read all along (a worker logs every
    event to stdout); any still running at the end are killed."""
    started: list[PipedProcess] = []

    def start(lane: Lane) -> PipedProcess:
        proc = PipedProcess(COMMAND, env=lane.env, cwd=lane.workdir)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.close()


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = HANG_GUARD_S) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found is not None and found is not False:
            return found
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def iso(epoch_ms: int) -> str:
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def events(lane: Lane, *, live: bool = False) -> list[dict[str, Any]]:
    """Every progress event, checked against the wire format, in file-name order.

    With ``live`` (the worker still runs) a ``.NAME.tmp`` it is writing this instant is skipped,
    as readers do; once it has exited, any file but an event is a leftover.
    """
    names = sorted(os.listdir(lane.progress_dir))
    if live:
        names = [n for n in names if not (n.startswith(".") and n.endswith(".tmp"))]
    leftovers = [n for n in names if not NAME.fullmatch(n)]
    assert not leftovers, f"temp or stray files: {leftovers}"
    found = []
    for name in names:
        match = NAME.fullmatch(name)
        assert match is not None
        doc = json.loads((lane.progress_dir / name).read_text("utf-8"))
        assert doc["kind"] == "worker_progress"
        assert doc["run_id"] == lane.dispatch["run_id"]
        assert doc["group_folder"] == LANE
        assert doc["seq"] == int(match.group(2))
        assert ISO.fullmatch(doc["timestamp"]) and doc["timestamp"] == iso(int(match.group(1)))
        assert isinstance(doc["phase"], str) and doc["phase"]
        assert isinstance(doc["summary"], str) and doc["summary"].strip()
        assert isinstance(doc.get("tool_used", ""), str)
        assert set(doc) <= {"kind", "run_id", "group_folder", "timestamp", "phase", "summary"} | {
            "tool_used",
            "seq",
        }
        found.append(doc)
    # Names sort in seq order, and seq runs 1..n without a gap.
    assert [e["seq"] for e in found] == list(range(1, len(found) + 1))
    return found


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc: dict[str, Any] = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return doc


def write_steer(lane: Lane, steer_id: str, message: str) -> None:
    doc = {
        "kind": "worker_steer",
        "run_id": lane.dispatch["run_id"],
        "from_group": "main",
        "timestamp": iso(time.time_ns() // 1_000_000),
        "message": message,
        "steer_id": steer_id,
    }
    tmp = lane.steer_file.with_name(f".{lane.steer_file.name}.tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, lane.steer_file)


# --- every scenario, end to end ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sample", SAMPLES)
def test_ok_completes_and_passes_every_gate_for_each_sample_dispatch(
    tmp_path: Path, sample: str
) -> None:
    lane = make_lane(tmp_path, load(sample, "ok"))
    result = run(lane)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert 4 <= len(events(lane)) <= 8
    out = result.stdout
    assert out.index("---NANOCLAW_OUTPUT_START---") < out.index("<completion>")
    assert out.index("</completion>") < out.index("---NANOCLAW_OUTPUT_END---")
    assert out.index("simworker:") < out.index("---NANOCLAW_OUTPUT_START---")  # logs come first
    verdict = evaluate_completion(lane.dispatch, out)
    assert verdict.state == "review_requested", verdict.to_json()


@pytest.mark.slow
def test_ui_dispatch_gets_browser_evidence_that_passes(tmp_path: Path) -> None:
    lane = make_lane(tmp_path, load("valid-ui-dashboard.json"))
    result = run(lane)
    verdict = evaluate_completion(lane.dispatch, result.stdout)
    assert verdict.state == "review_requested", verdict.to_json()
    gate = next(g for g in verdict.gates if g.name == "browser_evidence")
    assert gate.passed and "tool step(s) against http://127.0.0.1:" in gate.detail
    assert verdict.completion is not None
    assert "screenshot" not in json.dumps(verdict.completion).lower()


@pytest.mark.slow
def test_continue_dispatch_returns_its_session_and_skips_the_pr(tmp_path: Path) -> None:
    lane = make_lane(tmp_path, load("valid-continue-session.json"))
    completion = extract_completion(run(lane).stdout).completion
    assert completion is not None
    assert completion["session_id"] == "sess-4b1e77d0"
    assert completion["pr_skipped_reason"].strip() and "pr_url" not in completion
    assert "browser_evidence" not in completion


@pytest.mark.slow
def test_slow_emits_many_events_then_a_valid_completion(tmp_path: Path) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "slow"), interval="1,3")
    result = run(lane)
    assert result.returncode == 0, result.stderr
    assert 30 <= len(events(lane)) <= 40
    assert evaluate_completion(lane.dispatch, result.stdout).state == "review_requested"


@pytest.mark.slow
def test_verify_fail_is_valid_but_leaves_out_the_file_the_task_asked_for(tmp_path: Path) -> None:
    lane = make_lane(tmp_path, load("valid-with-criteria.json", "verify_fail"))
    result = run(lane)
    assert result.returncode == 0, result.stderr
    assert 4 <= len(events(lane)) <= 8
    verdict = evaluate_completion(lane.dispatch, result.stdout)
    assert verdict.state == "review_requested", verdict.to_json()
    assert verdict.completion is not None
    assert "docs/install.md" not in verdict.completion["files_changed"]
    assert "docs/install.md" in verdict.completion["summary"]


@pytest.mark.slow
def test_fail_contract_breaks_a_gate(tmp_path: Path) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "fail_contract"))
    result = run(lane)
    assert result.returncode == 0, result.stderr
    assert len(events(lane)) >= 1
    verdict = evaluate_completion(lane.dispatch, result.stdout)
    assert verdict.state == "failed_contract"
    assert verdict.gates[0].passed  # parseable: it is the content that is wrong


@pytest.mark.slow
def test_crash_exits_1_with_a_traceback_and_no_completion(tmp_path: Path) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "crash"))
    result = run(lane)
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "<completion>" not in result.stdout and "NANOCLAW_OUTPUT" not in result.stdout
    assert 2 <= len(events(lane)) <= 4


@pytest.mark.slow
def test_hang_emits_one_event_then_exits_143_on_sigterm(
    tmp_path: Path, spawn: Callable[[Lane], PipedProcess]
) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "hang"))
    proc = spawn(lane)
    wait_for(lambda: len(os.listdir(lane.progress_dir)) >= 1, "the one progress event")
    assert proc.returncode is None
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate()
    # 143 through the worker's own handler (SIGTERM's default action would leave -15), which
    # says so on stderr. That the silence holds is counted in process, below.
    assert proc.returncode == 143
    assert "simworker: stopped by signal 15" in err
    assert "<completion>" not in out and "Traceback" not in err
    assert len(events(lane)) == 1


@pytest.mark.slow
def test_sigterm_mid_run_exits_143_without_a_completion(
    tmp_path: Path, spawn: Callable[[Lane], PipedProcess]
) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "slow"), interval="20,40")
    proc = spawn(lane)
    wait_for(lambda: len(os.listdir(lane.progress_dir)) >= 3, "three progress events")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate()
    assert proc.returncode == 143
    assert "simworker: stopped by signal 15" in err
    assert "<completion>" not in out and "Traceback" not in err
    assert 3 <= len(events(lane)) < 30


class _Clock:
    """``time`` as the worker sees it: sleeps pass at once and are noted, and the clock moves
    by what was slept; after ``stop_after`` sleeps, a SIGTERM "arrives" (the flag is set)."""

    def __init__(self, stop: simworker._StopFlag, stop_after: int) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.stop = stop
        self.stop_after = stop_after

    def monotonic(self) -> float:
        return self.now

    def time_ns(self) -> int:
        return time.time_ns()

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if len(self.sleeps) == self.stop_after:
            self.stop.handle(signal.SIGTERM, None)


def test_a_wait_sleeps_in_short_polls_and_a_signal_ends_it_at_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Promptness on SIGTERM, counted: however long the wait, the worker sleeps at most one
    # poll at a time and looks at the stop flag before every sleep.
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "slow"))
    stop = simworker._StopFlag()
    clock = _Clock(stop, stop_after=7)
    monkeypatch.setattr(simworker, "time", clock)
    worker = simworker.Worker(simworker.load_config(lane.env), random.Random(1), stop,
                              io.StringIO(), io.StringIO())  # fmt: skip
    assert worker.wait(3600) is False
    assert clock.sleeps == [simworker.POLL_SECONDS] * 7


def test_hang_stays_silent_and_deaf_to_steers_until_a_signal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "hang"))
    write_steer(lane, "steer-zzz", "are you there?")
    stop = simworker._StopFlag()
    clock = _Clock(stop, stop_after=200)  # ten seconds of polls, in no time
    monkeypatch.setattr(simworker, "time", clock)
    out, err = io.StringIO(), io.StringIO()
    worker = simworker.Worker(simworker.load_config(lane.env), random.Random(1), stop, out, err)
    assert worker.run("hang") == 143
    assert len(clock.sleeps) == 200
    assert len(events(lane)) == 1  # one event, then nothing in all those polls
    assert not lane.ack_file.exists()  # and no steer taken in
    assert "<completion>" not in out.getvalue()
    assert err.getvalue() == "simworker: stopped by signal 15\n"


# --- steering ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_steers_are_acked_once_each_and_mentioned_in_the_next_summary(
    tmp_path: Path, spawn: Callable[[Lane], PipedProcess]
) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json", "slow"), interval="80,120")
    proc = spawn(lane)
    wait_for(lambda: len(os.listdir(lane.progress_dir)) >= 1, "the first progress event")

    # A half-written steer (a writer that skipped temp + rename) is ignored until it parses.
    lane.steer_file.write_text('{"steer_id": "steer-aaa", "mess')
    # Two more events: the wait before the second of them began after the first, so after the
    # write, and a wait looks at the steer file before it sleeps.
    seen = len(os.listdir(lane.progress_dir))
    wait_for(lambda: len(os.listdir(lane.progress_dir)) >= seen + 2, "two more events")
    assert not lane.ack_file.exists()
    write_steer(lane, "steer-aaa", "focus on the failing test")
    ack = wait_for(lambda: read_json(lane.ack_file), "the first ack")
    assert ack["steer_id"] == "steer-aaa" and ISO.fullmatch(ack["acked_at"])
    wait_for(
        lambda: any(
            e["summary"] == "steer steer-aaa acknowledged: focus on the failing test"
            for e in events(lane, live=True)
        ),
        "a summary mentioning the first steer",
    )

    # The host records the ack and deletes both files, then delivers the next steer.
    lane.ack_file.unlink()
    lane.steer_file.unlink()
    write_steer(lane, "steer-bbb", "stop after the refactor")
    ack = wait_for(lambda: read_json(lane.ack_file), "the second ack")
    assert ack["steer_id"] == "steer-bbb"
    wait_for(
        lambda: any(
            "steer steer-bbb acknowledged" in e["summary"] for e in events(lane, live=True)
        ),
        "a summary mentioning the second steer",
    )

    # A steer file left in place is never acknowledged twice: not in any poll to the end.
    lane.ack_file.unlink()
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert not lane.ack_file.exists()
    steering = [e for e in events(lane) if e["phase"] == "steering"]
    assert [e["summary"].split()[1] for e in steering] == ["steer-aaa", "steer-bbb"]
    assert evaluate_completion(lane.dispatch, out).state == "review_requested"


# --- the environment --------------------------------------------------------------------------


@pytest.mark.slow
def test_missing_environment_exits_2_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JARVIS_")}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        COMMAND, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "JARVIS_RUN_ID" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def _env(tmp_path: Path, **overrides: str | None) -> dict[str, str]:
    env = make_lane(tmp_path, load("valid-backend-fix.json"), interval="0,0").env
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


@pytest.mark.parametrize("name", REQUIRED_ENV)
def test_each_required_variable_is_checked(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert simworker.main([], _env(tmp_path, **{name: None})) == 2
    err = capsys.readouterr().err
    assert name in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"JARVIS_DISPATCH": "{not json"}, "JARVIS_DISPATCH is not JSON"),
        ({"JARVIS_DISPATCH": "[]"}, "must be a JSON object"),
        ({"JARVIS_RUN_ID": "task-other"}, "does not match"),
        ({"JARVIS_RUN_ID": "../escape"}, "JARVIS_RUN_ID is invalid"),
        ({"JARVIS_LANE": "a/b"}, "JARVIS_LANE"),
        ({"JARVIS_ATTEMPT": "0"}, "JARVIS_ATTEMPT"),
        ({"JARVIS_SIM_INTERVAL_MS": "fast"}, "JARVIS_SIM_INTERVAL_MS"),
        ({"JARVIS_SIM_INTERVAL_MS": "50,10"}, "JARVIS_SIM_INTERVAL_MS"),
        ({"JARVIS_SIM_EVENTS": "0"}, "JARVIS_SIM_EVENTS"),
        ({"JARVIS_SIM_EVENTS": "many"}, "JARVIS_SIM_EVENTS"),
    ],
)
def test_invalid_values_exit_2_with_one_line(
    tmp_path: Path,
    overrides: dict[str, str],
    fragment: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert simworker.main([], _env(tmp_path, **overrides)) == 2
    captured = capsys.readouterr()
    assert fragment in captured.err and len(captured.err.strip().splitlines()) == 1
    assert captured.out == ""


def test_unknown_scenario_is_reported_and_runs_as_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dispatch = load("valid-backend-fix.json", "teleport")
    env = _env(tmp_path, JARVIS_DISPATCH=json.dumps(dispatch))
    assert simworker.main([], env) == 0
    captured = capsys.readouterr()
    assert "sim:teleport" in captured.err
    assert evaluate_completion(dispatch, captured.out).state == "review_requested"


def test_the_same_seed_gives_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        lane = make_lane(tmp_path / name, load("valid-backend-fix.json"), interval="0,0")
        assert simworker.main([], lane.env) == 0
        out = capsys.readouterr().out
        runs.append(
            (extract_completion(out).completion, [(e["phase"], e["summary"]) for e in events(lane)])
        )
    assert runs[0] == runs[1]


# --- the completion builder, over many seeds --------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES)
def test_completions_gate_as_their_scenario_promises(sample: str) -> None:
    dispatch = load(sample)
    assert validate_dispatch(dispatch).valid
    expected = {
        "ok": "review_requested",
        "slow": "review_requested",
        "verify_fail": "review_requested",
        "fail_contract": "failed_contract",
    }
    for seed in range(30):
        for scenario, state in expected.items():
            rng = random.Random(seed)
            task = sim_task.read_task(dispatch, dispatch["run_id"])
            outcome = sim_work.build_completion(dispatch, task, scenario, rng)
            output = f"log\n<completion>{json.dumps(outcome.completion)}</completion>\n"
            verdict = evaluate_completion(dispatch, output)
            assert verdict.state == state, (seed, scenario, verdict.to_json())


@pytest.mark.parametrize(
    ("scenario", "low", "high"),
    [("ok", 4, 8), ("verify_fail", 4, 8), ("slow", 30, 40), ("crash", 2, 4), ("hang", 1, 1)],
)
def test_plans_have_the_promised_number_of_events(scenario: str, low: int, high: int) -> None:
    for sample in SAMPLES:
        dispatch = load(sample)
        for seed in range(30):
            rng = random.Random(seed)
            task = sim_task.read_task(dispatch, dispatch["run_id"])
            outcome = sim_work.build_completion(dispatch, task, scenario, rng)
            plan, count = sim_work.build_plan(task, outcome, scenario, rng)
            assert low <= count <= high and count <= len(plan), (sample, seed, count)


@pytest.mark.parametrize("scenario", ["ok", "slow", "verify_fail", "fail_contract"])
def test_a_set_number_of_events_is_what_the_plan_has(scenario: str) -> None:
    dispatch = load("valid-backend-fix.json")
    task = sim_task.read_task(dispatch, dispatch["run_id"])
    for events in (6, 25, 500):
        rng = random.Random(3)
        outcome = sim_work.build_completion(dispatch, task, scenario, rng)
        plan, count = sim_work.build_plan(task, outcome, scenario, rng, events)
        assert count == len(plan) == events, (events, count, len(plan))
    # crash and hang keep their own: they stop early whatever the count.
    rng = random.Random(3)
    outcome = sim_work.build_completion(dispatch, task, "crash", rng)
    assert 2 <= sim_work.build_plan(task, outcome, "crash", rng, 500)[1] <= 4


@pytest.mark.slow
def test_sim_events_sets_how_many_events_a_run_emits(tmp_path: Path) -> None:
    lane = make_lane(tmp_path, load("valid-backend-fix.json"), interval="0,0")
    lane.env["JARVIS_SIM_EVENTS"] = "57"
    result = run(lane)
    assert result.returncode == 0, result.stderr
    assert len(events(lane)) == 57
    assert evaluate_completion(lane.dispatch, result.stdout).state == "review_requested"


def test_scenario_token_is_found_anywhere_in_the_input() -> None:
    assert sim_task.scenario_of({"input": "do it sim:slow please"}) == ("slow", None)
    assert sim_task.scenario_of({"input": "no token"}) == ("ok", None)
    assert sim_task.scenario_of({"input": "sim:nope"}) == ("ok", "nope")
    assert sim_task.scenario_of({"input": "xsim:crash"}) == ("ok", None)  # needs a word boundary
