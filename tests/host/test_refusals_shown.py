"""A refused IPC file reaches the operator: on its run when it names one, else for the workspace.

The host records each quarantine in the store (code, message, where the file now lies), tied to
the run its path or, read defensively, its content names. One the store could not record when
it happened (a full disk) is recorded once the store works again, and so is one an earlier host
left only as a reason file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.host.config import load_config
from core.host.host import Host
from core.ipc.files import atomic_write_json, quarantine
from core.run_views import quarantined_files, run_detail
from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace
from tests.core.store_helpers import dispatch_doc
from tests.host.hostkit import wait_until
from tests.host.inproc import LANE, LoopThread, host_in_process, write_progress

RUN = "refused-run-1"
WAIT_S = 60.0


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with host_in_process(tmp_path / "ws", RUN) as made:
        yield made


def drop(host: Host, relative: str, content: bytes | dict[str, Any]) -> Path:
    path = host.layout.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, dict):
        atomic_write_json(path, content)
    else:
        path.write_bytes(content)
    return path


def journal_kinds(store: SqliteStore, run_id: str) -> list[dict[str, Any]]:
    return [
        {"kind": e["kind"], **json.loads(e["payload"])}
        for e in store.journal_since(0, run_id=run_id)
        if e["kind"] == "quarantined"
    ]


def test_a_refused_progress_file_shows_on_its_run(host: Host) -> None:
    assert host.store is not None
    bad = drop(host, f"{LANE}/progress/{RUN}/00000001-1.json", b"not JSON at all")
    host.sweep()
    detail = run_detail(host.store, RUN)
    assert detail is not None
    (refused,) = detail["quarantined"]
    assert refused["code"] == "not_json"
    assert refused["message"] and refused["lane"] == LANE
    assert refused["original_path"] == str(bad)
    assert Path(refused["stored_as"]).read_bytes() == b"not JSON at all"
    assert refused["quarantined_at"]
    (entry,) = journal_kinds(host.store, RUN)
    assert entry["code"] == "not_json"  # the console hears of it through the journal
    host.sweep()
    assert len(run_detail(host.store, RUN)["quarantined"]) == 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("where", "content", "code"),
    [
        pytest.param(
            "andy-bot/tasks/steer.json",
            {"type": "steer_worker", "run_id": RUN, "message": "stop"},
            "not_authorized",
            id="a-task-naming-the-run",
        ),
        pytest.param(
            "main/messages/again.json",
            {"type": "message", "chatJid": "x@g.us", "text": json.dumps(dispatch_doc(RUN))},
            "dispatch_duplicate",
            id="a-message-whose-dispatch-names-the-run",
        ),
        pytest.param(
            f"{LANE}/tasks/dispatch.json",
            {"type": "dispatch", "target": "jarvis-worker-2", "payload": dispatch_doc(RUN)},
            "dispatch_unauthorized",
            id="a-dispatch-task-naming-the-run",
        ),
    ],
)
def test_a_run_id_inside_a_refused_file_ties_it_to_that_run(
    host: Host, where: str, content: dict[str, Any], code: str
) -> None:
    assert host.store is not None
    drop(host, where, content)
    host.sweep()
    (refused,) = run_detail(host.store, RUN)["quarantined"]  # type: ignore[index]
    assert refused["code"] == code, refused


def test_refusals_naming_no_known_run_are_listed_for_the_workspace(host: Host) -> None:
    assert host.store is not None
    drop(host, f"{LANE}/tasks/garbage.json", b"\x00\x01 not even text")
    write_progress(host, "nobody-run", 1)  # a run that does not exist
    host.sweep()
    assert run_detail(host.store, RUN)["quarantined"] == []  # type: ignore[index]
    listed = quarantined_files(host.store)
    assert sorted(r["code"] for r in listed) == ["not_json", "unknown_run"]
    assert all(r["run_id"] is None for r in listed)
    assert {r["named_run"] for r in listed} == {None, "nobody-run"}
    assert journal_kinds(host.store, "nobody-run") == []


def test_a_linked_run_folder_is_shown_on_its_run(host: Host, tmp_path: Path) -> None:
    assert host.store is not None
    (tmp_path / "elsewhere").mkdir()
    progress = host.layout.lane_dir(LANE) / "progress"
    progress.mkdir(parents=True)
    (progress / RUN).symlink_to(tmp_path / "elsewhere")
    host.sweep()
    (refused,) = run_detail(host.store, RUN)["quarantined"]  # type: ignore[index]
    assert refused["code"] == "symlink"


def test_reason_files_an_earlier_host_left_are_recorded_at_start(host: Host) -> None:
    assert host.store is not None
    path = drop(host, f"{LANE}/progress/{RUN}/00000001-1.json", b"{")
    # Moved aside, but never recorded (a host of an older version, or one that died between).
    quarantine(path, host.layout.errors_dir, lane=LANE, code="not_json", message="Broken.",
               details={"run_id": RUN})  # fmt: skip
    host._start_up()
    host._start_up()
    (refused,) = run_detail(host.store, RUN)["quarantined"]  # type: ignore[index]
    assert refused["code"] == "not_json" and refused["message"] == "Broken."


def test_a_refusal_the_store_could_not_record_is_recorded_once_it_can(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    with host_in_process(root, RUN):
        pass
    (root / "jarvis.toml").write_text(
        f'[workers]\nlane_concurrency = {{ "{LANE}" = 0 }}\n[watch]\npoll = true\n'
        "poll_interval_ms = 20\n"
    )
    workspace = Workspace.resolve(root)
    loop = LoopThread(Host(workspace, load_config(workspace.root))).start()
    try:
        # A store that refuses writes (a small record would still fit a full store's pages).
        loop.call(lambda s: s.db.execute("PRAGMA query_only = ON"))
        # Refused before any transaction (too large), the file is moved aside with its reason;
        # only recording it needs the store.
        bad = drop(loop.host, f"{LANE}/progress/{RUN}/00000001-1.json", b" " * 70_000)
        wait_until(lambda: not bad.exists() and loop.host.faults.attempts >= 2, WAIT_S,
                   "the host to move the file and fail to record it",
                   lambda: f"{bad.exists()} {loop.host.faults.attempts}")  # fmt: skip
        assert loop.call(lambda s: s.rows("SELECT * FROM quarantined_files")) == []
        loop.call(lambda s: s.db.execute("PRAGMA query_only = OFF"))
        wait_until(
            lambda: loop.call(lambda s: run_detail(s, RUN)["quarantined"]),  # type: ignore[index]
            WAIT_S,
            "the refusal to be recorded",
        )
        loop.call(lambda s: loop.host.sweep())
        (refused,) = loop.call(lambda s: run_detail(s, RUN)["quarantined"])  # type: ignore[index]
        assert refused["code"] == "too_large"
    finally:
        loop.stop()


def test_an_unrecorded_refusal_older_than_a_recorded_one_is_still_recorded(host: Host) -> None:
    """The store failed for one refusal and worked for a later one before the catch-up ran."""
    assert host.store is not None
    older = drop(host, f"{LANE}/progress/{RUN}/00000001-1.json", b"{")
    quarantine(older, host.layout.errors_dir, lane=LANE, code="not_json", message="Older.",
               details={"run_id": RUN})  # fmt: skip
    drop(host, f"{LANE}/progress/{RUN}/00000002-2.json", b"[1]")  # refused and recorded
    host.sweep()
    assert [r["code"] for r in run_detail(host.store, RUN)["quarantined"]] == ["not_object"]  # type: ignore[index]
    host._start_up()
    messages = sorted(r["message"] for r in run_detail(host.store, RUN)["quarantined"])  # type: ignore[index]
    assert len(messages) == 2 and "Older." in messages
