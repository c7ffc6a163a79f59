"""A running host moves every file it cannot accept to errors/, with its reason, and carries on.

Each kind of bad file from docs/ipc.md is dropped into the IPC tree of a live host (the way a
writer would: temp file, then rename). Each must end up in ``data/ipc/errors/`` byte for byte,
beside exactly one ``.reason.json`` with the expected code, and a good file dropped afterwards
must still be ingested: one bad writer cannot stop the host.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.host.ingest import Ingestor
from core.ipc.files import MAX_EVENT_BYTES, REASON_SUFFIX
from core.ipc.layout import IpcLayout
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.host.hostkit import (
    WATCH_MODES,
    connect,
    dispatch,
    rows,
    running_host,
    wait_for_sweeps,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

OWN, OTHER = "jarvis-worker-1", "jarvis-worker-2"
RUN, OTHER_RUN = "quarantine-run-1", "quarantine-run-2"


def progress(run_id: str = RUN, lane: str = OWN, seq: int = 1, **changes: Any) -> bytes:
    doc: dict[str, Any] = {
        "kind": "worker_progress",
        "run_id": run_id,
        "group_folder": lane,
        "timestamp": "2026-11-22T03:30:00.120Z",
        "phase": "testing",
        "summary": f"running pytest: {seq} passed",
        "tool_used": "bash",
        "seq": seq,
    }
    doc.update(changes)
    return json.dumps(doc).encode()


def task(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


@dataclass(frozen=True)
class Bad:
    """One refused file: where it goes (bytes: names need not be text), what it holds, and why."""

    case: str
    where: bytes
    """Path below data/ipc."""
    content: bytes | None
    """None for a symbolic link (to a good file outside the tree)."""
    code: str
    lane: str | None


def _p(text: str) -> bytes:
    return text.encode()


CASES = [
    Bad("not-json", _p(f"{OWN}/progress/{RUN}/1-1.json"), b"hello, this is not JSON\n",
        "not_json", OWN),
    Bad("truncated", _p(f"{OWN}/progress/{RUN}/2-2.json"), progress(seq=2)[:40], "not_json", OWN),
    Bad("too-large", _p(f"{OWN}/progress/{RUN}/3-3.json"),
        progress(seq=3, summary="x" * (MAX_EVENT_BYTES + 10)), "too_large", OWN),
    Bad("not-an-object", _p(f"{OWN}/progress/{RUN}/4-4.json"), b"[1, 2, 3]", "not_object", OWN),
    Bad("missing-fields", _p(f"{OWN}/progress/{RUN}/5-5.json"),
        b'{"kind": "worker_progress", "seq": 5}', "required", OWN),
    Bad("wrong-lane", _p(f"{OWN}/progress/{OTHER_RUN}/6-6.json"),
        progress(run_id=OTHER_RUN, seq=6), "wrong_lane", OWN),
    Bad("unknown-run", _p(f"{OWN}/progress/quarantine-nobody/7-7.json"),
        progress(run_id="quarantine-nobody", seq=7), "unknown_run", OWN),
    Bad("run-id-mismatch", _p(f"{OWN}/progress/{RUN}/8-8.json"),
        progress(run_id=OTHER_RUN, seq=8), "run_id_mismatch", OWN),
    Bad("symlink", _p(f"{OWN}/progress/{RUN}/x.json"), None, "symlink", OWN),
    Bad("control-character", f"{OWN}/progress/{RUN}/9-\x07-9.json".encode(), progress(seq=9),
        "bad_name", None),
    Bad("not-utf8", _p(f"{OWN}/progress/{RUN}/") + b"10-\xff\xfe-10.json", progress(seq=10),
        "bad_name", None),
    Bad("steer-not-allowed", b"andy-bot/tasks/steer.json",
        task({"type": "steer_worker", "run_id": RUN, "message": "stop now"}),
        "not_authorized", "andy-bot"),
    Bad("dispatch-not-allowed", b"andy-bot/tasks/dispatch.json",
        task({"type": "dispatch", "target": OTHER,
              "payload": dispatch_doc("quarantine-new-1")}),
        "dispatch_unauthorized", "andy-bot"),
    Bad("worker-dispatches-worker", _p(f"{OWN}/tasks/dispatch.json"),
        task({"type": "dispatch", "target": OTHER,
              "payload": dispatch_doc("quarantine-new-2")}),
        "dispatch_unauthorized", OWN),
]  # fmt: skip


def _drop(ipc: Path, bad: Bad, link_target: Path) -> Path:
    """Put the file in place the way a writer would: a hidden temp file, then a rename."""
    target = os.path.join(os.fsencode(ipc), bad.where)
    folder = os.path.dirname(target)
    os.makedirs(folder, exist_ok=True)
    temp = os.path.join(folder, b"." + bad.case.encode() + b".tmp")
    if bad.content is None:
        os.symlink(os.fsencode(link_target), temp)
    else:
        with open(temp, "wb") as handle:
            handle.write(bad.content)
    os.replace(temp, target)
    return Path(os.fsdecode(target))


def _as_recorded(path: Path) -> str:
    """A path as a reason file records it: undecodable bytes kept as backslash escapes."""
    return os.fspath(path).encode("utf-8", "backslashreplace").decode("utf-8")


def _reasons(errors_dir: Path) -> list[dict[str, Any]]:
    if not errors_dir.exists():
        return []
    return [json.loads(p.read_bytes()) for p in errors_dir.glob(f"*{REASON_SUFFIX}")]


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    # Paused lanes: the runs exist (so progress can name them) but no worker ever starts.
    write_config(root, lane_concurrency={OWN: 0, OTHER: 0})
    store = SqliteStore(root / "jarvis.db")
    dispatch(store, RUN, lane=OWN)
    dispatch(store, OTHER_RUN, lane=OTHER)
    store.close()
    yield root


@pytest.mark.parametrize("poll", WATCH_MODES)
def test_every_bad_file_is_quarantined_once_and_the_host_carries_on(
    ws: Path, tmp_path: Path, poll: bool
) -> None:
    ipc = ws / "data" / "ipc"
    errors_dir = ipc / "errors"
    link_target = tmp_path / "outside.json"
    link_target.write_bytes(progress(seq=99))
    conn = connect(ws)
    with running_host(ws, poll=poll) as host:
        dropped: dict[str, tuple[Bad, Path]] = {}
        for bad in CASES:
            path = _drop(ipc, bad, link_target)
            dropped[_as_recorded(path)] = (bad, path)

        def all_quarantined() -> bool:
            seen = {r["original_path"] for r in _reasons(errors_dir)}
            return set(dropped) <= seen

        wait_until(
            all_quarantined,
            HANG_GUARD_S,
            "every bad file to be quarantined",
            lambda: f"reasons: {_reasons(errors_dir)}\n{host.log()[-3000:]}",
        )

        # Still working: a good event dropped after all of that is ingested.
        good = ipc / OWN / "progress" / RUN / "1000-1.json"
        temp = good.with_name(".good.tmp")
        temp.write_bytes(progress(seq=1))
        os.replace(temp, good)

        def ingested() -> bool:
            found = rows(conn, "SELECT seq FROM progress_events WHERE run_id = ?", [RUN])
            return found == [{"seq": 1}] and not good.exists()

        wait_until(ingested, HANG_GUARD_S, "the good file to be ingested", host.log)
        # Two more whole sweeps, counted: a refused file must not be refused again.
        canaries = wait_for_sweeps(ws, 2, host)
        assert host.proc.poll() is None, host.log()

    reasons = _reasons(errors_dir)
    # The watcher and the sweep can both report one file: it must still get one reason only.
    per_file = Counter(r["original_path"] for r in reasons)
    twice = {path: n for path, n in per_file.items() if n > 1}
    assert not twice, f"quarantined more than once: {twice}"
    assert len(reasons) == len(CASES), reasons

    for reason in reasons:
        bad, original = dropped[reason["original_path"]]
        assert (reason["code"], reason["lane"]) == (bad.code, bad.lane), (bad.case, reason)
        assert reason["message"] and reason["quarantined_at"], reason
        assert reason["outcome"] == "moved", (bad.case, reason)
        assert not os.path.lexists(original), f"{bad.case}: still in the tree"
        stored = Path(reason["stored_as"])
        assert stored.parent == errors_dir
        if bad.content is None:
            # The link itself was moved, not what it points to.
            assert stored.is_symlink() and os.readlink(stored) == str(link_target)
            assert link_target.read_bytes() == progress(seq=99)
        else:
            assert stored.read_bytes() == bad.content, f"{bad.case}: content changed"

    # None of the refused files had an effect.
    assert rows(conn, "SELECT COUNT(*) AS n FROM progress_events")[0]["n"] == 1
    assert rows(conn, "SELECT COUNT(*) AS n FROM steering_events")[0]["n"] == 0
    assert {r["run_id"] for r in rows(conn, "SELECT run_id FROM runs")} == {
        RUN, OTHER_RUN, *canaries,
    }  # fmt: skip
    # Every refused file is gone; the host's own worker_runs.json stays in each lane.
    leftovers = [
        p for p in ipc.rglob("*.json")
        if errors_dir not in p.parents and p.name != "worker_runs.json"
    ]  # fmt: skip
    assert leftovers == [], leftovers
    conn.close()


def test_a_path_refused_by_its_name_alone_is_not_quarantined_again_once_moved(
    ws: Path,
) -> None:
    """The watcher and the sweep can both report one file; the second report must be a no-op.

    Ingestor.handle is called twice for the same path, as the host does when a watcher event
    is still queued after the once-a-second sweep has already moved the file.
    """
    ipc = ws / "data" / "ipc"
    bad = next(b for b in CASES if b.case == "control-character")
    path = _drop(ipc, bad, ws)
    store = SqliteStore(ws / "jarvis.db")
    try:
        ingestor = Ingestor(store, IpcLayout(ipc))
        first = ingestor.handle(path)
        assert first.outcome == "quarantined"
        again = ingestor.handle(path)
    finally:
        store.close()
    reasons = _reasons(ipc / "errors")
    assert [r["outcome"] for r in reasons] == ["moved"], reasons
    assert again.outcome in ("gone", "ignored"), again


def test_a_late_older_event_does_not_become_the_runs_last_progress(ws: Path) -> None:
    """Files can arrive out of order (a crash between batches): the newest seq stays the last
    progress an operator sees, and the older event is still recorded and journalled."""
    ipc = ws / "data" / "ipc"
    folder = ipc / OWN / "progress" / RUN
    folder.mkdir(parents=True)
    store = SqliteStore(ws / "jarvis.db")
    try:
        ingestor = Ingestor(store, IpcLayout(ipc))
        for seq in (2, 1):
            path = folder / f"20261122T033000-{seq}.json"
            path.write_bytes(progress(seq=seq))
            assert ingestor.handle(path).outcome == "ingested"
        run = store.get_run(RUN)
        assert run is not None and run["last_progress_summary"] == "running pytest: 2 passed"
        kinds = [e["kind"] for e in store.journal_since(0, run_id=RUN)]
        assert kinds.count("progress") == 2
    finally:
        store.close()
