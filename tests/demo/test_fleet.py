"""The demo fleet: dispatch files for every scenario, the host's path into the store, SIGTERM."""

from __future__ import annotations

import json
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from core.contracts.dispatch import validate_dispatch
from core.host.ingest import Ingestor
from core.ipc.layout import IpcLayout
from core.lifecycle import Action
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from jarvis_sim import demo_fleet
from jarvis_sim.demo_fleet import EVERY_SCENARIO_WITHIN, TICK_S, Fleet, run_fleet
from jarvis_sim.demo_tasks import WORKER_LANES
from jarvis_sim.simworker import SCENARIOS, scenario_of
from tests.host.hostkit import wait_until
from tests.processes import HANG_GUARD_S, PipedProcess


def task_files(ws: Path) -> list[Path]:
    return sorted((ws / "data" / "ipc").glob("*/tasks/*"), key=lambda p: p.name)


def test_the_fleet_dispatches_every_scenario_and_stops_on_sigterm(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with PipedProcess(
        [sys.executable, "-m", "jarvis_sim.demo_fleet", "--workspace", str(ws),
         "--interval", "0.01", "--seed", "5", "--max-backlog", "1000"],
    ) as proc:  # fmt: skip
        wait_until(lambda: len(task_files(ws)) >= EVERY_SCENARIO_WITHIN, HANG_GUARD_S,
                   f"{EVERY_SCENARIO_WITHIN} task files")  # fmt: skip
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate()
    # Exit 0 with a report is the fleet's own handler at work: SIGTERM's default action would
    # end it with -15 and no report. How soon it stops is counted, in the test below.
    assert proc.returncode == 0, err

    report = json.loads(out.strip().splitlines()[-1])
    files = task_files(ws)
    assert not [f for f in files if f.name.startswith(".")], "a temp file was left behind"
    docs = [json.loads(f.read_text()) for f in files]
    assert {d["type"] for d in docs} == {"dispatch"}  # nothing runs, so nothing to steer
    assert report["dispatched"] == len(docs) and report["steers"] == 0
    assert {f.parent.parent.name for f in files} <= {"main", "andy-developer"}
    assert {d["target"] for d in docs} == set(WORKER_LANES)
    for doc in docs:
        assert validate_dispatch(doc["payload"]).valid, doc
    scenarios = [scenario_of(d["payload"]) for d in docs]
    assert all(unknown is None for _, unknown in scenarios)
    assert {name for name, _ in scenarios} == set(SCENARIOS)
    assert sum(name == "ok" for name, _ in scenarios) > len(docs) / 3  # mostly ok
    assert len({d["payload"]["run_id"] for d in docs}) == len(docs)

    # The host's own ingestion takes every file: each becomes a queued run, none is refused.
    store = SqliteStore(ws / "jarvis.db")
    try:
        results = Ingestor(store, IpcLayout(ws / "data" / "ipc")).handle_many(files)
        assert {r.outcome for r in results} == {"ingested"}, results
        runs = store.rows("SELECT state, source_lane FROM runs")
        assert len(runs) == len(docs) and {r["state"] for r in runs} == {"queued"}
    finally:
        store.close()


class _Clock:
    """``time`` as the fleet's loop sees it: a real clock, and sleeps that are only noted."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        self.log.append(f"sleep {seconds:g}")


def test_the_fleet_asks_whether_to_stop_before_every_tick_and_stops_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "Exits within one tick of SIGTERM", counted: the loop sleeps one tick at a time and asks
    # the stop flag (which the signal handler sets) before each; once told, it sleeps no more.
    log: list[str] = []
    monkeypatch.setattr(demo_fleet, "time", _Clock(log))

    def should_stop() -> bool:
        log.append("ask")
        return log.count("ask") > 20

    report = run_fleet(tmp_path, should_stop=should_stop, interval_s=3600, burst=0,
                       steer_every_s=3600)  # fmt: skip
    assert log == ["ask", f"sleep {TICK_S:g}"] * 20 + ["ask"]
    assert report["dispatched"] == 0


def test_the_fleet_keeps_its_backlog_bounded(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, random.Random(1), max_backlog=3)
    try:
        for _ in range(3):
            fleet.dispatch()
        assert fleet.backlog() == 3  # files not yet ingested count as backlog
    finally:
        fleet.close()


def test_the_fleet_steers_a_running_slow_run(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, random.Random(2))
    store = SqliteStore(tmp_path / "jarvis.db")
    ingestor = Ingestor(store, IpcLayout(tmp_path / "data" / "ipc"))
    try:
        assert fleet.steer_one() is None  # nothing it sent is running
        while not fleet.steerable:
            fleet.dispatch()
        ingestor.handle_many(task_files(tmp_path))
        (run_id,) = fleet.steerable
        host_move(store, run_id, Action.START)
        assert fleet.steer_one() == run_id
        (steer_file,) = task_files(tmp_path)
        assert json.loads(steer_file.read_text())["type"] == "steer_worker"
        assert ingestor.handle(steer_file).outcome == "ingested"
        steers = store.rows("SELECT run_id, status, operator FROM steering_events")
        assert steers == [{"run_id": run_id, "status": "pending", "operator": "main"}]
    finally:
        store.close()
        fleet.close()
