"""Live ingest near the machine's limit: the real host against a writer offering a fixed rate.

Run on demand (not part of the test suite); a few minutes:

    .venv/bin/python tests/bench/bench_ingest.py [--rates 1000,5000,10000,20000] [--seconds 5]
                                                 [--no-postgres]

For each store (SQLite, then a real PostgreSQL server started for the run) and each offered rate:

- A writer process renames progress files into place across 50 runs at the offered rate, paced
  per millisecond; it reports the rate it really reached (a writer that cannot keep up says so).
- A reader process tails the journal every 2 ms; an event's latency is from its rename to its
  journal row being visible to another process (so it includes the commit).
- The host's CPU (user + system, from /proc) over the run gives its events per CPU-second.

The baseline, measured in the same run on the same files: the minimal ingest, which reads each
file, parses it, inserts one row and unlinks the file, one transaction per 256 files; its events
per CPU-second are the limit the host is compared with (the issue's ratio: host ÷ minimal).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.intake import submit_dispatch  # noqa: E402
from core.store.location import open_store  # noqa: E402
from tests.bench import benchkit  # noqa: E402

LANE = "jarvis-worker-1"
RUNS = 50
BASE = json.loads((ROOT / "sample_runs/dispatches/valid-backend-fix.json").read_text())
# Runs stay queued (the lane runs no workers): the host only ingests.
INGEST_ONLY = f'[workers]\nlane_concurrency = {{ "{LANE}" = 0 }}\n'
TICKS = os.sysconf("SC_CLK_TCK")
PLACE: str | None = None
PROFILE: str | None = None
"""Where the workspaces go (``--dir``); the system's temporary folder when not given."""


def progress_body(run_id: str, seq: int) -> bytes:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"
    doc = {"kind": "worker_progress", "run_id": run_id, "group_folder": LANE, "seq": seq,
           "timestamp": stamp, "phase": "testing", "summary": f"step {seq}"}  # fmt: skip
    return json.dumps(doc).encode()


def workspace(store_url: str | None) -> tuple[Path, list[str]]:
    ws = Path(tempfile.mkdtemp(prefix="jarvis-ingest-", dir=PLACE))
    config = INGEST_ONLY + (f'[store]\nurl = "{store_url}"\n' if store_url else "")
    (ws / "jarvis.toml").write_text(config)
    store = open_store(store_url or str(ws / "jarvis.db"))
    ids = [f"bench-{i:03d}" for i in range(RUNS)]
    for run_id in ids:
        doc = {k: v for k, v in BASE.items() if k != "request_id"}
        doc["run_id"] = run_id
        submit_dispatch(store, doc, source_lane="main", target_lane=LANE, actor="bench")
        (ws / "data/ipc" / LANE / "progress" / run_id).mkdir(parents=True, exist_ok=True)
    store.close()
    return ws, ids


# -- the writer and the reader: processes of their own ------------------------------------------


def writer(ws: Path, rate: int, seconds: float, out: Path) -> None:
    """Rename ``rate × seconds`` progress files into place, paced per millisecond."""
    total = int(rate * seconds)
    base = ws / "data/ipc" / LANE / "progress"
    # Everything but the file's own calls is done before the clock starts: a Python writer
    # building each body in the loop could not offer more than a few thousand a second.
    plan = []
    for n in range(total):
        run_id, seq = f"bench-{n % RUNS:03d}", n // RUNS + 1
        folder = base / run_id
        plan.append((run_id, seq, str(folder / f".{seq}.tmp"), str(folder / f"{seq:09d}.json"),
                     progress_body(run_id, seq)))  # fmt: skip
    written: list[tuple[str, int, float]] = []
    start = time.monotonic()
    for n, (run_id, seq, tmp, final, body) in enumerate(plan):
        due = start + n / rate
        if time.monotonic() < due:
            time.sleep(max(0.0, due - time.monotonic()))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, body)
        os.close(fd)
        os.rename(tmp, final)
        written.append((run_id, seq, time.time()))
    took = time.monotonic() - start
    out.write_text(json.dumps({"reached": total / took, "written": written}))


def reader(store_url: str | None, ws: Path, total: int, out: Path) -> None:
    """Note when each progress event's journal row is first visible."""
    seen: dict[str, float] = {}
    last = 0
    deadline = time.monotonic() + 600
    if store_url:
        import psycopg

        conn = psycopg.connect(store_url, autocommit=True)
        query = ("SELECT seq, run_id, (payload::json->>'seq')::int FROM journal "
                 "WHERE seq > %s AND kind = 'progress' ORDER BY seq")  # fmt: skip
    else:
        conn = sqlite3.connect(ws / "jarvis.db")  # type: ignore[assignment]
        query = ("SELECT seq, run_id, json_extract(payload, '$.seq') FROM journal "
                 "WHERE seq > ? AND kind = 'progress' ORDER BY seq")  # fmt: skip
    idle_since = time.monotonic()
    while len(seen) < total and time.monotonic() < deadline:
        rows = conn.execute(query, [last]).fetchall()
        now = time.time()
        for seq, run_id, event_seq in rows:
            last = max(last, int(seq))
            seen.setdefault(f"{run_id}/{event_seq}", now)
        if rows:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since > 30:
            break  # nothing for 30 s: what was not seen is counted as lost
        else:
            time.sleep(0.002)
    conn.close()
    out.write_text(json.dumps(seen))


