"""The host's retention room on a real store (both backends) and real files: a receipt goes only
when it is old and its file is gone from disk, and none goes while another host may have files
left; a pass stops at once when the host stops."""

from __future__ import annotations

import threading
from pathlib import Path

from core.host.retention import Retention
from core.lifecycle import RunState
from core.store.api import RunStore
from core.store.retention import RetentionPolicy
from tests.backends import StepClock
from tests.core.store_helpers import make_run
from tests.store.test_retention import DAY_S, add_events, progress_of

LANE = "jarvis-worker-1"
KEEP = "jarvis-worker-1/progress/kept.json"
GONE = "jarvis-worker-1/progress/gone.json"
REQUEST = "work/requests/r1.json"


def room(tmp_path: Path, store: RunStore, policy: RetentionPolicy, **kw: object) -> Retention:
    location = store.path if store.path is not None else str(store.url)  # type: ignore[attr-defined]
    return Retention(
        location,
        policy,
        roots=(tmp_path / "data" / "ipc", tmp_path),
        host="me",
        stopping=kw.get("stopping", threading.Event()),  # type: ignore[arg-type]
    )


def receipts(store: RunStore) -> set[str]:
    return {str(r["key"]).rsplit(":", 1)[0] for r in store.rows("SELECT key FROM ipc_receipts")}


def old_receipts_and_files(store: RunStore, clock: StepClock, tmp_path: Path) -> None:
    with store.transaction() as tx:
        for path in (KEEP, GONE, REQUEST):
            tx.put_receipt(f"{path}:{'0' * 64}", LANE, "progress")
    clock.advance(3 * DAY_S)
    with store.transaction() as tx:
        tx.put_receipt(f"{LANE}/progress/young.json:{'0' * 64}", LANE, "progress")
    for path in (tmp_path / "data" / "ipc" / KEEP, tmp_path / REQUEST):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")


def test_a_receipt_goes_only_when_old_and_its_file_is_gone(
    any_store: RunStore, clock: StepClock, tmp_path: Path
) -> None:
    old_receipts_and_files(any_store, clock, tmp_path)
    retention = room(tmp_path, any_store, RetentionPolicy(receipts_days=2))
    retention.run(any_store)
    assert receipts(any_store) == {KEEP, REQUEST, f"{LANE}/progress/young.json"}
    assert retention.removed["receipts"] == 1


def test_no_receipt_goes_while_another_host_is_lost(
    any_store: RunStore, clock: StepClock, tmp_path: Path
) -> None:
    with any_store.transaction() as tx:
        tx.register_host(
            "elsewhere", incarnation="i", machine="m", pid=1, workspace="/w", lanes=None,
            lease_until=tx.now,
        )  # fmt: skip
    old_receipts_and_files(any_store, clock, tmp_path)  # its lease ran out meanwhile
    room(tmp_path, any_store, RetentionPolicy(receipts_days=2)).run(any_store)
    assert GONE in receipts(any_store)


def test_a_pass_stops_when_the_host_stops(
    any_store: RunStore, clock: StepClock, tmp_path: Path
) -> None:
    make_run(any_store, "old-done", RunState.DONE)
    add_events(any_store, "old-done", 2500)
    clock.advance(10 * DAY_S)
    stopping = threading.Event()
    stopping.set()
    retention = room(tmp_path, any_store, RetentionPolicy.every_table(7), stopping=stopping)
    retention.run(any_store)
    assert progress_of(any_store, "old-done") == 2500
    stopping.clear()
    retention.run(any_store)
    assert progress_of(any_store, "old-done") == 0
    assert retention.removed["progress"] == 2500
