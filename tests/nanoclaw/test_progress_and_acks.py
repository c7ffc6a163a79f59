"""Progress and steer acks as NanoClaw's worker writes them reach the store, each exactly once.

The worker numbers its events from 0, and from 0 again for each query of an attempt; it writes
them, and its acks, in place (no temp file), so the host can read one empty or half-written. The
files here come from `tests.nanoclaw.progress_writer`, byte for byte what the worker writes.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.host.ingest import Ingestor
from core.ipc.files import REASON_SUFFIX
from core.ipc.inplace import WRITE_GRACE_S
from core.ipc.layout import HOST_SNAPSHOTS, IpcLayout
from core.lifecycle import Action
from core.moves import host_move
from core.operator_actions import steer
from core.run_views import run_detail
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    WATCH_MODES,
    cli,
    connect,
    dispatch,
    rows,
    run_row,
    running_host,
    wait_until,
)
from tests.nanoclaw import progress_writer
from tests.nanoclaw.progress_writer import Writer, compact, progress_event, write_in_place
from tests.processes import HANG_GUARD_S

LANE = "jarvis-worker-1"
RUN = "task-20260317-001"
WRITER = Path(progress_writer.__file__)


def reasons(ipc: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((ipc / "errors").glob(f"*{REASON_SUFFIX}"))]


def errors_left(ipc: Path) -> list[str]:
    folder = ipc / "errors"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def events(store: SqliteStore, run_id: str = RUN) -> list[tuple[int, str, str | None]]:
    """The run's events in the store's order for them: (seq, summary, tool_used)."""
    found = store.rows(
        "SELECT seq, summary, tool_used FROM progress_events WHERE run_id = ? "
        "ORDER BY attempt, at_utc, seq, name",
        [run_id],
    )
    return [(r["seq"], r["summary"], r["tool_used"]) for r in found]


def written(writer: Writer) -> list[tuple[int, str, str | None]]:
    return [(e["seq"], e["summary"], e["tool_used"]) for e in writer.written]


# -- the fixture writer itself ---------------------------------------------------------------------


def test_the_writer_writes_the_bytes_and_names_of_nanoclaws_worker(tmp_path: Path) -> None:
    """The examples in our notes on the worker's code (section 4), byte for byte."""
    tool = progress_event(RUN, LANE, "2026-03-17T10:01:02.345Z", 0, tool="Bash")
    assert compact(tool) == (
        b'{"kind":"worker_progress","run_id":"task-20260317-001","group_folder":"jarvis-worker-1",'
        b'"timestamp":"2026-03-17T10:01:02.345Z","phase":"using Bash","summary":"Tool: Bash",'
        b'"tool_used":"Bash","seq":0}'
    )
    text = progress_event(
        RUN, LANE, "2026-03-17T10:01:07.890Z", 1, text="I'll add the route to src/server.ts"
    )
    assert compact(text) == (
        b'{"kind":"worker_progress","run_id":"task-20260317-001","group_folder":"jarvis-worker-1",'
        b'"timestamp":"2026-03-17T10:01:07.890Z","phase":"thinking",'
        b'"summary":"I\'ll add the route to src/server.ts","seq":1}'
    )
    assert progress_writer.progress_name("2026-03-17T10:01:02.345Z", 0) == (
        "2026-03-17T10-01-02-345Z-0.json"
    )
    assert progress_event(RUN, LANE, "t", 2)["summary"] == "Working..."
    assert compact(
        progress_writer.ack("steer-1773741900000-k3j9xq", "2026-03-17T10:05:00.480Z")
    ) == (b'{"steer_id":"steer-1773741900000-k3j9xq","acked_at":"2026-03-17T10:05:00.480Z"}')
    # In place: the first part is on disk, whole, before the rest is written.
    path = tmp_path / "x.json"
    seen: list[bytes] = []
    write_in_place(path, b'{"a":1}', cut=3, between=lambda: seen.append(path.read_bytes()))
    assert (seen, path.read_bytes()) == ([b'{"a'], b'{"a":1}')


# -- ingesting, in process -------------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[tuple[Path, SqliteStore]]:
    root = tmp_path / "ws"
    root.mkdir()
    store = SqliteStore(root / "jarvis.db")
    dispatch(store, RUN, lane=LANE)
    try:
        yield root / "data" / "ipc", store
    finally:
        store.close()