def _child(role: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, f"--{role}", *args], cwd=ROOT)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def live(store_url: str | None, rate: int, seconds: float) -> dict[str, float]:
    """One offered rate against a real host: reached rate, latencies, host CPU per event."""
    ws, _ = workspace(store_url)
    host = benchkit.start_host(ws)
    try:
        before = cpu_seconds(host.pid)
        total = int(rate * seconds)
        written_at, seen_at = ws / "written.json", ws / "seen.json"
        read = _child("reader", store_url or "", str(ws), str(total), str(seen_at))
        write = _child("writer", str(ws), str(rate), str(seconds), str(written_at))
        spy = None
        if PROFILE:
            spy = subprocess.Popen(
                ["py-spy", "record", "-p", str(host.pid), "-o", PROFILE, "-f", "raw",
                 "-r", "200", "-d", str(int(seconds) + 1)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        write.wait()
        read.wait()
        if spy is not None:
            spy.wait()
        used = cpu_seconds(host.pid) - before
    finally:
        benchkit.stop_host(host)
    wrote = json.loads(written_at.read_text())
    seen = json.loads(seen_at.read_text())
    latencies = [
        (seen[f"{r}/{s}"] - t) * 1000 for r, s, t in wrote["written"] if f"{r}/{s}" in seen
    ]
    shutil.rmtree(ws, ignore_errors=True)
    return {
        "offered": rate,
        "reached": wrote["reached"],
        "events": total,
        "visible": len(latencies),
        "p50_ms": pct(latencies, 50) if latencies else float("nan"),
        "p99_ms": pct(latencies, 99) if latencies else float("nan"),
        "host_events_per_cpu_s": len(latencies) / used if used else float("nan"),
    }


# -- the baseline: the minimal ingest ------------------------------------------------------------


def minimal(store_url: str | None, events: int = 20_000) -> float:
    """Events per CPU-second of read, parse, one insert, unlink; one transaction per 256 files."""
    ws, ids = workspace(store_url)
    base = ws / "data/ipc" / LANE / "progress"
    paths = []
    for n in range(events):
        run_id, seq = ids[n % RUNS], n // RUNS + 1
        path = base / run_id / f"{seq:09d}.json"
        path.write_bytes(progress_body(run_id, seq))
        paths.append(path)
    if store_url:
        import psycopg

        conn = psycopg.connect(store_url)
        conn.execute("CREATE TABLE minimal (run_id text, seq int, summary text)")
        conn.commit()
        mark = "%s"
    else:
        conn = sqlite3.connect(ws / "jarvis.db", isolation_level=None)  # type: ignore[assignment]
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE minimal (run_id TEXT, seq INTEGER, summary TEXT)")
        mark = "?"
    insert = f"INSERT INTO minimal VALUES ({mark}, {mark}, {mark})"
    start = time.process_time()
    for chunk in range(0, events, 256):
        if not store_url:
            conn.execute("BEGIN")
        batch = paths[chunk : chunk + 256]
        for path in batch:
            doc = json.loads(path.read_bytes())
            conn.execute(insert, [doc["run_id"], doc["seq"], doc["summary"]])
        conn.commit() if store_url else conn.execute("COMMIT")
        for path in batch:
            os.unlink(path)
    used = time.process_time() - start
    conn.close()
    shutil.rmtree(ws, ignore_errors=True)
    # The PostgreSQL server's own CPU is not in this process's figure, nor in the host's.
    return events / used


@contextmanager
def postgres() -> Iterator[Callable[[], str | None]]:
    """A server for the run; each call makes a new database (its URL, over TCP)."""
    from tests.pg_server import running_server

    with running_server() as server:
        yield lambda: server.url(server.create_database())


def machine() -> str:
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
    return (f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}, SQLite "
            f"{sqlite3.sqlite_version}; load average {load}")  # fmt: skip


def report(name: str, new: Callable[[], str | None], rates: list[int], seconds: float) -> None:
    limit = minimal(new())
    print(f"\n{name}: minimal ingest {limit:,.0f} events per CPU-second (the baseline)")
    print("| offered /s | reached /s | visible | p50 ms | p99 ms | host ev/CPU-s | ÷ minimal |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for rate in rates:
        got = live(new(), rate, seconds)
        print(f"| {rate:,} | {got['reached']:,.0f} | {got['visible']:,}/{got['events']:,} | "
              f"{got['p50_ms']:.1f} | {got['p99_ms']:.1f} | "
              f"{got['host_events_per_cpu_s']:,.0f} | "
              f"{got['host_events_per_cpu_s'] / limit:.2f}× |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="1000,5000,10000,20000")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--dir", help="where the workspaces go (e.g. /dev/shm: no disk limit)")
    parser.add_argument("--profile", help="py-spy records the host at the first rate into this")
    parser.add_argument("--writer", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--reader", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer:
        ws, rate, seconds, out = args.writer
        writer(Path(ws), int(rate), float(seconds), Path(out))
        return
    if args.reader:
        url, ws, total, out = args.reader
        reader(url or None, Path(ws), int(total), Path(out))
        return
    global PLACE, PROFILE
    PLACE, PROFILE = args.dir, args.profile
    rates = [int(r) for r in args.rates.split(",")]
    print(f"machine: {machine()}; workspaces in {PLACE or tempfile.gettempdir()}")
    report("SQLite", lambda: None, rates, args.seconds)
    if not args.no_postgres:
        with postgres() as new:
            report("PostgreSQL", new, rates, args.seconds)


if __name__ == "__main__":
    main()
