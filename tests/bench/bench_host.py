"""Host benchmarks: event latency, ingest rate, steer delivery and acknowledgement.

Run on demand (not part of the test suite); takes about two minutes:

    .venv/bin/python tests/bench/bench_host.py

Each figure is measured twice in the same run: with our host watching the IPC tree (inotify),
and with the same host polling every 2 s as the reference system does — the baseline the host
issue names. Ratios are baseline / ours (how many times faster).

- event latency: a writer renames progress files into place at 200 events/s across 50 runs;
  a reader polling the journal every millisecond notes when each event's row is visible.
  Latency = visible - renamed, so it includes the commit and the journal row.
- ingest rate: 20,000 event files are on disk when the host starts; rows per second from the
  first row to the last.
- steer → file: an operator's steer is committed; time until the steer file is on disk.
- ack → acked: an ack file is renamed into place; time until the store says ``acked``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.intake import submit_dispatch  # noqa: E402
from core.ipc.files import atomic_write_json  # noqa: E402
from core.operator_actions import steer  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.bench import benchkit  # noqa: E402
from tests.bench.benchkit import stop_host  # noqa: E402

LANE = "jarvis-worker-1"
RUNS = 50
BASE = json.loads((ROOT / "sample_runs/dispatches/valid-backend-fix.json").read_text())


def dispatch(run_id: str) -> dict[str, object]:
    doc = dict(BASE)
    doc.pop("request_id", None)
    doc["run_id"] = run_id
    return doc


def workspace(config: str) -> Path:
    ws = Path(tempfile.mkdtemp(prefix="jarvis-bench-"))
    (ws / "jarvis.toml").write_text(config)
    return ws


def start_host(ws: Path, *, poll_ms: int | None) -> subprocess.Popen[bytes]:
    if poll_ms:
        config = (
            ws / "jarvis.toml"
        ).read_text() + f"\n[watch]\npoll = true\npoll_interval_ms = {poll_ms}\n"
        (ws / "jarvis.toml").write_text(config)
    return benchkit.start_host(ws, timeout=10)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def progress_body(run_id: str, seq: int) -> dict[str, object]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"
    return {
        "kind": "worker_progress",
        "run_id": run_id,
        "group_folder": LANE,
        "timestamp": stamp,
        "phase": "testing",
        "summary": f"step {seq}",
        "seq": seq,
    }


def queued_runs(ws: Path) -> list[str]:
    store = SqliteStore(ws / "jarvis.db")
    ids = [f"bench-{i:03d}" for i in range(RUNS)]
    for run_id in ids:
        submit_dispatch(
            store, dispatch(run_id), source_lane="main", target_lane=LANE, actor="bench"
        )
        (ws / "data/ipc" / LANE / "progress" / run_id).mkdir(parents=True, exist_ok=True)
    store.close()
    return ids


# Runs stay queued (the lane runs no workers): the host only ingests.
INGEST_ONLY = f'[workers]\nlane_concurrency = {{ "{LANE}" = 0 }}\n'


def event_latency(poll_ms: int | None, *, rate: int = 200, seconds: float = 10.0) -> list[float]:
    ws = workspace(INGEST_ONLY)
    ids = queued_runs(ws)
    host = start_host(ws, poll_ms=poll_ms)
    written: dict[tuple[str, int], float] = {}
    visible: dict[tuple[str, int], float] = {}
    done = threading.Event()

    def tail() -> None:
        conn = sqlite3.connect(ws / "jarvis.db")
        last = 0
        while not done.is_set() or len(visible) < len(written):
            rows = conn.execute(
                "SELECT seq, run_id, payload FROM journal WHERE seq > ? AND kind = 'progress'",
                [last],
            ).fetchall()
            now = time.time()
            for seq, run_id, payload in rows:
                last = max(last, seq)
                visible[(run_id, json.loads(payload)["seq"])] = now
            if not rows:
                time.sleep(0.001)
            if done.is_set() and time.time() - now > 30:
                break
        conn.close()

    reader = threading.Thread(target=tail)
    reader.start()
    total = int(rate * seconds)
    start = time.monotonic()
    for n in range(total):
        run_id, seq = ids[n % RUNS], n // RUNS + 1
        path = (
            ws / "data/ipc" / LANE / "progress" / run_id / f"{int(time.time() * 1000)}-{seq}.json"
        )
        atomic_write_json(path, progress_body(run_id, seq))
        written[(run_id, seq)] = time.time()
        pause = start + (n + 1) / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    deadline = time.monotonic() + 30
    while len(visible) < total and time.monotonic() < deadline:
        time.sleep(0.05)
    done.set()
    reader.join()
    stop_host(host)
    shutil.rmtree(ws, ignore_errors=True)
    return [(visible[k] - written[k]) * 1000 for k in written if k in visible]


def ingest_rate(poll_ms: int | None, *, events: int = 20_000) -> float:
    ws = workspace(INGEST_ONLY)
    ids = queued_runs(ws)
    for n in range(events):
        run_id, seq = ids[n % RUNS], n // RUNS + 1
        atomic_write_json(ws / "data/ipc" / LANE / "progress" / run_id / f"{n:08d}-{seq}.json",
                          progress_body(run_id, seq))  # fmt: skip
    conn = sqlite3.connect(ws / "jarvis.db")
    host = start_host(ws, poll_ms=poll_ms)
    first = last = None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        count = conn.execute("SELECT COUNT(*) FROM progress_events").fetchone()[0]
        now = time.monotonic()
        if count and first is None:
            first = (now, count)
        if count >= events:
            last = (now, count)
            break
        time.sleep(0.01)
    stop_host(host)
    conn.close()
    shutil.rmtree(ws, ignore_errors=True)
    assert first and last, "the backlog was not ingested"
    return (last[1] - first[1]) / (last[0] - first[0])


# The bench plays the worker: a process that only sleeps, so steer files stay for us to see.
SILENT = (
    f'[workers]\ncommand = ["{sys.executable}", "-c", "import time; time.sleep(3600)"]\n'
    "[timeouts]\nno_output_s = 3600\nsteer_ack_s = 3600\n"
)


def steer_latencies(poll_ms: int | None, *, count: int = 60) -> tuple[list[float], list[float]]:
    ws = workspace(SILENT)
    store = SqliteStore(ws / "jarvis.db")
    submit_dispatch(store, dispatch("bench-steer"), source_lane="main", target_lane=LANE, actor="b")
    host = start_host(ws, poll_ms=poll_ms)
    deadline = time.monotonic() + 10
    while store.get_run("bench-steer")["state"] != "running":  # type: ignore[index]
        assert time.monotonic() < deadline, "the run did not start"
        time.sleep(0.01)
    steer_file = ws / "data/ipc" / LANE / "steer" / "bench-steer.json"
    ack_file = ws / "data/ipc" / LANE / "steer" / "bench-steer.acked.json"
    to_file: list[float] = []
    to_acked: list[float] = []
    for _ in range(count):
        t0 = time.time()
        result = steer(store, "bench-steer", "bench", "measure me")
        assert result.ok, result.refusal
        while not steer_file.exists():
            time.sleep(0.0005)
        to_file.append((time.time() - t0) * 1000)
        t1 = time.time()
        atomic_write_json(
            ack_file, {"steer_id": result.steer_id, "acked_at": "2026-11-22T00:00:00Z"}
        )
        while True:
            rows = store.rows(
                "SELECT status FROM steering_events WHERE steer_id = ?", [result.steer_id]
            )
            if rows[0]["status"] == "acked":
                break
            time.sleep(0.0005)
        to_acked.append((time.time() - t1) * 1000)
        while steer_file.exists():  # the host removes both files once it has recorded the ack
            time.sleep(0.0005)
    stop_host(host)
    store.close()
    shutil.rmtree(ws, ignore_errors=True)
    return to_file, to_acked


def main() -> None:
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
          f"{platform.release()}, Python {platform.python_version()}")  # fmt: skip
    rows: list[tuple[str, str, str, str]] = []
    ours = event_latency(None)
    base = event_latency(2000)
    for p in (50, 99):
        a, b = pct(ours, p), pct(base, p)
        rows.append((f"event → row + journal, p{p}", f"{a:.1f} ms", f"{b:.0f} ms", f"{b / a:.0f}×"))
    print(f"event latency: {len(ours)} events ours, {len(base)} baseline")
    rate_ours = ingest_rate(None)
    rate_base = ingest_rate(2000)
    rows.append(("sustained ingest (backlog)", f"{rate_ours:,.0f} /s", f"{rate_base:,.0f} /s",
                 f"{rate_ours / rate_base:.2f}×"))  # fmt: skip
    file_ours, ack_ours = steer_latencies(None)
    file_base, ack_base = steer_latencies(2000, count=10)
    for name, a_list, b_list in (("steer → steer file", file_ours, file_base),
                                 ("ack file → acked", ack_ours, ack_base)):  # fmt: skip
        for p in (50, 99):
            a, b = pct(a_list, p), pct(b_list, p)
            rows.append((f"{name}, p{p}", f"{a:.1f} ms", f"{b:.1f} ms", f"{b / max(a, 0.01):.1f}×"))
    print(f"mean event latency ours {statistics.mean(ours):.1f} ms")
    print("\n| figure | ours (inotify) | baseline (2 s poll) | ratio |\n|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
