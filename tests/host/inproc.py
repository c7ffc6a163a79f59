"""A host driven in the test's own process: its sweep and loop steps called directly.

The subprocess host (`tests.host.hostkit`) proves the whole service; this one lets a test reach
into the host's store connection (a ``PRAGMA`` only works on the connection it is set on) and
step it without timing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
def host_in_process(root: Path, *run_ids: str) -> Iterator[Host]:
    """A `Host` on ``root`` with its store open and ``run_ids`` queued on `LANE`."""
    workspace = Workspace.resolve(root)
    host = Host(workspace, load_config(workspace.root))
    host.store = SqliteStore(workspace.db_path)
    host.ingestor = Ingestor(host.store, host.layout)
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
