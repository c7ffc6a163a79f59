"""Store figures: write throughput, journal tail latency, and `jarvis runs --json` on 100,000 runs.

Run on demand (not part of the test suite):

    .venv/bin/python tests/bench/bench_store.py [--seconds 3] [--changes 2500] [--runs 100000]

1. Committed transitions per second in one process: operator cancel/retry cycles over 100 runs,
   each its own BEGIN IMMEDIATE transaction (run row, journal row and audit row), best of three.
2. Journal latency across processes: a writer process commits a steady stream of transitions
   and notes the wall-clock time (time.time_ns) each commit returned; a tailing process polls
   ``journal_since`` (sleeping 1 ms after an empty poll) and notes when each seq became visible.
   The figure is visible - committed per change. A row can become visible a few microseconds
   before the writer's call returns, so the smallest values may be slightly negative.
3. ``jarvis runs --json --limit 100000`` as a subprocess (interpreter start-up included) on a
   store holding 100,000 runs, bulk-inserted in one transaction; best of three. Falls back to
   timing ``list_runs`` + ``run_summary`` + ``json.dumps`` in process if the command is missing.

The helper modes ``write`` and ``tail`` are the two processes of figure 2.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core import operator_actions  # noqa: E402
from core.intake import submit_dispatch  # noqa: E402
from core.run_views import run_summary  # noqa: E402
from core.store.api import iso  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402

SAMPLE: dict[str, Any] = json.loads(
    (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
)


def make_runs(store: SqliteStore, count: int, prefix: str) -> list[str]:
    """``count`` queued runs created through intake, as the host would receive them."""
    run_ids = []
    for i in range(count):
        doc = dict(SAMPLE)
        doc.update(run_id=f"{prefix}-{i}", request_id=f"req-{prefix}-{i}")
        result = submit_dispatch(
            store, doc, source_lane="main", target_lane="jarvis-worker-1", actor="main"
        )
        assert result.outcome == "enqueued", result.message
        run_ids.append(doc["run_id"])
    return run_ids


def flip(store: SqliteStore, run_id: str, state: str) -> str:
    """One committed transition: cancel a queued run, or retry a failed one. The new state."""
    if state == "queued":
        result = operator_actions.cancel(store, run_id, "bench", "benchmark cycle")
    else:
        result = operator_actions.retry(store, run_id, "bench")
    assert result.ok and result.run is not None, result.refusal
    return str(result.run["state"])


# -- 1. throughput --------------------------------------------------------------------------------


def bench_throughput(workdir: Path, seconds: float) -> float:
    store = SqliteStore(workdir / "throughput.db")
    try:
        runs = make_runs(store, 100, "tp")
        states = dict.fromkeys(runs, "queued")
        best = 0.0
        for _ in range(3):
            done = 0
            start = time.perf_counter()
            deadline = start + seconds / 3
            while time.perf_counter() < deadline:
                for run_id in runs:
                    states[run_id] = flip(store, run_id, states[run_id])
                done += len(runs)
            best = max(best, done / (time.perf_counter() - start))
        return best
    finally:
        store.close()


# -- 2. journal latency ---------------------------------------------------------------------------


def mode_write(db: str, changes: int, out: str) -> None:
    """The writer process: ``changes`` transitions, one about every millisecond."""
    store = SqliteStore(db)
    runs = [r["run_id"] for r in store.rows("SELECT run_id FROM runs ORDER BY run_id")]
    states = {r: "queued" for r in runs}
    committed: dict[int, int] = {}
    rng = random.Random(7)
    for i in range(changes):
        run_id = runs[i % len(runs)]
        states[run_id] = flip(store, run_id, states[run_id])
        returned = time.time_ns()
        # The only writer, so the newest seq is the row this transaction wrote.
        committed[store.last_seq()] = returned
        # A steady stream rather than a burst: the tailer then measures pickup, not backlog.
        time.sleep(rng.uniform(0.0005, 0.0015))
    store.close()
    Path(out).write_text(json.dumps(committed))


def mode_tail(db: str, after: int, changes: int, ready: str, out: str) -> None:
    """The tailing process: poll the journal and note when each seq first became visible."""
    store = SqliteStore(db)
    visible: dict[int, int] = {}
    last = after
    polls = 0
    Path(ready).touch()
    while len(visible) < changes:
        rows = store.journal_since(last)
        polls += 1
        if not rows:
            time.sleep(0.001)
            continue
        now = time.time_ns()
        for row in rows:
            visible[row["seq"]] = now
        last = rows[-1]["seq"]
    store.close()
    Path(out).write_text(json.dumps({"visible": visible, "polls": polls}))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_latency(workdir: Path, changes: int) -> dict[str, float]:
    db = workdir / "latency.db"
    store = SqliteStore(db)
    make_runs(store, 50, "lat")
    after = store.last_seq()
    store.close()
    ready, tail_out, write_out = (workdir / n for n in ("tail.ready", "tail.json", "write.json"))
    me = [sys.executable, str(Path(__file__).resolve())]
    tailer = subprocess.Popen(
        [*me, "tail", str(db), str(after), str(changes), str(ready), str(tail_out)]
    )
    while not ready.exists():
        if tailer.poll() is not None:
            raise SystemExit("the tailing process exited before it was ready")
        time.sleep(0.01)
    subprocess.run([*me, "write", str(db), str(changes), str(write_out)], check=True)
    if tailer.wait(timeout=60) != 0:
        raise SystemExit("the tailing process failed")
    committed = {int(k): v for k, v in json.loads(write_out.read_text()).items()}
    tailed = json.loads(tail_out.read_text())
    visible = {int(k): v for k, v in tailed["visible"].items()}
    assert set(committed) <= set(visible), "the tailer missed committed changes"
    lags_ms = [(visible[seq] - t) / 1e6 for seq, t in committed.items()]
    return {
        "changes": len(lags_ms),
        "polls": tailed["polls"],
        "p50": percentile(lags_ms, 0.50),
        "p99": percentile(lags_ms, 0.99),
        "max": max(lags_ms),
        "mean": statistics.fmean(lags_ms),
    }


# -- 3. jarvis runs --json on 100,000 runs --------------------------------------------------------

STATES = (
    ("done", 0.70),
    ("failed", 0.08),
    ("failed_contract", 0.05),
    ("review_requested", 0.05),
    ("running", 0.07),
    ("queued", 0.05),
)


def fill(db: Path, count: int) -> float:
    """``count`` runs with realistic values, inserted in one transaction; the seconds it took.

    Only the runs table is filled: listing runs reads nothing else.
    """
    store = SqliteStore(db)
    rng = random.Random(11)
    names, weights = zip(*STATES, strict=True)
    base = time.time() - 30 * 86400
    rows = []
    for i in range(count):
        run_id = f"task-{20260101 + i // 1000}-{i:06d}"
        doc = dict(SAMPLE)
        doc.update(run_id=run_id, request_id=f"req-{i:08x}")
        state = rng.choices(names, weights)[0]
        created = base + i * 25.0
        updated = created + rng.uniform(30, 7200)
        finished = state in ("done", "failed", "failed_contract")
        retries = rng.choices((0, 1, 2, 3), (80, 14, 4, 2))[0]
        rows.append(
            (
                run_id,
                f"jarvis-worker-{1 + i % 8}",
                "main",
                doc["task_type"],
                doc["request_id"],
                doc["request_id"],
                state,
                "gates failed: tests" if state == "failed_contract" else None,
                retries,
                2 + 2 * retries + (3 if finished else 1),
                json.dumps(doc, sort_keys=True),
                doc["repo"],
                doc["branch"],
                doc["context_intent"],
                f"jarvis/{run_id}" if state != "queued" else None,
                f"{rng.getrandbits(160):040x}" if finished else None,
                f"https://github.com/{doc['repo']}/pull/{i}" if state == "done" else None,
                "editing tests/test_retry.py" if state == "running" else None,
                rng.choices((0, 1, 2), (85, 10, 5))[0],
                stamp(created),
                stamp(updated),
                stamp(created + 5),
                stamp(updated) if finished else None,
            )
        )
    start = time.perf_counter()
    with store.transaction():
        store.db.conn.executemany(
            "INSERT INTO runs (run_id, lane, source_lane, task_type, request_id, idempotency_key, "
            "state, state_reason, retry_count, version, dispatch_json, dispatch_repo, "
            "dispatch_branch, context_intent, branch_name, commit_sha, pr_url, "
            "last_progress_summary, steer_count, created_at, updated_at, started_at, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed


def stamp(seconds: float) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


def bench_list(workdir: Path, count: int) -> dict[str, Any]:
    workspace = workdir / "workspace"
    workspace.mkdir()
    db = workspace / "jarvis.db"
    insert_s = fill(db, count)
    command = [
        sys.executable, "-m", "jarvis_cli", "runs", "--json",
        "--workspace", str(workspace), "--limit", str(count),
    ]  # fmt: skip
    probe = subprocess.run(command, cwd=ROOT, capture_output=True)
    via_cli = probe.returncode == 0
    best = in_process = float("inf")
    size = 0
    listed = 0
    for _ in range(3):
        # In process as well, to separate the query and encoding from interpreter start-up.
        start = time.perf_counter()
        store = SqliteStore(db)
        text = json.dumps([run_summary(r) for r in store.list_runs(limit=count)])
        store.close()
        in_process = min(in_process, time.perf_counter() - start)
        size = len(text.encode())
        listed = len(json.loads(text))
        if via_cli:
            start = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
            best = min(best, time.perf_counter() - start)
            size = len(done.stdout)
            listed = count_runs(json.loads(done.stdout))
    return {
        "via_cli": via_cli,
        "seconds": best if via_cli else in_process,
        "in_process_s": in_process,
        "bytes": size,
        "listed": listed,
        "insert_s": insert_s,
        "probe_error": "" if via_cli else probe.stderr.decode(errors="replace")[-300:],
    }


def count_runs(doc: Any) -> int:
    """How many runs the command's JSON lists, whatever key holds them."""
    if isinstance(doc, list):
        return len(doc)
    if isinstance(doc, dict):
        for value in doc.values():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                return len(value)
    return -1