class Clocks:
    """A wall clock (for files' modification times) and a monotonic one, moved by the test."""

    def __init__(self) -> None:
        self.wall = 1_800_000_000.0
        self.mono = 100.0

    def advance(self, seconds: float) -> None:
        self.wall += seconds
        self.mono += seconds

    def touch(self, path: Path) -> None:
        """Mark ``path`` as changed now (by the wall clock)."""
        os.utime(path, (self.wall, self.wall))


def ingestor(ipc: Path, store: SqliteStore, clocks: Clocks | None = None) -> Ingestor:
    if clocks is None:
        return Ingestor(store, IpcLayout(ipc))
    return Ingestor(
        store, IpcLayout(ipc), wall_clock=lambda: clocks.wall, clock=lambda: clocks.mono
    )


def test_seq_0_and_each_querys_restarted_seq_are_recorded_in_their_order(
    workspace: tuple[Path, SqliteStore],
) -> None:
    ipc, store = workspace
    writer = Writer(IpcLayout(ipc).progress_dir(LANE, RUN), RUN, LANE)
    paths = [writer.event(text="planning the change"), writer.event(tool="Read"),
             writer.event(text="editing src/server.ts")]  # fmt: skip
    writer.new_query()  # a steer taken between turns: seq from 0 again
    paths += [writer.event(tool="Bash"), writer.event(text="tests pass")]
    host = ingestor(ipc, store)
    # Out of order, as a crash or a late sweep can deliver them: still one event per file.
    random.Random(15).shuffle(paths)
    assert [host.handle(p).outcome for p in paths] == ["ingested"] * 5
    assert [e[0] for e in written(writer)] == [0, 1, 2, 0, 1]
    assert events(store) == written(writer)
    run = store.get_run(RUN)
    assert run is not None and run["last_progress_summary"] == "tests pass"
    detail = run_detail(store, RUN)
    assert detail is not None
    assert [(e["seq"], e["summary"]) for e in detail["events"]] == [
        (seq, summary) for seq, summary, _ in written(writer)
    ]


def test_a_file_seen_again_after_its_commit_is_recognised_once(
    workspace: tuple[Path, SqliteStore],
) -> None:
    """A crash between commit and delete: the same file, the same name, seen again."""
    ipc, store = workspace
    writer = Writer(IpcLayout(ipc).progress_dir(LANE, RUN), RUN, LANE)
    path = writer.event(tool="Bash")
    data = path.read_bytes()
    host = ingestor(ipc, store)
    assert host.handle(path).outcome == "ingested"
    path.write_bytes(data)
    assert host.handle(path).outcome == "replayed"
    # Even with its receipt gone, the event's identity (run, attempt, name) keeps it single.
    with store.transaction() as tx:
        tx.execute("DELETE FROM ipc_receipts", [])
    path.write_bytes(data)
    assert host.handle(path).outcome == "ingested"
    assert events(store) == written(writer)
    journal = [e for e in store.journal_since(0, run_id=RUN) if e["kind"] == "progress"]
    assert len(journal) == 1


def test_the_latest_events_usage_stands_though_seq_restarts(
    workspace: tuple[Path, SqliteStore],
) -> None:
    ipc, store = workspace
    folder = IpcLayout(ipc).progress_dir(LANE, RUN)
    folder.mkdir(parents=True)
    paths = []
    # Query 1 reaches seq 3, query 2 only seq 1, with the attempt's larger figures.
    for n, seq in enumerate([0, 1, 2, 3, 0, 1]):
        timestamp = f"2026-03-17T10:0{n}:00.000Z"
        doc = progress_event(RUN, LANE, timestamp, seq, text=f"step {n}")
        doc["usage"] = {"tokens_in": 100 * (n + 1), "tokens_out": 10 * (n + 1), "cost_usd": n}
        path = folder / progress_writer.progress_name(timestamp, seq)
        path.write_bytes(compact(doc))
        paths.append(path)
    host = ingestor(ipc, store)
    for path in reversed(paths):
        assert host.handle(path).outcome == "ingested"
    used = store.attempt_usage([RUN])[RUN]
    assert (used["tokens_in"], used["tokens_out"], used["cost_usd"]) == (600, 60, 5)
    run = store.get_run(RUN)
    assert run is not None and run["last_progress_summary"] == "step 5"


