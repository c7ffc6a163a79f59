"""A host driven in the test's own process: its sweep and loop steps called directly.

The subprocess host (`tests.host.hostkit`) proves the whole service; this one lets a test reach
into the host's store connection (a ``PRAGMA`` only works on the connection it is set on) and
step it without timing.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from core.host.config import load_config
from core.host.host import Host
from core.host.ingest import Ingestor
from core.intake import submit_dispatch
from core.ipc.files import REASON_SUFFIX, atomic_write_json
from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace
from tests.core.store_helpers import dispatch_doc

LANE = "jarvis-worker-1"


@contextmanager
def host_in_process(root: Path, *run_ids: str, config: str = "") -> Iterator[Host]:
    """A `Host` on ``root`` with its store open and ``run_ids`` queued on `LANE`; ``config``,
    when given, is its ``jarvis.toml``."""
    workspace = Workspace.resolve(root)
    if config:
        (workspace.root / "jarvis.toml").write_text(config)
    host = Host(workspace, load_config(workspace.root))
    host.store = SqliteStore(workspace.db_path)
    host.inbox.ingestor = Ingestor(host.store, host.layout)
    host.layout.errors_dir.mkdir(parents=True, exist_ok=True)
    for run_id in run_ids:
        result = submit_dispatch(
            host.store, dispatch_doc(run_id), source_lane="main", target_lane=LANE, actor="t"
        )
        assert result.outcome == "enqueued", result.to_json()
    try:
        yield host
    finally:
        host.store.close()


def progress_body(
    run_id: str, seq: int, summary: str = "working", **changes: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "worker_progress", "run_id": run_id, "group_folder": LANE,
        "timestamp": "2026-11-22T00:00:00.000Z", "phase": "testing", "summary": summary,
        "seq": seq,
    }  # fmt: skip
    body.update(changes)
    return body


def write_progress(
    host: Host, run_id: str, seq: int, summary: str = "working", **changes: Any
) -> Path:
    """A progress file for ``run_id``, written the way a worker writes it (temp, rename)."""
    folder = host.layout.progress_dir(LANE, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{seq:08d}-{seq}.json"
    atomic_write_json(path, progress_body(run_id, seq, summary, **changes))
    return path


def reasons(host: Host) -> list[dict[str, Any]]:
    """Every quarantine reason written so far."""
    found = sorted(host.layout.errors_dir.glob(f"*{REASON_SUFFIX}"))
    return [json.loads(p.read_text()) for p in found]


class LoopThread:
    """`Host.run` on a thread of its own, with a way to run code on the host's thread.

    The store is one connection used by one thread (SQLite's rule, and Python's check), so
    anything that must act on the host's connection — ``PRAGMA max_page_count``, say — is
    handed over with `call` and runs at the start of the host's next tick (`Host._tick`).
    """

    def __init__(self, host: Host) -> None:
        self.host = host
        self._calls: queue.SimpleQueue[tuple[Callable[[SqliteStore], Any], Future[Any]]] = (
            queue.SimpleQueue()
        )
        self.looping = threading.Event()
        original = host._tick

        def tick(interval: float) -> None:
            self.looping.set()
            while True:
                try:
                    call, done = self._calls.get_nowait()
                except queue.Empty:
                    break
                assert host.store is not None
                try:
                    done.set_result(call(host.store))
                except BaseException as exc:  # handed back to the test
                    done.set_exception(exc)
            original(interval)

        host._tick = tick  # type: ignore[method-assign]
        self.thread = threading.Thread(target=host.run, name="host-under-test", daemon=True)

    def start(self) -> LoopThread:
        self.thread.start()
        if not self.looping.wait(START_S):
            raise AssertionError("the host never reached its loop")
        return self

    def call(self, fn: Callable[[SqliteStore], T]) -> T:
        """Run ``fn(store)`` on the host's thread and return what it returned."""
        done: Future[T] = Future()
        self._calls.put((fn, done))
        return done.result(START_S)

    def stop(self) -> None:
        self.host.stop()
        self.thread.join(START_S)
        assert not self.thread.is_alive(), "the host did not stop"


#: Generous: only guards against hanging forever on a loaded machine.
START_S = 60.0
T = TypeVar("T")
