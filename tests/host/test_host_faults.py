"""A fault of the host's own, set off by one file, must not crash it or be retried forever."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.host.host import Host
from core.host.ingest import Ingestor
from core.ipc.files import atomic_write_json
from tests.host.inproc import LANE, host_in_process


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with host_in_process(tmp_path / "ws", "r-1") as made:
        yield made


def progress(host: Host, seq: int, summary: str) -> Path:
    path = host.layout.progress_dir(LANE, "r-1") / f"{seq:08d}-{seq}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    body: dict[str, Any] = {
        "kind": "worker_progress", "run_id": "r-1", "group_folder": LANE,
        "timestamp": "2026-11-22T00:00:00.000Z", "phase": "testing", "summary": summary, "seq": seq,
    }  # fmt: skip
    atomic_write_json(path, body)
    return path


def test_a_file_that_trips_a_host_bug_is_moved_aside_and_the_rest_ingested(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert host.store is not None
    original = Ingestor._progress

    def faulty(self: Ingestor, tx: Any, event: Any, data: bytes, key: str) -> None:
        if b"boom" in data:
            raise RuntimeError("a bug set off by this file")
        original(self, tx, event, data, key)

    monkeypatch.setattr(Ingestor, "_progress", faulty)
    good_1, bad, good_2 = (
        progress(host, 1, "fine"),
        progress(host, 2, "boom"),
        progress(host, 3, "ok"),
    )
    host.sweep()
    host.sweep()  # seen again: nothing is retried, nothing doubled
    seqs = [r["seq"] for r in host.store.rows("SELECT seq FROM progress_events ORDER BY seq")]
    assert seqs == [1, 3]
    assert not good_1.exists() and not bad.exists() and not good_2.exists()
    (reason,) = [json.loads(p.read_text()) for p in host.layout.errors_dir.glob("*.reason.json")]
    assert reason["code"] == "host_error" and "RuntimeError" in reason["message"]
    assert reason["lane"] == LANE
