"""Many consoles on one workspace: the host's change feed against every console polling.

Run on demand (not part of the test suite); about ten minutes with the defaults:

    .venv/bin/python tests/bench/bench_consoles.py [--consoles 10,50] [--rate 200] [--seconds 20]

For each number of consoles, twice: with the host's change feed (what a console does by
default), and with every console reading the store itself (``JARVIS_NO_FEED=1``, what every
console did before the feed: the baseline, measured in the same run). Each time:

- A real `jarvis host` on a workspace of 50 queued runs (the host only ingests), and N real
  `jarvis tui --no-host` processes, each on a pseudo-terminal of its own (160 × 48), started and
  shown their header before anything is measured.
- A writer process offers progress files at ``--rate`` events a second for ``--seconds``
  (`bench_ingest.writer`, paced per millisecond; it says the rate it reached), and a reader
  process notes when each event's journal row is visible (`bench_ingest.reader`): the host's
  event → visible latency, p50 and p99.
- Each console's CPU (user + system, from /proc) over the writer's run, as % of one core: the
  median and the highest of the N; and before it, their median over `IDLE_S` of nothing
  written (watching a quiet workspace).

The host alone (no console) is measured first, in the same run: its p99 is what "the host's
p99 unchanged" is compared with.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.feed_wire import socket_path  # noqa: E402
from core.service.change_feed import NO_FEED  # noqa: E402
from tests.bench import bench_ingest, benchkit  # noqa: E402
from tests.bench.bench_console import Terminal, tui_command  # noqa: E402
from tests.bench.bench_ingest import cpu_seconds, pct  # noqa: E402

HEADER = b"need a human"
IDLE_S = 5.0
"""Seconds the consoles are measured idle (nothing written) before the writer starts."""


def feed_readers(ws: Path) -> int:
    """Connections to the workspace's feed socket (its listening end not counted)."""
    path = str(socket_path(ws))
    lines = Path("/proc/net/unix").read_text().splitlines()
    return max(0, sum(1 for line in lines if line.endswith(path)) - 1)


def start_consoles(ws: Path, count: int, *, feed: bool) -> list[Terminal]:
    command, _ = tui_command()
    if "--no-host" not in command:
        raise SystemExit("this jarvis has no --no-host: the consoles would start hosts")
    terms: list[Terminal] = []
    saved = os.environ.get(NO_FEED)
    if feed:
        os.environ.pop(NO_FEED, None)
    else:
        os.environ[NO_FEED] = "1"
    try:
        for _ in range(count):
            terms.append(Terminal([*command, "--workspace", str(ws)]))
    finally:
        if saved is None:
            os.environ.pop(NO_FEED, None)
        else:
            os.environ[NO_FEED] = saved
    for term in terms:
        if term.wait_for_time(HEADER, 300) is None:
            for other in terms:
                other.finish(signal.SIGKILL)
            raise SystemExit(f"a console never showed its header:\n{term.tail()}")
        term.forget()
    return terms


def one(count: int, *, feed: bool, rate: int, seconds: float) -> dict[str, Any]:
    ws, _ = bench_ingest.workspace(None)
    host = benchkit.start_host(ws)
    terms: list[Terminal] = []
    try:
        terms = start_consoles(ws, count, feed=feed)
        time.sleep(3)  # their first reads done, timers settled
        readers = feed_readers(ws)
        # Idle first: nothing written, what watching a quiet workspace costs.
        quiet = [cpu_seconds(t.proc.pid) for t in terms]
        time.sleep(IDLE_S)
        before = [cpu_seconds(t.proc.pid) for t in terms]
        idle = [(b - q) / IDLE_S * 100 for b, q in zip(before, quiet, strict=True)]
        host_before = cpu_seconds(host.pid)
        total = int(rate * seconds)
        written_at, seen_at = ws / "written.json", ws / "seen.json"
        started = time.monotonic()
        read = bench_ingest._child("reader", "", str(ws), str(total), str(seen_at))
        write = bench_ingest._child("writer", str(ws), str(rate), str(seconds), str(written_at))
        write.wait()
        took = time.monotonic() - started
        after = [cpu_seconds(t.proc.pid) for t in terms]
        host_used = cpu_seconds(host.pid) - host_before
        read.wait()
    finally:
        for term in terms:
            term.finish(signal.SIGTERM)
        benchkit.stop_host(host)
    wrote = json.loads(written_at.read_text())
    seen = json.loads(seen_at.read_text())
    shutil.rmtree(ws, ignore_errors=True)
    latencies = [
        (seen[f"{r}/{s}"] - t) * 1000 for r, s, t in wrote["written"] if f"{r}/{s}" in seen
    ]
    cpu = [(a - b) / took * 100 for a, b in zip(after, before, strict=True)]
    return {
        "consoles": count,
        "feed": feed,
        "readers": readers,
        "reached": wrote["reached"],
        "visible": f"{len(latencies)} of {total}",
        "p50_ms": pct(latencies, 50) if latencies else float("nan"),
        "p99_ms": pct(latencies, 99) if latencies else float("nan"),
        "console_cpu_median": statistics.median(cpu) if cpu else 0.0,
        "console_cpu_max": max(cpu) if cpu else 0.0,
        "console_idle_median": statistics.median(idle) if idle else 0.0,
        "host_cpu_pct": host_used / took * 100,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--consoles", default="10,50")
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    counts = [int(n) for n in args.consoles.split(",")]
    print(f"machine: {platform.machine()}, {platform.python_version()}, "
          f"{len(os.sched_getaffinity(0))} cores; {args.rate} events/s offered "
          f"for {args.seconds:g} s")  # fmt: skip
    alone = one(0, feed=True, rate=args.rate, seconds=args.seconds)
    print(f"host alone: reached {alone['reached']:.0f}/s, p50 {alone['p50_ms']:.1f} ms, "
          f"p99 {alone['p99_ms']:.1f} ms, host CPU {alone['host_cpu_pct']:.1f}%")  # fmt: skip
    print()
    head = (f"{'consoles':>8}  {'reads':<6} {'on feed':>7}  {'idle':>6}  "
            f"{'console CPU med / max':>22}  {'host p50 / p99 ms':>18}  {'p99 ÷ alone':>11}  "
            f"{'host CPU':>8}")  # fmt: skip
    print(head)
    for count in counts:
        results = {}
        for feed in (True, False):
            r = results[feed] = one(count, feed=feed, rate=args.rate, seconds=args.seconds)
            cpu = f"{r['console_cpu_median']:.2f}% / {r['console_cpu_max']:.2f}%"
            lat = f"{r['p50_ms']:.1f} / {r['p99_ms']:.1f}"
            print(f"{count:>8}  {'feed' if feed else 'store':<6} {r['readers']:>7}  "
                  f"{r['console_idle_median']:>5.2f}%  {cpu:>22}  "
                  f"{lat:>18}  {r['p99_ms'] / alone['p99_ms']:>10.2f}×  "
                  f"{r['host_cpu_pct']:>7.1f}%   (reached {r['reached']:.0f}/s, "
                  f"visible {r['visible']})", flush=True)  # fmt: skip
        store_cpu = max(results[False]["console_cpu_median"], 1e-9)
        ratio = results[True]["console_cpu_median"] / store_cpu
        print(f"{'':>8}  feed ÷ store, console CPU (median): {ratio:.2f}×")


if __name__ == "__main__":
    main()
