"""``jarvis approve|retry|cancel|override`` on many runs: run ids or a ``--state``/``--lane``
selection, a result per run, an exit code for the whole, a selection that acts only with
``--yes``, and two operators' processes racing on the same runs, each run moved once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run
from tests.jarvis_cli import jarvis
from tests.processes import HANG_GUARD_S


def workspace(tmp_path: Path, runs: dict[str, tuple[RunState, str]]) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    try:
        for run_id, (state, lane) in runs.items():
            make_run(store, run_id, state, lane=lane)
    finally:
        store.close()
    return ws


def states(ws: Path) -> dict[str, str]:
    store = SqliteStore(ws / "jarvis.db", migrate=False)
    try:
        return {r["run_id"]: r["state"] for r in store.list_runs()}
    finally:
        store.close()


W1, W2 = "jarvis-worker-1", "jarvis-worker-2"


def test_many_run_ids_each_get_a_line_and_the_exit_code_says_whether_all_went_through(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, {"f1": (RunState.FAILED, W1), "f2": (RunState.FAILED, W1),
                              "q1": (RunState.QUEUED, W1)})  # fmt: skip
    some = jarvis("retry", "f1", "q1", "f2", "--workspace", ws)
    assert some.code == 1, some
    lines = some.stdout.splitlines()
    assert lines[0].startswith("✓ retry f1") and "Retried f1." in lines[0]
    assert lines[1].startswith("✗ retry q1") and "refused (illegal_transition)" in lines[1]
    assert lines[2].startswith("✓ retry f2")
    assert lines[-1] == "2 of 3 run(s): retried; 1 refused"
    assert states(ws) == {"f1": "queued", "f2": "queued", "q1": "queued"}
    every = jarvis("cancel", "f1", "f2", "--reason", "not needed", "--workspace", ws, "--json")
    assert every.code == 0, every
    body = every.json()
    assert body["ok"] is True and (body["done"], body["refused"]) == (2, 0)
    assert [(r["run_id"], r["ok"], r["code"]) for r in body["results"]] == [
        ("f1", True, "done"), ("f2", True, "done")]  # fmt: skip
    assert body["results"][0]["run"]["state_reason"].endswith(": not needed")


def test_a_selection_acts_only_with_yes_and_a_dry_run_does_nothing(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a": (RunState.FAILED, W1), "b": (RunState.FAILED, W2),
                              "c": (RunState.FAILED, W2), "d": (RunState.QUEUED, W2)})  # fmt: skip
    asked: list[str | Path] = ["retry", "--state", "failed", "--lane", W2, "--workspace", ws]
    unconfirmed = jarvis(*asked)
    assert unconfirmed.code == 2
    assert "would retry b" in unconfirmed.stdout and "would retry c" in unconfirmed.stdout
    assert "matches 2 run(s) to retry; nothing was done. Add --yes" in unconfirmed.stderr
    as_json = jarvis(*asked, "--json").json()
    assert as_json["error"]["code"] == "confirmation_required"
    dry = jarvis(*asked, "--dry-run", "--json")
    assert dry.code == 0 and [r["run_id"] for r in dry.json()["results"]] == ["c", "b"]
    assert states(ws)["b"] == states(ws)["c"] == "failed"  # nothing done so far
    done = jarvis(*asked, "--yes", "--json")
    assert done.code == 0 and done.json()["done"] == 2
    assert states(ws) == {"a": "failed", "b": "queued", "c": "queued", "d": "queued"}
    # A lane alone: the runs the action cannot apply to are left alone, and said so.
    lane = jarvis("cancel", "--lane", W1, "--reason", "stop", "--yes", "--workspace", ws)
    assert lane.code == 0 and "0 of 0 run(s)" in lane.stdout
    assert "1 matched run(s) left alone" in lane.stdout and "a  Run a is failed" in lane.stdout


def test_bad_combinations_are_usage_errors(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"f1": (RunState.FAILED, W1)})
    both = jarvis("retry", "f1", "--state", "failed", "--workspace", ws, "--json")
    assert both.code == 2 and both.json()["error"]["code"] == "usage"
    none = jarvis("approve", "--workspace", ws)
    assert none.code == 2 and "needs a run id, several, or --state/--lane" in none.stderr
    versioned = jarvis("retry", "f1", "f2", "--expect-version", "3", "--workspace", ws)
    assert versioned.code == 2 and "--expect-version applies to one run" in versioned.stderr
    state = jarvis("retry", "--state", "stuck", "--yes", "--workspace", ws, "--json")
    assert state.code == 2 and state.json()["error"]["code"] == "unknown_state"
    assert states(ws) == {"f1": "failed"}


def test_one_run_answers_as_it_always_did(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"f1": (RunState.FAILED, W1)})
    one = jarvis("retry", "f1", "--workspace", ws, "--json").json()
    assert one["ok"] is True and one["refusal"] is None and one["run"]["state"] == "queued"


def test_two_operators_processes_bulk_approving_the_same_runs_move_each_run_once(
    tmp_path: Path,
) -> None:
    runs = [f"r{n}" for n in range(8)]
    ws = workspace(tmp_path, {r: (RunState.REVIEW_REQUESTED, W1) for r in runs})
    command = [sys.executable, "-m", "jarvis_cli", "approve", "--workspace", str(ws), "--json"]
    procs = [
        subprocess.Popen([*command, "--operator", who, *order], stdout=subprocess.PIPE)
        for who, order in (("ana", runs), ("bo", runs[::-1]))
    ]
    answers = []
    for proc in procs:
        out, _ = proc.communicate(timeout=HANG_GUARD_S)
        answers.append((proc.returncode, json.loads(out)))
    per_run: dict[str, list[bool]] = {r: [] for r in runs}
    for _, body in answers:
        for result in body["results"]:
            per_run[result["run_id"]].append(result["ok"])
            if not result["ok"]:
                assert result["code"] == "illegal_transition", result
    assert all(sorted(oks) == [False, True] for oks in per_run.values()), per_run
    # Each process says whether all of its runs went through: one that lost any says so.
    for code, body in answers:
        assert code == (0 if body["refused"] == 0 else 1)
    assert set(states(ws).values()) == {"done"}
    store = SqliteStore(ws / "jarvis.db", migrate=False)
    try:
        audit = store.rows("SELECT run_id FROM audit WHERE action = 'approve'", [])
    finally:
        store.close()
    assert sorted(row["run_id"] for row in audit) == runs