def test_a_half_written_event_waits_for_its_writer_and_is_then_ingested(
    workspace: tuple[Path, SqliteStore],
) -> None:
    ipc, store = workspace
    clocks = Clocks()
    host = ingestor(ipc, store, clocks)
    writer = Writer(IpcLayout(ipc).progress_dir(LANE, RUN), RUN, LANE)
    outcomes: list[str] = []

    def read_half_way() -> None:
        (path,) = writer.progress_dir.glob("*.json")
        clocks.touch(path)
        first = host.handle(path)
        assert first.detail, "the first wait is worth a log line"
        clocks.advance(WRITE_GRACE_S * 0.9)
        again = host.handle(path)
        assert not again.detail, "and only the first"
        outcomes.extend([first.outcome, again.outcome])

    path = writer.event(text="half of me", cut=0.5, between=read_half_way)
    assert outcomes == ["waiting", "waiting"]
    assert reasons(ipc) == []
    clocks.touch(path)  # the second part's write
    assert host.handle(path).outcome == "ingested"
    assert events(store) == written(writer)
    assert host._waiting == {}


def test_an_empty_file_is_quarantined_once_its_grace_is_over(
    workspace: tuple[Path, SqliteStore],
) -> None:
    ipc, store = workspace
    clocks = Clocks()
    host = ingestor(ipc, store, clocks)
    folder = IpcLayout(ipc).progress_dir(LANE, RUN)
    folder.mkdir(parents=True)
    path = folder / "2026-03-17T10-01-02-345Z-0.json"
    write_in_place(path, b"")
    clocks.touch(path)
    assert host.handle(path).outcome == "waiting"
    clocks.advance(WRITE_GRACE_S)
    assert host.handle(path).outcome == "quarantined"
    (reason,) = reasons(ipc)
    assert reason["code"] == "empty"
    assert "empty" in reason["message"] and f"past the {WRITE_GRACE_S:g} s" in reason["message"]
    assert reason["details"] == {"run_id": RUN}
    assert Path(reason["stored_as"]).read_bytes() == b""
    assert not path.exists() and host._waiting == {}


def test_a_file_its_writer_keeps_touching_waits_no_longer_than_the_grace(
    workspace: tuple[Path, SqliteStore],
) -> None:
    ipc, store = workspace
    clocks = Clocks()
    host = ingestor(ipc, store, clocks)
    folder = IpcLayout(ipc).progress_dir(LANE, RUN)
    folder.mkdir(parents=True)
    path = folder / "2026-03-17T10-01-02-345Z-0.json"
    path.write_bytes(b'{"kind":"worker_progress","run_id":"task-20260317-001","group')
    outcomes = []
    for _ in range(3):
        clocks.touch(path)  # changed again just now, every time
        outcomes.append(host.handle(path).outcome)
        clocks.advance(WRITE_GRACE_S / 2)
    assert outcomes == ["waiting", "waiting", "quarantined"]
    assert [r["code"] for r in reasons(ipc)] == ["not_json"]


@pytest.mark.parametrize(
    "data", [b"plain text, no JSON", b"[1, 2]", b'{"kind": "worker_progress"}'], ids=str
)
def test_a_file_no_writer_could_still_be_finishing_is_quarantined_at_once(
    workspace: tuple[Path, SqliteStore], data: bytes
) -> None:
    ipc, store = workspace
    clocks = Clocks()
    folder = IpcLayout(ipc).progress_dir(LANE, RUN)
    folder.mkdir(parents=True)
    path = folder / "2026-03-17T10-01-02-345Z-0.json"
    path.write_bytes(data)
    clocks.touch(path)
    assert ingestor(ipc, store, clocks).handle(path).outcome == "quarantined"
    (reason,) = reasons(ipc)
    assert "written in place" not in reason["message"]


