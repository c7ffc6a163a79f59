"""Start and stop: how soon the demo shows live work, and how soon SIGTERM ends a demo or a host.

Run on demand (not part of the test suite); about a minute:

    .venv/bin/python tests/bench/bench_start_stop.py [--repeats 5]

The tests check how these start and stop (the signal handlers run, workers end through their own
SIGTERM handler, the fleet stops at its next tick, the worker at its next poll) and count the
work; the time it takes is measured here, where a slow machine changes a figure instead of
failing a test.

- demo → live: from spawning ``jarvis demo --no-console 60`` to the first run of its fleet in
  state ``running`` in the store (the console is left out: its first paint is bench_console's).
- demo, SIGTERM → exit: the demo with its host, fleet and workers at work.
- host, SIGTERM → exit: a host whose one worker is in the middle of a ``slow`` run; it stops the
  worker (SIGTERM, which the simulated worker answers at its next 50 ms poll) and records it.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.host.hostkit import (  # noqa: E402
    STEERABLE_INTERVAL,
    HostProcess,
    connect,
    dispatch,
    rows,
    write_config,
)
from tests.processes import PipedProcess, wait_until  # noqa: E402


def fleet_running(ws: Path) -> bool:
    """Whether a run the fleet dispatched (not a seeded one, all older) is running."""
    since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()[:23]
    try:
        conn = sqlite3.connect(f"file:{ws / 'jarvis.db'}?mode=ro", uri=True, timeout=5)
        try:
            found = conn.execute(
                "SELECT 1 FROM runs WHERE state = 'running' AND created_at >= ? "
                "AND source_lane != 'openclaw' LIMIT 1",
                [since],
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return bool(found)


def demo_once(tmp: Path) -> tuple[float, float]:
    """Seconds to live work, and from SIGTERM to the demo's exit."""
    ws = tmp / f"demo-{time.monotonic_ns()}"
    env = {k: v for k, v in os.environ.items() if k != "JARVIS_WORKSPACE"}
    argv = [sys.executable, "-m", "jarvis_cli", "demo", "--workspace", str(ws)]
    argv += ["--no-console", "60"]
    started = time.monotonic()
    with PipedProcess(argv, env=env, cwd=ROOT) as demo:
        wait_until(lambda: fleet_running(ws), "live work", interval=0.005)
        live = time.monotonic() - started
        time.sleep(1.0)  # let the fleet's workers get going: the stop is measured at work
        signalled = time.monotonic()
        demo.send_signal(signal.SIGTERM)
        code = demo.wait()
        stopped = time.monotonic() - signalled
    if code != 128 + signal.SIGTERM:
        raise SystemExit(f"the demo exited with {code}:\n{demo.stderr}")
    return live, stopped


def host_once(tmp: Path) -> float:
    """Seconds from SIGTERM to the exit of a host with a worker mid-run."""
    ws = tmp / f"host-{time.monotonic_ns()}"
    ws.mkdir()
    write_config(ws, shutdown_grace_s=30)
    store = SqliteStore(ws / "jarvis.db")
    dispatch(store, "bench-slow-1", scenario="slow")
    store.close()
    conn = connect(ws)
    host = HostProcess(ws, interval=STEERABLE_INTERVAL)
    try:
        host.wait_started()
        wait_until(
            lambda: rows(conn, "SELECT 1 FROM progress_events WHERE run_id = 'bench-slow-1'"),
            "the worker's first progress",
        )
        signalled = time.monotonic()
        host.proc.send_signal(signal.SIGTERM)
        code = host.proc.wait()
        stopped = time.monotonic() - signalled
    finally:
        host.kill()
        conn.close()
    if code != 0:
        raise SystemExit(f"the host exited with {code}:\n{host.log()}")
    return stopped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
          f"{platform.release()}, Python {platform.python_version()}")  # fmt: skip
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    live: list[float] = []
    demo_stop: list[float] = []
    host_stop: list[float] = []
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-") as tmp:
        for _ in range(args.repeats):
            went_live, stopped = demo_once(Path(tmp))
            live.append(went_live)
            demo_stop.append(stopped)
            host_stop.append(host_once(Path(tmp)))
    print(f"\n| figure ({args.repeats} runs) | median | max |\n|---|---:|---:|")
    for name, values in (
        ("demo start → live work in the store", live),
        ("demo, SIGTERM → exit", demo_stop),
        ("host with a worker mid-run, SIGTERM → exit", host_stop),
    ):
        print(f"| {name} | {statistics.median(values):.2f} s | {max(values):.2f} s |")


if __name__ == "__main__":
    main()
