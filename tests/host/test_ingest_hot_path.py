"""The ingest hot path: few statements per event, each file read once, nothing lost on the way.

Speed lives in tests/bench/bench_ingest.py; what is checked here is the work per event, counted
(statements the store runs), and that the shortcuts keep what the long way kept: the run's last
progress is its latest event whatever the order, a refused file leaves no receipt behind, and a
file the watcher reported is left to the watcher's drain by the sweep.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from core.host.host import Host
from core.host.inbox import SETTLED_S
from tests.host.inproc import LANE, host_in_process, reasons, write_progress

RUNS = ("r-1", "r-2", "r-3", "r-4")


def count_statements(host: Host) -> list[str]:
    """Every statement the host's store runs from now on (BEGIN, COMMIT and the like too)."""
    seen: list[str] = []
    host.store.db.conn.set_trace_callback(seen.append)  # type: ignore[attr-defined]
    return seen


def test_a_batch_takes_three_statements_per_event_and_one_per_run(tmp_path: Path) -> None:
    with host_in_process(tmp_path, *RUNS) as host:
        paths = [write_progress(host, run_id, seq) for seq in range(1, 26) for run_id in RUNS]
        seen = count_statements(host)
        host.inbox.ingest(paths)
        events = len(paths)
        writes = [s for s in seen if re.match(r"\s*(INSERT|UPDATE|SELECT|DELETE)", s)]
        # Per event: its receipt, its row, its journal entry (written together at the batch's
        # end). Per run: its row touched (one statement, run once for each). Per batch: its
        # receipts, its runs' briefs, which of their events are stored. Was seven per event
        # (700 here), then four per run besides.
        assert len(writes) <= 3 * events + len(RUNS) + 3, "\n".join(writes[:20])
        assert host.store.progress_event_count() == events
        assert not any(p.exists() for p in paths)


def test_the_run_keeps_its_latest_event_whatever_order_the_files_come_in(tmp_path: Path) -> None:
    with host_in_process(tmp_path, "r-1") as host:
        late = write_progress(host, "r-1", 3, "third", timestamp="2026-11-22T00:00:03.000Z")
        host.inbox.ingest([late])
        early = [
            write_progress(host, "r-1", seq, f"event {seq}",
                           timestamp=f"2026-11-22T00:00:0{seq}.000Z")
            for seq in (1, 2)
        ]  # fmt: skip
        host.inbox.ingest(early)  # a batch of older events, after the latest
        run = host.store.get_run("r-1")
        assert run is not None and run["last_progress_summary"] == "third"
        mixed = [
            write_progress(host, "r-1", seq, f"event {seq}",
                           timestamp=f"2026-11-22T00:00:0{seq}.000Z")
            for seq in (5, 4)
        ]  # fmt: skip
        host.inbox.ingest(mixed)  # newest first within one batch
        run = host.store.get_run("r-1")
        assert run is not None and run["last_progress_summary"] == "event 5"
        assert host.store.progress_event_count() == 5


def test_a_refused_event_leaves_no_receipt_so_the_same_file_is_taken_later(
    tmp_path: Path,
) -> None:
    from core.intake import submit_dispatch
    from tests.core.store_helpers import dispatch_doc

    with host_in_process(tmp_path) as host:
        first = write_progress(host, "r-late", 1, "before its run")
        body = first.read_bytes()
        host.inbox.ingest([first])  # no such run yet: refused, moved aside
        assert not first.exists() and host.store.progress_event_count() == 0
        submit_dispatch(host.store, dispatch_doc("r-late"), source_lane="main",
                        target_lane=LANE, actor="t")  # fmt: skip
        first.write_bytes(body)  # the very same bytes, sent again
        host.inbox.ingest([first])
        assert host.store.progress_event_count() == 1, "a receipt of the refusal was left"


