"""The real host, end to end: `jarvis host` as a process supervising simulated workers.

Each test starts `python -m jarvis_cli host` on its own workspace, drives it through the store,
the CLI and signals, and reads the outcome back from the store, the logs and /proc. No test
leaves a worker process behind (checked after every host is stopped).
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core.host.sandbox import probe as sandbox_probe
from core.lifecycle import Action
from core.moves import apply_move
from core.operator_actions import steer, steer_in
from core.store.sqlite_store import SqliteStore
from core.worker_logs import attempt_dir
from tests.core.store_helpers import dispatch_doc
from tests.host.hostkit import (
    STEERABLE_INTERVAL,
    WATCH_MODES,
    HostProcess,
    assert_no_workers,
    cli,
    describe_runs,
    dispatch,
    is_alive_worker,
    journal,
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_until,
    workers_of,
    write_config,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

GATE_COUNT = 13  # the completion's nine, then the four git gates
HEX64 = re.compile(r"[0-9a-f]{64}")

#: (scenario, lane) for the fleet test: every scenario, several lanes, two runs on most lanes.
FLEET = [
    ("ok", "jarvis-worker-1"),
    ("slow", "jarvis-worker-1"),
    ("ok", "jarvis-worker-2"),
    ("slow", "jarvis-worker-2"),
    ("fail_contract", "jarvis-worker-3"),
    ("fail_contract", "jarvis-worker-3"),
    ("crash", "jarvis-worker-4"),
    ("crash", "jarvis-worker-4"),
    ("hang", "jarvis-worker-5"),
    ("verify_fail", "jarvis-worker-5"),
]
END_STATE = {
    "ok": "review_requested",
    "slow": "review_requested",
    "verify_fail": "review_requested",
    "fail_contract": "failed_contract",
    "crash": "failed",
    "hang": "failed",
}
FAILURE_CODE = {"crash": "WORKER_CRASHED", "hang": "WORKER_NO_OUTPUT"}
#: The fleet's silence limit. Ten sandboxed workers start at once: on a busy machine a worker
#: starved of the CPU for 3 s was taken for hung (an `ok` run failed for silence); only the
#: `hang` scenario waits this out, once.
FLEET_SILENCE_S = 10


def _transitions(conn: sqlite3.Connection, run_id: str) -> list[tuple[str, str, str]]:
    return [(t["action"], t["from"], t["to"]) for t in journal(conn, run_id, "transition")]


def _stopped_by_sigterm(ws: Path, run_id: str) -> bool:
    """Whether the run's simulated worker ended through its SIGTERM handler (its stderr says)."""
    stderr = attempt_dir(ws, run_id, 1) / "stderr.log"
    return "simworker: stopped by signal 15" in stderr.read_text()


def _wait_running_with_progress(conn: sqlite3.Connection, run_id: str, host: HostProcess) -> int:
    """Wait until the run's worker is up and has reported; returns the worker's pid."""

    def ready() -> int | None:
        run = run_row(conn, run_id)
        if run["state"] != "running" or not run["worker_pid"]:
            return None
        events = rows(conn, "SELECT 1 FROM progress_events WHERE run_id = ?", [run_id])
        return int(run["worker_pid"]) if events else None

    return wait_until(ready, HANG_GUARD_S, f"{run_id} to run and report",
                      lambda: describe_runs(conn, host))  # fmt: skip


