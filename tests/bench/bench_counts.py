"""The console's two store reads that grew with the store: its header's counts and its first
page of newest runs, before and after the store kept them (issue 23, item 1's first slice).

Run on demand (not part of the test suite):

    .venv/bin/python tests/bench/bench_counts.py [--sizes 10000,100000,1000000] [--repeats 21]

For each size, a store is filled by `bench_console.fill` (runs with a realistic history,
bulk-inserted in one transaction: the bulk SQL fires the store's own triggers, so the counts
are kept as a host's writes would keep them). Then, in the same process and the same store:

- counts: `state_counts()` (the ``run_counts`` rows the writers keep) against
  `recount_states()`, the ``GROUP BY state`` over every run the console ran on every poll that
  saw a change — the baseline, measured in the same run;
- the first page: `newest_run_ids(200)` (the ``runs_newest`` index) against the same query
  with the index ruled out (``NOT INDEXED``: every run read and sorted, as before the index);
- the fleet's usage: `workspace_usage()` (the ``usage_totals`` row the writers keep) against
  `workspace_usage_summed()`, the sum over every attempt's figures the header took on every
  poll that saw a change; each run gets one attempt's figures (bulk SQL, after the fill);
- the first read's rows: the memory (tracemalloc's peak) of reading every run with the
  table's summary columns (`runs_by_id(None, SUMMARY_FIELDS)`) against reading whole rows
  (``SELECT *``, each dispatch's JSON included, as the console's first read did).

Each figure is the median of ``--repeats`` calls (after one warm-up), on a warm page cache;
the ratio is baseline ÷ now.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.run_views import SUMMARY_FIELDS  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.bench.bench_console import fill  # noqa: E402


def median_ms(call: Callable[[], object], repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def peak_mb(call: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def measure(size: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "jarvis.db"
        started = time.perf_counter()
        fill(db, size)
        store = SqliteStore(db)
        with store.transaction() as tx:
            tx.execute(
                "INSERT INTO run_usage (run_id, attempt, seq, tokens_in, tokens_out, cost_usd, "
                "cost_computed, updated_at) SELECT run_id, 1, 1, 1200, 300, 0.0042, 0, created_at "
                "FROM runs",
                [],
            )
        filled_s = time.perf_counter() - started
        try:
            assert store.state_counts() == store.recount_states()
            scan = ("SELECT run_id FROM runs NOT INDEXED ORDER BY created_at DESC, run_id "
                    "LIMIT 200")  # fmt: skip
            assert [r["run_id"] for r in store.rows(scan)] == store.newest_run_ids(200)
            kept = median_ms(store.state_counts, repeats)
            recount = median_ms(store.recount_states, repeats)
            newest = median_ms(lambda: store.newest_run_ids(200), repeats)
            scanned = median_ms(lambda: store.rows(scan), repeats)
            assert store.workspace_usage()["tokens_in"] == 1200 * size
            usage = median_ms(store.workspace_usage, repeats)
            summed = median_ms(store.workspace_usage_summed, repeats)
            summary_mb = peak_mb(lambda: store.runs_by_id(None, SUMMARY_FIELDS))
            whole_mb = peak_mb(lambda: store.runs_by_id(None))
        finally:
            store.close()
    print(f"{size:>9,} runs (filled in {filled_s:.0f} s)")
    print(
        f"  counts      kept {kept:8.3f} ms   recount (baseline) {recount:9.3f} ms   "
        f"{recount / kept:8.0f}x"
    )
    print(
        f"  first page  index {newest:7.3f} ms   full scan (baseline) {scanned:7.3f} ms   "
        f"{scanned / newest:8.0f}x"
    )
    print(
        f"  usage       kept {usage:8.3f} ms   summed (baseline) {summed:10.3f} ms   "
        f"{summed / usage:8.0f}x"
    )
    print(
        f"  first read  summary {summary_mb:6.1f} MB  whole rows (baseline) {whole_mb:6.1f} MB  "
        f"{whole_mb / summary_mb:8.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.repeats)


if __name__ == "__main__":
    main()
