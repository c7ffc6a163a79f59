"""What an idle host costs: a real `jarvis host` on a workspace with nothing to do.

Run on demand (not part of the test suite); about half a minute:

    .venv/bin/python tests/bench/bench_host_idle.py [--seconds 10] [--repeats 3]

For each repeat, a host is started on a fresh workspace (no runs, no files), left to settle for
two seconds, and its CPU (user + system, from /proc, all its threads) is read over ``--seconds``.
The baseline, in the same run: a Python process that only sleeps, started the same way, whose
CPU is what any resident interpreter costs. Printed as % of one core, and the difference.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench import benchkit  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def idle_share(pid: int, seconds: float) -> float:
    """The process's CPU over ``seconds``, as % of one core."""
    time.sleep(2)  # its start-up is not idling
    before, start = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return 100 * (cpu_seconds(pid) - before) / (time.monotonic() - start)


def host(seconds: float) -> float:
    ws = Path(tempfile.mkdtemp(prefix="jarvis-idle-"))
    process = benchkit.start_host(ws)
    try:
        return idle_share(process.pid, seconds)
    finally:
        benchkit.stop_host(process)
        shutil.rmtree(ws, ignore_errors=True)


def sleeper(seconds: float) -> float:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        return idle_share(process.pid, seconds)
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average {load}")  # fmt: skip
    hosts = [host(args.seconds) for _ in range(args.repeats)]
    base = sleeper(args.seconds)
    median = sorted(hosts)[len(hosts) // 2]
    print("| | % of one core, idle |")
    print("|---|---:|")
    print(f"| host (median of {args.repeats}: {', '.join(f'{h:.2f}' for h in hosts)}) "
          f"| {median:.2f} |")  # fmt: skip
    print(f"| a sleeping Python process (baseline) | {base:.2f} |")
    print(f"| host − baseline | {median - base:.2f} |")


if __name__ == "__main__":
    main()