def test_a_fleet_of_workers_ends_every_run_as_its_scenario_says(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # The watcher's way of reading files; the polling sweep's is the same ingest, and its own
    # tests (a host killed mid-run, every bad file quarantined) run in both modes.
    poll = False
    write_config(ws, concurrency=2, no_output_s=FLEET_SILENCE_S)
    scenario_of = {
        f"fleet-{scenario.replace('_', '-')}-{index}": scenario
        for index, (scenario, _) in enumerate(FLEET)
    }
    lane_of = {run_id: FLEET[index][1] for index, run_id in enumerate(scenario_of)}
    *before, late = scenario_of
    for run_id in before:
        dispatch(store, run_id, scenario=scenario_of[run_id], lane=lane_of[run_id])

    with running_host(ws, poll=poll) as host:
        # One run arrives through the CLI while the host is already working.
        doc = dispatch_doc(late, input=f"Fix the retry counter. sim:{scenario_of[late]}")
        code, answer = cli(ws, "dispatch", "-", "--to", lane_of[late], stdin=json.dumps(doc))
        assert (code, answer["outcome"]) == (0, "enqueued"), answer
        wait_for_states(
            conn, {r: END_STATE[s] for r, s in scenario_of.items()}, HANG_GUARD_S, host=host
        )
    # running_host stopped the host and found no worker left.

    fingerprints: dict[str, set[str]] = {}
    for run_id, scenario in scenario_of.items():
        run = run_row(conn, run_id)
        assert run["state"] == END_STATE[scenario], describe_runs(conn)
        assert run["worker_pid"] is None, f"{run_id} still names a worker"

        gates = rows(
            conn, "SELECT name, passed FROM gate_results WHERE run_id = ? AND attempt = 1 "
            "ORDER BY id", [run_id],
        )  # fmt: skip
        failures = rows(conn, "SELECT * FROM failures WHERE run_id = ?", [run_id])
        if scenario in FAILURE_CODE:
            # A worker that never completed is not gated; it gets one error.v1 failure record.
            assert gates == [], run_id
            assert [f["error_code"] for f in failures] == [FAILURE_CODE[scenario]], failures
            assert HEX64.fullmatch(failures[0]["fingerprint"]), failures[0]
            fingerprints.setdefault(scenario, set()).add(failures[0]["fingerprint"])
        else:
            assert failures == [], run_id
            assert len(gates) == GATE_COUNT, (run_id, gates)
            assert len({g["name"] for g in gates}) == GATE_COUNT, gates
            failed = [g["name"] for g in gates if not g["passed"]]
            if scenario == "fail_contract":
                # The run's reason names exactly the gates that failed, in gate order.
                assert failed, f"{run_id} failed its contract with every gate passing"
                assert run["state_reason"] == "completion gates failed: " + ", ".join(failed)
            else:
                assert failed == [], (run_id, failed)

        # Progress: every event, numbered 1..n without a gap or a repeat, in attempt 1.
        events = rows(
            conn, "SELECT attempt, seq, summary FROM progress_events WHERE run_id = ? "
            "ORDER BY seq", [run_id],
        )  # fmt: skip
        seqs = [e["seq"] for e in events]
        assert seqs == list(range(1, len(seqs) + 1)) and seqs, (run_id, seqs)
        assert {e["attempt"] for e in events} == {1}
        if scenario == "hang":
            assert seqs == [1]
        if scenario == "slow":
            assert len(seqs) >= 30
        assert run["last_progress_summary"] == events[-1]["summary"]
        assert len(journal(conn, run_id, "progress")) == len(events)

        log_dir = attempt_dir(ws, run_id, 1)
        assert (log_dir / "stdout.log").stat().st_size > 0, run_id
        if scenario == "crash":
            assert "Traceback" in (log_dir / "stderr.log").read_text()

        assert len(journal(conn, run_id, "created")) == 1
        end = END_STATE[scenario]
        action = {"review_requested": "pass_gates", "failed_contract": "fail_gates"}.get(
            end, "fail"
        )
        assert _transitions(conn, run_id) == [
            ("start", "queued", "running"),
            (action, "running", end),
        ], run_id
        assert {t["actor"] for t in journal(conn, run_id, "transition")} == {"host"}
        assert len(journal(conn, run_id, "worker")) == 1

    # The same failure on two runs shares one fingerprint: that is how failures are grouped.
    assert len(fingerprints["crash"]) == 1, fingerprints
    assert fingerprints["crash"] != fingerprints["hang"]


def test_steers_are_delivered_one_at_a_time_and_all_acknowledged(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws)
    run_id = "steer-slow-1"
    dispatch(store, run_id, scenario="slow")
    with running_host(ws, interval=STEERABLE_INTERVAL) as host:
        _wait_running_with_progress(conn, run_id, host)
        code, answer = cli(ws, "steer", run_id, "focus on the failing test first")
        assert code == 0 and answer["ok"], answer
        steer_ids = [answer["steer_id"]]
        # Two more recorded in one transaction: both pending at once, so the host must hold
        # one back until the other is acknowledged.
        with store.transaction() as tx:
            for message in ("then update the docs", "and keep the diff small"):
                result = steer_in(tx, run_id, "operator-2", message)
                assert result.ok and result.steer_id, result
                steer_ids.append(result.steer_id)

        most_delivered = 0

        def all_acked() -> bool:
            nonlocal most_delivered
            found = rows(conn, "SELECT status FROM steering_events WHERE run_id = ?", [run_id])
            delivered = sum(1 for s in found if s["status"] == "delivered")
            most_delivered = max(most_delivered, delivered)
            return len(found) == 3 and all(s["status"] == "acked" for s in found)

        wait_until(
            all_acked, HANG_GUARD_S, "every steer to be acknowledged",
            lambda: describe_runs(conn, host),
            interval=0.01,
        )  # fmt: skip
        assert most_delivered <= 1, "two steers were delivered to one run at once"

        # The worker says so in its next progress summary.
        def mentioned() -> bool:
            found = rows(conn, "SELECT summary FROM progress_events WHERE run_id = ?", [run_id])
            summaries = " ".join(e["summary"] for e in found)
            return all(steer_id in summaries for steer_id in steer_ids)

        wait_until(mentioned, HANG_GUARD_S, "progress summaries naming each steer")
        wait_for_states(conn, {run_id: "review_requested"}, HANG_GUARD_S, host=host)

    for row in rows(conn, "SELECT * FROM steering_events WHERE run_id = ?", [run_id]):
        assert row["status"] == "acked" and row["acked_at"] and row["sent_at"], row
        assert row["status_reason"] is None, row

    # The journal tells each steer's story in order, and no steer was delivered before the one
    # delivered ahead of it was acknowledged.
    history = journal(conn, run_id, "steer")
    story = {
        steer_id: [(h["status"], h["seq"]) for h in history if h["steer_id"] == steer_id]
        for steer_id in steer_ids
    }
    for events in story.values():
        assert [status for status, _ in events] == ["pending", "delivered", "acked"], events
    by_delivery = sorted(steer_ids, key=lambda s: dict(story[s])["delivered"])
    assert by_delivery[0] == steer_ids[0], "the first steer sent was not the first delivered"
    for before, after in zip(by_delivery, by_delivery[1:], strict=False):
        assert dict(story[before])["acked"] < dict(story[after])["delivered"], story

    lane_dir = ws / "data" / "ipc" / "jarvis-worker-1" / "steer"
    assert not list(lane_dir.glob(f"{run_id}*.json")), "steer or ack files left behind"


def test_a_steer_whose_run_ends_first_expires_with_a_reason(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, no_output_s=3)
    cancelled, silent = "expire-slow-1", "expire-hang-1"
    dispatch(store, cancelled, scenario="slow", lane="jarvis-worker-1")
    dispatch(store, silent, scenario="hang", lane="jarvis-worker-2")
    with running_host(ws, interval=STEERABLE_INTERVAL) as host:
        _wait_running_with_progress(conn, cancelled, host)
        _wait_running_with_progress(conn, silent, host)

        # Steered and cancelled in one transaction: the host can never see it pending on a
        # running run, so it is never delivered.
        with store.transaction() as tx:
            result = steer_in(tx, cancelled, "operator-1", "never mind this")
            assert result.ok and result.steer_id
            never_sent = result.steer_id
            run = tx.get_run(cancelled)
            assert run is not None
            reason = "changed my mind"
            changes = {"state_reason": f"cancelled by operator-1: {reason}"}
            apply_move(tx, run, Action.CANCEL, "operator-1", reason=reason, changes=changes)

        # A hanging worker never reads its steer file: delivered, never acknowledged, and the run
        # fails for silence before the acknowledgement time is up.
        unread = steer(store, silent, "operator-1", "are you there?")
        unread_id = unread.steer_id
        assert unread.ok and unread_id
        steer_file = ws / "data" / "ipc" / "jarvis-worker-2" / "steer" / f"{silent}.json"
        wait_until(
            steer_file.exists, HANG_GUARD_S, "the steer to be delivered to the hanging worker"
        )

        def expired(steer_id: str) -> dict[str, object] | None:
            found = rows(conn, "SELECT * FROM steering_events WHERE steer_id = ?", [steer_id])
            return found[0] if found and found[0]["status"] == "expired" else None

        first = wait_until(lambda: expired(never_sent), HANG_GUARD_S, "the pending steer to expire")
        second = wait_until(lambda: expired(unread_id), HANG_GUARD_S, "the unread steer to expire")
        wait_for_states(conn, {cancelled: "failed", silent: "failed"}, HANG_GUARD_S, host=host)

    assert first["sent_at"] is None, "a steer for an ended run was delivered"
    assert first["acked_at"] is None
    assert "the run ended (failed)" in str(first["status_reason"]), first
    assert second["sent_at"] is not None and second["acked_at"] is None
    assert "the run ended (failed)" in str(second["status_reason"]), second
    assert not steer_file.exists(), "an expired steer's file was left for the worker"
    assert [h["status"] for h in journal(conn, cancelled, "steer")] == ["pending", "expired"]
    assert [h["status"] for h in journal(conn, silent, "steer")] == [
        "pending", "delivered", "expired",
    ]  # fmt: skip


def test_cancelling_a_running_run_stops_its_worker(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # A grace long enough that only a worker deaf to SIGTERM would meet the SIGKILL after it.
    write_config(ws, shutdown_grace_s=60)
    run_id = "cancel-slow-1"
    dispatch(store, run_id, scenario="slow")
    with running_host(ws, interval=STEERABLE_INTERVAL) as host:
        pid = _wait_running_with_progress(conn, run_id, host)
        assert is_alive_worker(pid, run_id)
        code, answer = cli(ws, "cancel", run_id, "--reason", "no longer needed",
                           "--operator", "operator-1")  # fmt: skip
        assert code == 0 and answer["ok"], answer
        wait_until(lambda: not is_alive_worker(pid, run_id), HANG_GUARD_S, f"worker {pid} to stop")
        # The host logs the end once it has reaped the worker: only then is "stays failed" proven.
        wait_until(lambda: f"run {run_id} ended: failed" in host.log(), HANG_GUARD_S,
                   "the host to reap it", host.log)  # fmt: skip
    # The host's SIGTERM stopped the worker (a worker that ran to its end would say it is done).
    assert _stopped_by_sigterm(ws, run_id)

    run = run_row(conn, run_id)
    assert run["state"] == "failed"
    assert run["state_reason"] == "cancelled by operator-1: no longer needed"
    assert _transitions(conn, run_id) == [
        ("start", "queued", "running"),
        ("cancel", "running", "failed"),
    ]
    # A cancel is the operator's decision, not a failure of the worker.
    assert rows(conn, "SELECT * FROM failures WHERE run_id = ?", [run_id]) == []
    assert rows(conn, "SELECT * FROM gate_results WHERE run_id = ?", [run_id]) == []


def test_sigterm_stops_the_host_and_fails_the_running_run(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # A grace long enough that only a worker deaf to SIGTERM would meet the SIGKILL after it.
    write_config(ws, shutdown_grace_s=60)
    run_id = "shutdown-slow-1"
    dispatch(store, run_id, scenario="slow")
    host = HostProcess(ws, interval=STEERABLE_INTERVAL)
    try:
        host.wait_started()
        pid = _wait_running_with_progress(conn, run_id, host)
        host.proc.send_signal(signal.SIGTERM)
        try:
            code = host.proc.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the host ignored SIGTERM:\n{host.log()}")
    finally:
        host.stop()
    assert code == 0, host.log()
    # The signal path, step by step: the loop saw the stop flag, the worker stopped on the
    # host's SIGTERM within the grace (a SIGKILL after it leaves no word), then the lock went.
    log = host.log()
    assert log.index(" stopping") < log.index("let go of"), log
    assert _stopped_by_sigterm(ws, run_id)
    assert not is_alive_worker(pid, run_id)
    assert_no_workers(ws)

    run = run_row(conn, run_id)
    assert run["state"] == "failed"
    assert "shut down" in run["state_reason"], run["state_reason"]
    failures = rows(conn, "SELECT error_code FROM failures WHERE run_id = ?", [run_id])
    assert [f["error_code"] for f in failures] == ["HOST_SHUTDOWN"]
    assert (ws / "host.lock").read_text().strip() == "", "the lock still names the stopped host"


def test_sigusr1_writes_every_threads_stack_to_the_log_and_the_host_keeps_running(
    ws: Path,
) -> None:
    host = HostProcess(ws)
    try:
        host.wait_started()
        wait_until(lambda: " holds " in host.log(), HANG_GUARD_S, "the host to be at work",
                   host.log)  # fmt: skip
        host.proc.send_signal(signal.SIGUSR1)
        # Read until the whole dump is there (the log is read while the host writes it): the
        # main thread in the host's code, and the heartbeat's thread.
        wait_until(
            lambda: "Current thread" in (log := host.log()) and "core/host/host.py" in log
            and "core/host/fleet.py" in log,
            HANG_GUARD_S,
            "the host to write its threads' stacks",
            host.log,
        )  # fmt: skip
        assert host.proc.poll() is None, "the host stopped on SIGUSR1"
        assert host.stop() == 0, host.log()
    finally:
        host.kill()
    log = host.log()
    assert log.index("stopping") < log.index("let go of"), log


@pytest.mark.parametrize("poll", WATCH_MODES)
def test_a_host_killed_mid_run_is_recovered_by_the_next(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, poll: bool
) -> None:
    # Long silence allowed: the hanging run must still be running when the host is killed.
    # Unconfined: a sandboxed worker dies with its host (the test below).
    write_config(ws, no_output_s=60, sandbox="none")
    run_id = "restart-hang-1"
    dispatch(store, run_id, scenario="hang")
    first = HostProcess(ws, log_name="host-1.log")
    try:
        first.wait_started()
        orphan = _wait_running_with_progress(conn, run_id, first)
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(HANG_GUARD_S)
        assert is_alive_worker(orphan, run_id), "the worker should outlive a killed host"
        assert run_row(conn, run_id)["state"] == "running"

        with running_host(ws, poll=poll, log_name="host-2.log") as second:
            wait_for_states(conn, {run_id: "failed"}, HANG_GUARD_S, host=second)
            # Nothing but the recovery ends the orphan: no host supervises it now, and it hangs.
            wait_until(lambda: not is_alive_worker(orphan, run_id), HANG_GUARD_S,
                       f"orphan {orphan} to go")  # fmt: skip
    finally:
        first.kill()
        assert_no_workers(ws)

    run = run_row(conn, run_id)
    assert "restarted" in run["state_reason"], run["state_reason"]
    failures = rows(conn, "SELECT error_code FROM failures WHERE run_id = ?", [run_id])
    assert [f["error_code"] for f in failures] == ["HOST_RESTART"]
    assert _transitions(conn, run_id) == [
        ("start", "queued", "running"),
        ("fail", "running", "failed"),
    ]


@pytest.mark.skipif(sandbox_probe().program is None, reason="bubblewrap cannot run here")
def test_a_sandboxed_worker_dies_with_its_killed_host_and_the_next_settles_the_run(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, no_output_s=60)
    run_id = "restart-hang-2"
    dispatch(store, run_id, scenario="hang")
    first = HostProcess(ws, log_name="host-1.log")
    try:
        first.wait_started()
        _wait_running_with_progress(conn, run_id, first)
        inside = [pid for pid in workers_of(ws) if is_alive_worker(pid, run_id)]
        assert len(inside) >= 2  # bwrap, and the worker in its sandbox
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(HANG_GUARD_S)
        # Nothing outlives it: bwrap dies with its parent, and the sandbox with it.
        wait_until(lambda: not any(is_alive_worker(p, run_id) for p in inside), HANG_GUARD_S,
                   "the sandbox to go with the host")  # fmt: skip
        assert run_row(conn, run_id)["state"] == "running"
        with running_host(ws, log_name="host-2.log") as second:
            wait_for_states(conn, {run_id: "failed"}, HANG_GUARD_S, host=second)
    finally:
        first.kill()
        assert_no_workers(ws)
    assert "restarted" in run_row(conn, run_id)["state_reason"]


def test_a_second_host_on_the_same_workspace_is_refused(ws: Path) -> None:
    write_config(ws)
    command = [sys.executable, "-m", "jarvis_cli", "host", "--workspace", str(ws)]
    with running_host(ws) as first:
        second = subprocess.run(command, capture_output=True, text=True, timeout=HANG_GUARD_S)
        assert second.returncode == 1, (second.stdout, second.stderr)
        assert f"pid {first.pid}" in second.stderr, second.stderr

        as_json = subprocess.run(
            [*command, "--json"], capture_output=True, text=True, timeout=HANG_GUARD_S
        )
        assert as_json.returncode == 1, as_json.stderr
        assert f'"pid": {first.pid}' in as_json.stdout and "host_running" in as_json.stdout

        # The refusal took nothing from the first host.
        assert first.proc.poll() is None and first.holds_lock()
