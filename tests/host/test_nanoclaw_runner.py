"""A NanoClaw runner under the real `jarvis host`, end to end: a ``nanoclaw`` profile starts the
stand-in runner (tests/nanoclaw/runner_fixture.py) as NanoClaw's host starts its own, with its
task on stdin; its framed answer is decoded, its commit gated against git, its progress taken in,
``input/_close`` ends it; an error frame fails its run with the runner's words; every lane gets
its ``worker_runs.json``, and the host quarantines neither that nor ``input/``."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from core.intake import submit_dispatch
from core.repos.claims import GIT_GATES
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import (
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_for_sweeps,
    wait_until,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).parents[1] / "nanoclaw" / "runner_fixture.py"
FAKE_CONTAINER = FIXTURE.with_name("fake_container.py")
REPO = "acme-labs/fleet-engine"
LANE = "jarvis-worker-1"
KEYS = [
    "prompt", "runId", "groupFolder", "chatJid", "isMain", "assistantName", "opsExtended",
    "schedulerEnabled", "workerSteeringEnabled", "dynamicGroupRegistrationEnabled",
]  # fmt: skip


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin.git", {"README.md": "# engine\n"}, bare=True)


def configure(ws: Path, origin: Path, *, container: bool = False) -> None:
    command = [sys.executable, str(FIXTURE)]
    if container:  # a docker run … IMAGE, the container played by a fake runtime
        command = [sys.executable, str(FAKE_CONTAINER), "run", "-i", "--rm",
                   "nanoclaw-agent:latest"]  # fmt: skip
    # The test reads what the fixtures record, in a folder their sandbox lets them write.
    (ws / "records").mkdir(parents=True, exist_ok=True)
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "nanoclaw"\nconcurrency = 2\n'
        f'[workers.nanoclaw]\nagent = "nanoclaw"\ncommand = {json.dumps(command)}\n'
        f'container = {"true" if container else "false"}\nwritable = ["records"]\n'
        f'env = {{ FIXTURE_RECORD = "{ws / "records" / "record.json"}", '
        f'FAKE_CONTAINER_ARGV = "{ws / "records" / "argv.json"}" }}\n'
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        "[timeouts]\nno_output_s = 60\n"
    )


def enqueue(store: SqliteStore, run_id: str, mode: str = "") -> None:
    doc = dispatch_doc(run_id, input=f"Retry twice in src/retry.py. {mode}".strip(),
                       branch=f"jarvis-{run_id}", request_id="req-1")  # fmt: skip
    result = submit_dispatch(store, doc, source_lane="main", target_lane=LANE, actor="test")
    assert result.outcome == "enqueued", result.to_json()


def worker_runs_of(ws: Path, lane: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = json.loads(
            (ws / "data" / "ipc" / lane / "worker_runs.json").read_text()
        )
    except (OSError, ValueError):
        return None
    return found


def status_in(ws: Path, lane: str, run_id: str) -> str | None:
    shown = worker_runs_of(ws, lane)
    found = [r for r in (shown or {}).get("recent", []) if r["run_id"] == run_id]
    return found[0]["status"] if found else None


def test_a_nanoclaw_run_reaches_review_with_its_git_gates_passed(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
        wait_until(lambda: status_in(ws, LANE, "r1") == "review_requested", HANG_GUARD_S,
                   "worker_runs.json to show the run in review", host.log)  # fmt: skip
    gates = {g["name"]: g for g in rows(conn, "SELECT * FROM gate_results WHERE run_id='r1'")}
    assert all(g["passed"] for g in gates.values()), gates
    assert all(gates[name]["status"] == "passed" for name in GIT_GATES), gates
    assert run_row(conn, "r1")["commit_sha"] == run_git(origin, "rev-parse", "jarvis-r1")
    summaries = [r["summary"] for r in rows(conn, "SELECT summary FROM progress_events "
                                                  "WHERE run_id = 'r1' ORDER BY seq")]  # fmt: skip
    assert summaries == ["I'll add the retry to src/retry.py", "Tool: Bash"]
    # The task came on stdin, one compact object, NanoClaw's keys in NanoClaw's order.
    record = json.loads((ws / "records" / "record.json").read_text())
    assert not record["stdin"].endswith("\n") and '", "' not in record["stdin"]
    task = json.loads(record["stdin"])
    assert list(task) == KEYS
    assert (task["runId"], task["groupFolder"]) == ("r1", LANE)
    assert task["chatJid"] == f"{LANE}@nanoclaw" and task["workerSteeringEnabled"] is True
    assert "Run ID: r1\nRequest ID: req-1\nTask Type: fix\n" in task["prompt"]
    assert record["ipc"] == str(ws / "data" / "ipc" / LANE)
    assert record["cwd"] == str(ws / "checkouts" / "r1")
    assert record["closed"] is True  # the host sent input/_close after the answer
    row = [r for r in (worker_runs_of(ws, LANE) or {})["recent"] if r["run_id"] == "r1"][0]
    assert (row["group_folder"], row["phase"], row["dispatch_branch"]) == (
        LANE, "terminal", "jarvis-r1"
    )  # fmt: skip


def test_a_container_runner_finds_its_ipc_and_worktree_where_it_looks(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin, container=True)
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
    argv = json.loads((ws / "records" / "argv.json").read_text())
    ipc, checkout = ws / "data" / "ipc" / LANE, ws / "checkouts" / "r1"
    # A bare repository, whose objects the run's own repository borrows: there, read-only.
    objects = (origin / "objects").resolve()
    assert argv[:7] == ["run", "-v", f"{ipc}:/workspace/ipc", "-v", f"{checkout}:/workspace/group",
                        "-v", f"{objects}:{objects}:ro"]  # fmt: skip
    assert argv[-3:] == ["-i", "--rm", "nanoclaw-agent:latest"]
    assert "FIXTURE_RECORD" in argv  # the profile's variables are passed in by name
    record = json.loads((ws / "records" / "record.json").read_text())
    assert (record["ipc"], record["cwd"], record["closed"]) == (str(ipc), str(checkout), True)
    assert "/workspace/group is a git checkout" in json.loads(record["stdin"])["prompt"]


def test_a_run_id_holding_a_colon_starts_in_a_container_and_keeps_its_name(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin, container=True)
    doc = dispatch_doc("nc:run:a8", branch="jarvis-nc-run-a8", request_id="req-1")
    result = submit_dispatch(store, doc, source_lane="main", target_lane=LANE, actor="test")
    assert result.outcome == "enqueued", result.to_json()
    with running_host(ws) as host:
        wait_for_states(conn, {"nc:run:a8": "review_requested"}, HANG_GUARD_S, host=host)
    argv = json.loads((ws / "records" / "argv.json").read_text())
    alias = ws / "mounts" / "nc%3Arun%3Aa8"
    assert argv[3:5] == ["-v", f"{alias}:/workspace/group"]
    assert alias.resolve() == (ws / "checkouts" / "nc:run:a8").resolve()
    record = json.loads((ws / "records" / "record.json").read_text())
    assert json.loads(record["stdin"])["runId"] == "nc:run:a8"
    # Its progress folder and its row keep the id as it is.
    assert rows(conn, "SELECT 1 FROM progress_events WHERE run_id = 'nc:run:a8'")
    assert run_row(conn, "nc:run:a8")["commit_sha"] == run_git(
        origin, "rev-parse", "jarvis-nc-run-a8"
    )


def test_an_error_frame_fails_the_run_with_the_runners_words(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1", "NC:error")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed"}, HANG_GUARD_S, host=host)
    reason = run_row(conn, "r1")["state_reason"]
    assert reason == (
        "the runner reported an error: Claude Code process exited with code 1: "
        "\\x1b[31mrate limited"
    )
    assert not rows(conn, "SELECT * FROM gate_results WHERE run_id = 'r1'")


def test_broken_frames_around_the_answer_do_not_lose_it(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    enqueue(store, "r1", "NC:garbage")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
        assert "output frame problem" in host.log()


def test_every_lane_gets_its_worker_runs_and_the_host_leaves_it_and_input_alone(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    ipc = ws / "data" / "ipc"
    for lane in ("main", "andy-developer"):
        (ipc / lane / "messages").mkdir(parents=True)
    follow_up = ipc / "andy-developer" / "input" / "1773741605123-a9f0.json"
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, HANG_GUARD_S, host=host)
        follow_up.parent.mkdir(parents=True)
        follow_up.write_text('{"type":"message","text":"<messages>…</messages>"}')
        for lane in ("main", "andy-developer", LANE):
            wait_until(lambda lane=lane: status_in(ws, lane, "r1") == "review_requested",
                       HANG_GUARD_S, f"{lane}'s worker_runs.json", host.log)  # fmt: skip
        wait_for_sweeps(ws, 2, host)
    scopes = {lane: (worker_runs_of(ws, lane) or {}).get("scope") for lane in
              ("main", "andy-developer", LANE)}  # fmt: skip
    assert scopes == {"main": "all", "andy-developer": "jarvis", LANE: "group"}
    assert follow_up.exists()
    assert rows(conn, "SELECT * FROM quarantined_files") == []
    assert list((ipc / "errors").iterdir()) == []
