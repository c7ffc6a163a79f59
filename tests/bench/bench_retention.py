"""Retention's figures: what an event costs the store, and the store after a simulated week at
200 events a second, with and without retention (keep 2 days).

Run on demand (not part of the test suite):

    .venv/bin/python tests/bench/bench_retention.py [--scale 1000] [--per-run 40]

A week at 200 events a second is 120,960,000 events; the benchmark writes 1/``scale`` of them
(120,960 at the default) with the same spread in time: runs of ``per-run`` events each, one
starting at even intervals through seven days, each finished (``done``) before the next. Each
event is written as the host's ingest writes it: its progress row, its journal entry (the run
touched) and its file's receipt, in one transaction per run's events, on the store's clock set
to the simulated time. With retention, the host's own room (`core.host.retention`) runs every
simulated hour with ``keep_days = 2`` for every table (the events' files are gone, as after
ingest), so space freed is reused as it would be. Sizes are SQLite's (``dbstat`` per table,
and the file after a checkpoint); the full week's are the measured ones times ``scale``: each
event's rows are the same size, so a store's bytes grow in proportion to its events.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.host.retention import Retention  # noqa: E402
from core.intake import submit_dispatch  # noqa: E402
from core.lifecycle import Action  # noqa: E402
from core.moves import host_move  # noqa: E402
from core.store.retention import RetentionPolicy  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.core.store_helpers import dispatch_doc  # noqa: E402

WEEK_S = 7 * 86400
RATE = 200
LANE = "jarvis-worker-1"
EVENT_TABLES = ("progress_events", "journal", "ipc_receipts")
SUMMARY = "Edited core/store/retention.py: the batch now stops at the mark; running the tests"


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def fill(
    path: Path,
    *,
    events: int,
    per_run: int,
    keep_days: int | None,
    start: datetime = datetime(2026, 11, 1, tzinfo=UTC),
) -> dict[str, object]:
    clock = Clock(start)
    store = SqliteStore(path, clock=clock)
    runs = events // per_run
    spacing = WEEK_S / runs
    retention = None
    if keep_days is not None:
        retention = Retention(
            path,
            RetentionPolicy.every_table(keep_days),
            roots=(path.parent / "no-files",),
            host="bench",
            stopping=threading.Event(),
        )
    next_pass = 3600.0
    passes: list[float] = []
    started = time.perf_counter()
    for n in range(runs):
        at = n * spacing
        clock.at = start + timedelta(seconds=at)
        run_id = f"run-{n:07d}"
        result = submit_dispatch(
            store, dispatch_doc(run_id), source_lane="main", target_lane=LANE, actor="main"
        )
        assert result.outcome == "enqueued", result.to_json()
        host_move(store, run_id, Action.START)
        with store.transaction() as tx:
            for seq in range(per_run):
                name = f"{int(clock.at.timestamp() * 1000) + seq}-{seq}.json"
                tx.add_progress_event(
                    run_id, 1, seq, name, timestamp=tx.now, at_utc=tx.now, phase="editing",
                    summary=f"{SUMMARY} ({seq})", tool_used="Edit",
                )  # fmt: skip
                tx.touch_run(
                    run_id,
                    changes={"last_progress_summary": SUMMARY, "last_progress_at": tx.now},
                    kind="progress",
                    payload={
                        "attempt": 1,
                        "seq": seq,
                        "phase": "editing",
                        "summary": SUMMARY,
                        "tool_used": "Edit",
                        "timestamp": tx.now,
                    },  # fmt: skip
                    actor=LANE,
                )
                key = f"{LANE}/progress/{run_id}/{name}:{os.urandom(32).hex()}"
                tx.put_receipt(key, LANE, "progress")
        clock.at = start + timedelta(seconds=at + spacing * 0.9)
        host_move(store, run_id, Action.PASS_GATES)
        host_move(store, run_id, Action.APPROVE)
        if retention is not None and at >= next_pass:
            began = time.perf_counter()
            retention.run(store)
            passes.append(time.perf_counter() - began)
            next_pass += 3600.0
    filled_s = time.perf_counter() - started
    rows = {t: store.row_count(t) for t in EVENT_TABLES}
    table_bytes = store.table_bytes() or {}
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {
        "rows": rows,
        "event_bytes": {t: table_bytes.get(t, 0) for t in EVENT_TABLES},
        "total_bytes": sum(table_bytes.values()),
        "file_bytes": path.stat().st_size,
        "fill_s": filled_s,
        "removed": None if retention is None else retention.removed,
        "passes": passes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=1000, help="write 1/SCALE of the week")
    parser.add_argument("--per-run", type=int, default=40, help="events per run")
    args = parser.parse_args()
    events = RATE * WEEK_S // args.scale
    print(f"{platform.system()} {platform.release()}, {os.cpu_count()} cores, "
          f"SQLite {sqlite3.sqlite_version}, Python {platform.python_version()}")  # fmt: skip
    print(f"a week at {RATE} events/s = {RATE * WEEK_S:,} events; written: {events:,} "
          f"(1/{args.scale}), {args.per_run} per run")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-retention-") as tmp:
        found = {}
        for label, keep in (("without retention", None), ("with retention (keep 2 days)", 2)):
            path = Path(tmp) / f"{keep}.db"
            found[label] = fill(path, events=events, per_run=args.per_run, keep_days=keep)
        plain = found["without retention"]
        rows, sizes = plain["rows"], plain["event_bytes"]
        assert isinstance(rows, dict) and isinstance(sizes, dict)
        each = {t: sizes[t] / rows[t] for t in EVENT_TABLES}
        print("bytes per event: " + " + ".join(f"{t} {each[t]:.0f}" for t in EVENT_TABLES)
              + f" = {sum(each.values()):.0f}")  # fmt: skip
        for label, figures in found.items():
            total, file = figures["total_bytes"], figures["file_bytes"]
            assert isinstance(total, int) and isinstance(file, int)
            week = (
                f"tables {total * args.scale / 1e9:.1f} GB, file {file * args.scale / 1e9:.1f} GB"
            )
            took = f"filled in {figures['fill_s']:.0f} s"
            print(f"{label}: rows {figures['rows']}, tables {total / 1e6:.1f} MB, file "
                  f"{file / 1e6:.1f} MB; a full week: {week} ({took})")  # fmt: skip
            if figures["removed"]:
                passes = figures["passes"]
                assert isinstance(passes, list)
                spent = f"{sum(passes):.1f} s in all, the longest {max(passes):.2f} s"
                print(f"  removed by retention: {figures['removed']} in {len(passes)} hourly "
                      f"passes, {spent}")  # fmt: skip
        kept = found["with retention (keep 2 days)"]
        ratio_tables = plain["total_bytes"] / kept["total_bytes"]  # type: ignore[operator]
        ratio_file = plain["file_bytes"] / kept["file_bytes"]  # type: ignore[operator]
        print(f"without / with retention: tables {ratio_tables:.2f}x, file {ratio_file:.2f}x")


if __name__ == "__main__":
    main()