def test_a_half_written_ack_waits_and_is_then_taken(
    workspace: tuple[Path, SqliteStore],
) -> None:
    ipc, store = workspace
    layout = IpcLayout(ipc)
    layout.ensure_lane(LANE)
    host_move(store, RUN, Action.START)  # steers are for running runs
    result = steer(store, RUN, "andy-developer", "Only touch src/server.ts")
    assert result.ok
    (pending,) = store.rows("SELECT steer_id FROM steering_events WHERE run_id = ?", [RUN])
    clocks = Clocks()
    host = ingestor(ipc, store, clocks)
    path = layout.ack_file(LANE, RUN)
    data = compact(progress_writer.ack(pending["steer_id"], "2026-03-17T10:05:00.480Z"))
    outcomes: list[str] = []

    def read_half_way() -> None:
        clocks.touch(path)
        outcomes.append(host.handle(path).outcome)

    write_in_place(path, data, cut=len(data) // 2, between=read_half_way)
    clocks.touch(path)
    outcomes.append(host.handle(path).outcome)
    assert outcomes == ["waiting", "ingested"]
    (steered,) = store.rows("SELECT status, acked_at FROM steering_events WHERE run_id = ?", [RUN])
    assert steered == {"status": "acked", "acked_at": "2026-03-17T10:05:00.480Z"}
    assert reasons(ipc) == [] and not path.exists()


# -- a real host -----------------------------------------------------------------------------------


def host_config(ws: Path, *, worker: bool = False, grace_s: float | None = None) -> None:
    """A workspace's config: NanoClaw's worker on every lane, or paused lanes (runs queued)."""
    workers = (
        f'command = [{sys.executable!r}, {str(WRITER)!r}, "worker"]\nconcurrency = 1\n'
        if worker
        else f'lane_concurrency = {{ "{LANE}" = 0 }}\n'
    )
    watch = f"[watch]\nwrite_grace_s = {grace_s}\n" if grace_s is not None else ""
    (ws / "jarvis.toml").write_text(
        f"[workers]\n{workers}"
        "[timeouts]\nno_output_s = 60\nhard_limit_s = 120\nsteer_ack_s = 60\n"
        f"shutdown_grace_s = 1\n{watch}"
    )


@pytest.fixture
def host_ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def queue_run(ws: Path) -> None:
    store = SqliteStore(ws / "jarvis.db")
    try:
        dispatch(store, RUN, lane=LANE)
    finally:
        store.close()


def waited_for(log: str, path: Path) -> bool:
    return any("waiting for" in line and path.name in line for line in log.splitlines())


@pytest.mark.slow
def test_a_nanoclaw_workers_run_its_progress_from_seq_0_and_its_ack_reach_the_store(
    host_ws: Path,
) -> None:
    ws = host_ws
    host_config(ws, worker=True)
    queue_run(ws)
    ipc = ws / "data" / "ipc"
    conn = connect(ws)
    try:
        with running_host(ws) as host:

            def first_query_in() -> bool:
                found = rows(conn, "SELECT seq FROM progress_events WHERE run_id = ?", [RUN])
                return len(found) == 3

            wait_until(first_query_in, HANG_GUARD_S, "the first query's events", host.log)
            store = SqliteStore(ws / "jarvis.db")
            try:
                assert steer(store, RUN, "andy-developer", "Only touch src/server.ts").ok
            finally:
                store.close()

            def ended() -> bool:
                return bool(run_row(conn, RUN)["state"] != "running")

            wait_until(ended, HANG_GUARD_S, "the worker to finish", host.log)
            log = host.log()
        (steered,) = rows(conn, "SELECT status FROM steering_events WHERE run_id = ?", [RUN])
        assert steered["status"] == "acked", log
        found = rows(
            conn,
            "SELECT seq, summary, tool_used FROM progress_events WHERE run_id = ? "
            "ORDER BY attempt, at_utc, seq, name",
            [RUN],
        )
        expected = []
        for query, step in progress_writer.worker_steps():
            text = f"query {query}, step {step}: reading src/server.ts"
            tool = "Bash" if step % 2 else None
            expected.append((step, f"Tool: {tool}" if tool else text, tool))
        assert [(r["seq"], r["summary"], r["tool_used"]) for r in found] == expected, log
        assert run_row(conn, RUN)["last_progress_summary"] == expected[-1][1]
        _, shown = cli(ws, "show", RUN)
        assert [(e["seq"], e["summary"]) for e in shown["run"]["events"]] == [
            (seq, summary) for seq, summary, _ in expected
        ]
        assert errors_left(ipc) == [], reasons(ipc)
        assert "quarantined" not in log
        # Nothing is left but the host's own snapshot for the lane's coordinator to read.
        leftovers = [p for p in (ipc / LANE).rglob("*.json") if p.name not in HOST_SNAPSHOTS]
        assert leftovers == []
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("poll", WATCH_MODES)
def test_a_half_written_file_finished_within_the_grace_is_ingested_not_quarantined(
    host_ws: Path, poll: bool
) -> None:
    ws = host_ws
    # A grace far longer than the test needs between its two writes: the second lands within
    # it however slow the machine, so nothing here depends on timing.
    host_config(ws, grace_s=60)
    queue_run(ws)
    ipc = ws / "data" / "ipc"
    conn = connect(ws)
    try:
        with running_host(ws, poll=poll) as host:
            writer = Writer(ipc / LANE / "progress" / RUN, RUN, LANE)
            first = writer.event(text="before")
            wait_until(lambda: not first.exists(), HANG_GUARD_S, "the first event", host.log)

            def until_the_host_waits() -> None:
                (half,) = writer.progress_dir.glob("*.json")
                wait_until(lambda: waited_for(host.log(), half), HANG_GUARD_S,
                           "the host to find the file half-written", host.log)  # fmt: skip

            path = writer.event(tool="Edit", cut=0.5, between=until_the_host_waits)

            def ingested() -> bool:
                found = rows(conn, "SELECT seq FROM progress_events WHERE run_id = ?", [RUN])
                return len(found) == 2 and not path.exists()

            wait_until(ingested, HANG_GUARD_S, "the finished file to be ingested", host.log)
            log = host.log()
        assert errors_left(ipc) == [], reasons(ipc)
        assert "quarantined" not in log
    finally:
        conn.close()


GRACE_S = 5.0
"""The live test's grace: a host starved for the default 2 s would refuse the file on sight."""


@pytest.mark.slow
def test_an_empty_file_that_stays_empty_is_quarantined_after_the_grace_with_why(
    host_ws: Path,
) -> None:
    ws = host_ws
    # A grace a starved host still sees the file within: the test is that it waits first.
    host_config(ws, grace_s=GRACE_S)
    queue_run(ws)
    ipc = ws / "data" / "ipc"
    folder = ipc / LANE / "progress" / RUN
    conn = connect(ws)
    try:
        with running_host(ws) as host:
            folder.mkdir(parents=True, exist_ok=True)
            empty = folder / "2026-03-17T10-01-02-345Z-0.json"
            write_in_place(empty, b"")
            wait_until(lambda: reasons(ipc), HANG_GUARD_S, "the empty file's quarantine",
                       host.log)  # fmt: skip
            # Meanwhile, and after, other files go through.
            writer = Writer(folder, RUN, LANE)
            after = writer.event(text="still going")
            wait_until(lambda: not after.exists(), HANG_GUARD_S, "a later event", host.log)
            log = host.log()
        (reason,) = reasons(ipc)
        assert (reason["code"], reason["lane"]) == ("empty", LANE)
        assert reason["message"] == (
            f"The document is empty. It stayed so past the {GRACE_S:g} s a file written "
            "in place is given to be finished."
        )
        assert reason["original_path"] == str(empty) and not empty.exists()
        assert Path(reason["stored_as"]).read_bytes() == b""
        # It was left for its writer first, not refused on sight.
        lines = log.splitlines()
        waited = next(i for i, line in enumerate(lines) if "waiting for" in line)
        refused = next(i for i, line in enumerate(lines) if "quarantined" in line)
        assert waited < refused, log
        assert rows(conn, "SELECT seq, summary FROM progress_events") == [
            {"seq": 0, "summary": "still going"}
        ]
        # The store has it too, tied to its run, for `jarvis errors` and `jarvis show`.
        recorded = rows(conn, "SELECT run_id, code FROM quarantined_files")
        assert recorded == [{"run_id": RUN, "code": "empty"}]
    finally:
        conn.close()