def test_the_sweep_leaves_what_the_watcher_reported_to_the_drain(tmp_path: Path) -> None:
    with host_in_process(tmp_path, "r-1") as host:
        seen = write_progress(host, "r-1", 1, "reported")
        missed = write_progress(host, "r-1", 2, "missed by the watcher")
        host.inbox.reported.add(str(seen))
        host.inbox.watching = True  # as `start_watcher` sets it
        host.inbox.paths.put(seen)
        host.inbox.sweep()
        assert seen.exists() and not missed.exists()  # the sweep took only the missed one
        assert host.store.progress_event_count() == 1
        host.inbox.drain(timeout=0)
        assert not seen.exists() and host.store.progress_event_count() == 2
        assert not host.inbox.reported


def test_while_watching_the_sweep_takes_only_what_the_watcher_had_time_to_miss(
    tmp_path: Path,
) -> None:
    with host_in_process(tmp_path, "r-1") as host:
        host.inbox.sweep()  # the start-up sweep: whole
        host.inbox.watching = True  # as `start_watcher` sets it
        young = write_progress(host, "r-1", 1, "just written")
        old = write_progress(host, "r-1", 2, "written long ago")
        long_ago = old.stat().st_mtime - 10 * SETTLED_S  # well before the sweep's line
        os.utime(old, (long_ago, long_ago))
        host.inbox.sweep()
        assert young.exists() and not old.exists()
        host.inbox.forget_queued()  # a store fault dropped the queue: the next sweep is whole
        host.inbox.sweep()
        assert not young.exists() and host.store.progress_event_count() == 2


def test_a_reported_new_folder_has_its_files_taken_with_it(tmp_path: Path) -> None:
    # A file written into a folder made a moment before may come before the watcher watches
    # the folder; the folder's own report brings it in, not a sweep seconds later.
    with host_in_process(tmp_path, "r-1") as host:
        first = write_progress(host, "r-1", 1, "first in a new folder")
        host.inbox.paths.put(first.parent)  # what the watcher reports for the new folder
        host.inbox.drain(timeout=0)
        assert not first.exists() and host.store.progress_event_count() == 1


def test_a_file_named_twice_in_a_batch_is_taken_or_moved_aside_once(tmp_path: Path) -> None:
    with host_in_process(tmp_path, "r-1") as host:
        good = write_progress(host, "r-1", 1, "fine")
        bad = write_progress(host, "r-unknown", 1, "no such run")
        host.inbox.ingest([good, bad, good, bad])
        assert host.store.progress_event_count() == 1
        assert len(reasons(host)) == 1  # one reason for the one refused file
        (moved,) = [p for p in host.layout.errors_dir.iterdir() if p.name.endswith("-1.json")]
        assert moved.read_bytes().startswith(b"{")  # its bytes kept, not a second copy's


def test_a_refused_file_another_reader_took_meanwhile_gets_no_second_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read, then refused in the batch's transaction, then gone before it is moved aside (the
    reader that reported it too took it first): one file, one reason, written by that one."""
    from core.host.ingest import Ingestor

    with host_in_process(tmp_path, "r-1") as host:
        taken = write_progress(host, "r-1", 1, "refused", extra_field=1)  # an unknown field
        kept = write_progress(host, "r-1", 2, "refused too", extra_field=2)
        apply_one = Ingestor._apply_one

        def another_reader_takes(self: Ingestor, tx: object, event: Any, *rest: Any) -> bool:
            if event.path == taken:
                os.rename(taken, tmp_path / "taken-elsewhere.json")
            return apply_one(self, tx, event, *rest)  # type: ignore[arg-type]

        monkeypatch.setattr(Ingestor, "_apply_one", another_reader_takes)
        results = host.inbox.ingestor.handle_many([taken, kept])  # type: ignore[union-attr]
        assert [r.outcome for r in results] == ["gone", "quarantined"]
        assert [r["code"] for r in reasons(host)] == ["unknown_field"]
        assert reasons(host)[0]["original_path"] == str(kept)
