"""``worker_runs.json`` from Jarvis's store: NanoClaw's shape, field order and formatting, each
lane's scope, the state mapping, the refused requests, and a write that never follows a link."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.intake import submit_dispatch
from core.ipc.layout import IpcLayout
from core.lifecycle import Action, RunState
from core.moves import host_move
from core.nanoclaw.worker_runs import (
    CHECK_S,
    FILE,
    REFRESH_S,
    ROW_FIELDS,
    TEMP,
    WorkerRunsWriter,
    build,
    phase_of,
    render,
    row_of,
    write,
)
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import PATHS, dispatch_doc


@pytest.fixture
def clock() -> list[datetime]:
    return [datetime(2026, 3, 17, 10, 0, tzinfo=UTC)]


@pytest.fixture
def store(tmp_path: Path, clock: list[datetime]) -> SqliteStore:
    def now() -> datetime:
        clock[0] += timedelta(milliseconds=1)
        return clock[0]

    opened = SqliteStore(tmp_path / "jarvis.db", clock=now)
    yield opened  # type: ignore[misc]
    opened.close()


def make(store: SqliteStore, run_id: str, lane: str, state: RunState) -> None:
    result = submit_dispatch(store, dispatch_doc(run_id, branch=f"jarvis-{run_id}"),
                             source_lane="main", target_lane=lane, actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()
    for action in PATHS[state]:
        if action is Action.FAIL:
            host_move(store, run_id, action, reason="no output for 3 s",
                      changes={"state_reason": "no output for 3 s"})  # fmt: skip
        else:
            host_move(store, run_id, action)


@pytest.fixture
def fleet(store: SqliteStore) -> SqliteStore:
    make(store, "w1-done", "jarvis-worker-1", RunState.REVIEW_REQUESTED)
    make(store, "w1-fail", "jarvis-worker-1", RunState.FAILED)
    make(store, "w2-run", "jarvis-worker-2", RunState.RUNNING)
    make(store, "w2-queued", "jarvis-worker-2", RunState.QUEUED)
    make(store, "team-run", "team", RunState.RUNNING)
    return store


def ids(rows: list[dict[str, object]]) -> list[object]:
    return [r["run_id"] for r in rows]


def test_each_lane_sees_its_scope(fleet: SqliteStore) -> None:
    main = build(fleet, "main", owner="jarvis-1")
    assert main["scope"] == "all"
    assert ids(main["recent"]) == ["team-run", "w2-queued", "w2-run", "w1-fail", "w1-done"]
    andy = build(fleet, "andy-developer", owner="jarvis-1")
    assert andy["scope"] == "jarvis"
    assert ids(andy["recent"]) == ["w2-queued", "w2-run", "w1-fail", "w1-done"]
    assert ids(andy["active"]) == ["w2-queued", "w2-run", "w1-done"]
    worker = build(fleet, "jarvis-worker-2", owner="jarvis-1")
    assert worker["scope"] == "group" and ids(worker["recent"]) == ["w2-queued", "w2-run"]
    assert build(fleet, "team", owner="jarvis-1")["scope"] == "group"
    assert build(fleet, "empty-lane", owner="x")["recent"] == []


def test_rows_have_nanoclaws_fields_in_its_order(fleet: SqliteStore) -> None:
    snapshot = build(fleet, "main", owner="jarvis-4242")
    assert list(snapshot) == ["generated_at", "scope", "active", "recent", "dispatch_blocks"]
    rows = {r["run_id"]: r for r in snapshot["recent"]}
    assert all(list(r) == list(ROW_FIELDS) for r in rows.values()) and len(ROW_FIELDS) == 26
    running = rows["w2-run"]
    assert (running["status"], running["phase"]) == ("running", "spawning")
    assert running["supervisor_owner"] == "jarvis-4242" and running["completed_at"] is None
    assert running["dispatch_branch"] == "jarvis-w2-run" and running["context_intent"] == "fresh"
    assert running["expects_followup_container"] == 0 and running["retry_count"] == 0
    failed = rows["w1-fail"]
    assert (failed["status"], failed["phase"]) == ("failed", "terminal")
    assert failed["result_summary"] == "no output for 3 s"
    assert json.loads(failed["error_details"]) == {"reason": "no output for 3 s"}
    assert failed["completed_at"] is not None and failed["supervisor_owner"] is None
    queued = rows["w2-queued"]
    assert (queued["status"], queued["phase"]) == ("queued", "queued")
    assert queued["started_at"] is not None  # when it was dispatched, as NanoClaw's queued row
    assert rows["w1-done"]["status"] == "review_requested"
    assert rows["w1-done"]["error_details"] is None


@pytest.mark.parametrize(
    ("run", "phase"),
    [
        ({"state": "running", "worker_pid": 12}, "active"),
        ({"state": "running", "worker_pid": 12, "verification_state": "pending"},
         "completion_validating"),
        ({"state": "done"}, "terminal"),
        ({"state": "failed_contract"}, "terminal"),
    ],
)  # fmt: skip
def test_phases(run: dict[str, object], phase: str) -> None:
    assert phase_of(run) == phase


def test_every_jarvis_state_is_a_nanoclaw_status() -> None:
    nanoclaw = {"queued", "running", "review_requested", "done", "failed", "failed_contract",
                "failed_timeout"}  # fmt: skip
    for state in RunState:
        row = row_of({"run_id": "r", "lane": "l", "state": state.value}, owner="o")
        assert row["status"] in nanoclaw


def test_each_list_holds_the_25_newest(store: SqliteStore) -> None:
    for n in range(30):
        make(store, f"r{n:02d}", "jarvis-worker-1", RunState.QUEUED)
    snapshot = build(store, "jarvis-worker-1", owner="o")
    assert ids(snapshot["recent"]) == [f"r{n:02d}" for n in range(29, 4, -1)]
    assert len(snapshot["active"]) == 25


def test_refused_requests_are_the_dispatch_blocks_of_their_lane(
    fleet: SqliteStore, tmp_path: Path
) -> None:
    root = tmp_path / "data" / "ipc"
    with fleet.transaction() as tx:
        for n, (lane, folder, run, target) in enumerate([
            ("andy-developer", "messages", "w9", "jarvis-worker-2@nanoclaw"),
            ("andy-developer", "tasks", None, None),
            ("jarvis-worker-1", "progress/r1", "r1", None), ("team", "messages", None, "x@g.us"),
        ]):  # fmt: skip
            tx.execute(
                "INSERT INTO quarantined_files (reason_file, run_id, named_run, lane, code, "
                "message, original_path, outcome, quarantined_at, target_jid) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, 'moved', ?, ?)",
                [f"r{n}.reason.json", None, run, lane, "invalid_dispatch",
                 f"refused {n}", str(root / lane / folder / f"{n}.json"), tx.now, target],
            )  # fmt: skip
    andy = build(fleet, "andy-developer", owner="o")["dispatch_blocks"]
    assert [b["reason_text"] for b in andy] == ["refused 1", "refused 0"]
    assert list(andy[1]) == ["timestamp", "source_group", "target_jid", "target_folder",
                             "reason_code", "reason_text", "run_id"]  # fmt: skip
    assert (andy[1]["target_jid"], andy[1]["target_folder"]) == (
        "jarvis-worker-2@nanoclaw", "jarvis-worker-2"
    )  # fmt: skip
    # A file that named no chat: NanoClaw's type requires one all the same.
    assert list(andy[0]) == ["timestamp", "source_group", "target_jid", "reason_code",
                             "reason_text"]  # fmt: skip
    assert andy[0]["target_jid"] == "unknown" and andy[1]["source_group"] == "andy-developer"
    everything = build(fleet, "main", owner="o")["dispatch_blocks"]
    assert [b["reason_text"] for b in everything] == ["refused 3", "refused 1", "refused 0"]
    assert build(fleet, "jarvis-worker-1", owner="o")["dispatch_blocks"] == []


def test_the_text_is_json_stringify_with_two_spaces(fleet: SqliteStore) -> None:
    snapshot = build(fleet, "main", owner="o")
    data = render(snapshot)
    assert not data.endswith(b"\n") and data.startswith(b'{\n  "generated_at": "')
    assert data == json.dumps(snapshot, indent=2, ensure_ascii=False).encode()
    assert b'"dispatch_blocks": []' in data
    assert json.loads(render({"x": "\ud800"})) == {"x": "\ud800"}


def test_write_renames_a_temp_and_never_follows_links(tmp_path: Path) -> None:
    lane = tmp_path / "lane"
    lane.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    os.symlink(victim, lane / TEMP)  # a runner left a link where the temp file goes
    write(lane, b"{}")
    assert (lane / FILE).read_bytes() == b"{}" and victim.read_text() == "keep me"
    assert not (lane / TEMP).exists()
    linked = tmp_path / "linked"
    os.symlink(lane, linked)
    with pytest.raises(OSError):
        write(linked, b"{}")


def test_the_writer_writes_every_lane_on_changes_and_every_15_s(
    fleet: SqliteStore, tmp_path: Path
) -> None:
    layout = IpcLayout(tmp_path / "data" / "ipc")
    layout.ensure_lane("andy-developer")
    os.symlink(tmp_path, layout.root / "linked-lane")  # never written through
    writer = WorkerRunsWriter(layout, owner="o")
    assert writer.refresh(fleet, ["configured"], now=100.0) == 5
    lanes = sorted(p.name for p in layout.root.iterdir() if (p / FILE).exists())
    assert lanes == ["andy-developer", "configured", "jarvis-worker-1", "jarvis-worker-2",
                     "team"]  # fmt: skip
    assert not (tmp_path / FILE).exists()
    assert writer.refresh(fleet, now=100.0 + CHECK_S) == 0  # nothing changed
    make(fleet, "new-run", "jarvis-worker-1", RunState.QUEUED)
    assert writer.refresh(fleet, now=100.0 + CHECK_S / 2) == 0  # not asked again yet
    assert writer.refresh(fleet, now=100.0 + 2 * CHECK_S) == 5
    shown = json.loads((layout.root / "jarvis-worker-1" / FILE).read_text())
    assert "new-run" in ids(shown["recent"])
    assert writer.refresh(fleet, now=100.0 + 2 * CHECK_S + REFRESH_S) == 5
