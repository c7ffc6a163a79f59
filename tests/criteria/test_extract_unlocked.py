"""Criteria are extracted before the store's write lock is taken, never while holding it.

Extraction reads the whole task; however fast it is, it has no business inside a write
transaction, where every other writer (an operator's ``jarvis cancel``, the host's ingestion)
would queue behind it and, past the busy timeout, fail with "database is locked". Each test
here runs a real second writer — another connection cancelling another run, as ``jarvis
cancel`` does — on another thread *while* a large dispatch's criteria are being extracted, and
requires it to succeed at once.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import core.criteria.extract as extract
from core.host.ingest import Ingestor
from core.intake import submit_dispatch
from core.ipc.files import MAX_EVENT_BYTES
from core.ipc.layout import IpcLayout
from core.lifecycle import Action, RunState
from core.moves import host_move
from core.operator_actions import ActionResult, cancel
from core.store.errors import StoreError
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc, make_run
from tests.criteria.test_extract_linear import TASK

#: Only guards against a hang; a writer that is not blocked finishes at once.
WAIT_S = 60.0
#: The second writer's busy timeout: how long it queues for the lock before "database is locked".
BUSY_S = 2.0
SOURCE, TARGET = "main", "jarvis-worker-1"


def task_of(size: int) -> str:
    return (TASK * (size // len(TASK) + 1))[:size]


class CancelDuringExtraction:
    """Cancels ``victim`` from another thread and connection while criteria are extracted."""

    def __init__(self, db: Path, victim: str) -> None:
        self.db = db
        self.victim = victim
        self.extracting = threading.Event()
        self.done = threading.Event()
        self.result: ActionResult | None = None
        self.error: StoreError | None = None
        self.extractions = 0
        self.thread = threading.Thread(target=self._cancel, daemon=True)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = extract.pattern_criteria

        def extracting(*args: Any, **kwargs: Any) -> Any:
            self.extractions += 1
            if not self.extracting.is_set():
                self.extracting.set()
                assert self.done.wait(WAIT_S), "the second writer never finished"
            return original(*args, **kwargs)

        monkeypatch.setattr(extract, "pattern_criteria", extracting)
        self.thread.start()

    def _cancel(self) -> None:
        if not self.extracting.wait(WAIT_S):
            self.done.set()
            return
        try:
            other = SqliteStore(self.db, busy_timeout_s=BUSY_S)
            try:
                self.result = cancel(other, self.victim, "night-operator", "wrong base branch")
            finally:
                other.close()
        except StoreError as exc:  # "locked" when extraction holds the lock
            self.error = exc
        finally:
            self.done.set()

    def check(self) -> None:
        self.thread.join(WAIT_S)
        assert self.extractions >= 1, "the dispatch's criteria were never extracted"
        assert self.error is None, f"a concurrent cancel failed: {self.error}"
        assert self.result is not None and self.result.ok, self.result


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "jarvis.db")
    make_run(opened, "victim", RunState.QUEUED)
    yield opened
    opened.close()


def _extracted(store: SqliteStore, run_id: str) -> list[dict[str, Any]]:
    run = store.get_run(run_id)
    assert run is not None
    criteria: list[dict[str, Any]] = json.loads(run["criteria_json"])
    return criteria


def test_jarvis_dispatch_extracts_before_the_write_transaction(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = CancelDuringExtraction(store.path, "victim")
    writer.install(monkeypatch)
    doc = dispatch_doc("big-1", input=task_of(150_000))
    result = submit_dispatch(store, doc, source_lane=SOURCE, target_lane=TARGET, actor="op")
    writer.check()
    assert result.outcome == "enqueued", result.to_json()
    assert {"type": "file_exists", "path": "src/app/handlers.py"}.items() <= (
        _extracted(store, "big-1")[0].items()
    )
    victim = store.get_run("victim")
    assert victim is not None and victim["state"] == "failed"


def test_a_re_dispatch_extracts_before_the_write_transaction(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_run(store, "again-1", RunState.QUEUED)
    host_move(store, "again-1", Action.START)
    host_move(store, "again-1", Action.FAIL)
    writer = CancelDuringExtraction(store.path, "victim")
    writer.install(monkeypatch)
    doc = dispatch_doc("again-1", input=task_of(150_000))
    result = submit_dispatch(store, doc, source_lane=SOURCE, target_lane=TARGET, actor="op")
    writer.check()
    assert result.outcome == "retried", result.to_json()
    assert _extracted(store, "again-1")[0]["path"] == "src/app/handlers.py"


def _ingest(store: SqliteStore, layout: IpcLayout, path: Path) -> None:
    outcome = Ingestor(store, layout).handle(path)
    assert outcome.outcome == "ingested", outcome


def test_the_hosts_ingest_of_a_task_file_extracts_before_the_transaction(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    layout = IpcLayout(tmp_path / "ipc")
    layout.ensure_lane(SOURCE)
    body = {"type": "dispatch", "target": TARGET, "payload": dispatch_doc("big-2", input="")}
    room = MAX_EVENT_BYTES - len(json.dumps(body)) - 2_000
    body["payload"]["input"] = task_of(room)  # a dispatch as large as a task file may be
    path = layout.tasks_dir(SOURCE) / "big.json"
    path.write_text(json.dumps(body))
    writer = CancelDuringExtraction(store.path, "victim")
    writer.install(monkeypatch)
    _ingest(store, layout, path)
    writer.check()
    assert _extracted(store, "big-2")[0]["path"] == "src/app/handlers.py"


def test_the_hosts_ingest_of_a_message_dispatch_extracts_before_the_transaction(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    layout = IpcLayout(tmp_path / "ipc")
    layout.ensure_lane(SOURCE)
    payload = dispatch_doc("big-3", input=task_of(40_000))
    body = {"type": "message", "chatJid": "ops@g.us", "text": json.dumps(payload)}
    path = layout.messages_dir(SOURCE) / "big.json"
    path.write_text(json.dumps(body))
    assert path.stat().st_size <= MAX_EVENT_BYTES
    writer = CancelDuringExtraction(store.path, "victim")
    writer.install(monkeypatch)
    _ingest(store, layout, path)
    writer.check()
    assert _extracted(store, "big-3")[0]["path"] == "src/app/handlers.py"


def test_the_guard_sees_extraction_inside_a_transaction(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check above must be able to fail: extraction run inside a write transaction, as it
    # used to be, leaves the concurrent cancel locked out.
    writer = CancelDuringExtraction(store.path, "victim")
    writer.install(monkeypatch)
    with store.transaction():
        extract.extract_criteria("Create src/a.py.", universal=False)
    writer.thread.join(WAIT_S)
    assert writer.error is not None and writer.error.code == "store_busy"
    assert isinstance(writer.error.__cause__, sqlite3.OperationalError)
    assert "locked" in str(writer.error.__cause__)