# -- report ---------------------------------------------------------------------------------------


def machine() -> str:
    return (
        f"{platform.platform()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="time for figure 1")
    parser.add_argument("--changes", type=int, default=2500, help="journal changes for figure 2")
    parser.add_argument("--runs", type=int, default=100_000, help="stored runs for figure 3")
    args = parser.parse_args()

    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-") as tmp:
        workdir = Path(tmp)
        rate = bench_throughput(workdir, args.seconds)
        print(f"committed transitions (cancel/retry, one process): {rate:,.0f} /s")

        lat = bench_latency(workdir, args.changes)
        print(
            f"journal latency, commit -> visible to a tailing process over {lat['changes']:,} "
            f"changes ({lat['polls']:,} polls): p50 {lat['p50']:.2f} ms, p99 {lat['p99']:.2f} ms, "
            f"max {lat['max']:.2f} ms, mean {lat['mean']:.2f} ms"
        )

        listing = bench_list(workdir, args.runs)
        what = (
            "jarvis runs --json (subprocess, start-up included)"
            if listing["via_cli"]
            else "list_runs + run_summary + json.dumps (in process; `jarvis runs` unavailable)"
        )
        print(f"bulk insert of {args.runs:,} runs (one transaction): {listing['insert_s']:.2f} s")
        print(
            f"{what} on {args.runs:,} runs: {listing['seconds']:.2f} s, "
            f"{listing['bytes'] / 1e6:.1f} MB of JSON, {listing['listed']:,} runs listed"
        )
        if listing["via_cli"]:
            print(
                f"list_runs + run_summary + json.dumps (in process) on {args.runs:,} runs: "
                f"{listing['in_process_s']:.2f} s"
            )
        else:
            print(f"  (`jarvis runs` failed: {listing['probe_error'].strip()})")

    print()
    print(f"Machine: {machine()}")
    print()
    print("| Figure | Value |")
    print("|---|---|")
    print(f"| Committed transitions, one process (cancel/retry) | {rate:,.0f} /s |")
    print(f"| Journal latency commit → tailer, p50 | {lat['p50']:.2f} ms |")
    print(f"| Journal latency commit → tailer, p99 | {lat['p99']:.2f} ms |")
    label = "`jarvis runs --json`" if listing["via_cli"] else "`list_runs` + JSON (in process)"
    print(f"| {label}, {args.runs:,} runs | {listing['seconds']:.2f} s |")
    if listing["via_cli"]:
        print(
            f"| `list_runs` + JSON in process, {args.runs:,} runs | "
            f"{listing['in_process_s']:.2f} s |"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "write":
        mode_write(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) > 1 and sys.argv[1] == "tail":
        mode_tail(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6])
    else:
        main()
