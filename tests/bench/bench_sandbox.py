"""The bubblewrap sandbox's start-up cost per run, against an unconfined start, in one run.

Run on demand (not part of the test suite); about a minute:

    .venv/bin/python tests/bench/bench_sandbox.py [--starts 100] [--runs 30]

Two figures, each measured confined and unconfined in the same run, interleaved so that the
machine's load falls on both alike; ratios are confined / unconfined:

- process start: the command and environment `core.host.sandbox.confine` builds for a run,
  started and waited for, for a worker that exits at once (``/bin/true``) and for one that
  starts a Python interpreter (``python -c pass``, as the simulated worker and aider do). This
  is the sandbox's own price: bwrap's namespaces, mounts and its init.
- run start on a real host: dispatch → the worker's first progress event (its own timestamp),
  for the simulated worker on a real repository, one run at a time (``[workers] sandbox`` set
  to ``bwrap``, then ``none``). This is what an operator waits for, the checkout included.
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
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.host.sandbox import Probe, confine, probe  # noqa: E402
from core.intake import submit_dispatch  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.bench import benchkit  # noqa: E402
from tests.bench.benchkit import stop_host  # noqa: E402
from tests.gitrepo import make_repo  # noqa: E402

LANE = "jarvis-worker-1"
REPO = "acme-labs/fleet-engine"
BASE = json.loads((ROOT / "sample_runs/dispatches/valid-backend-fix.json").read_text())


def start_once(command: Sequence[str], mode: str, found: Probe, tmp: Path, n: int) -> float:
    """Seconds to start ``command`` as the host would for a run (confined or not) and see it
    exit."""
    checkout = tmp / f"checkout-{mode}-{n}"
    checkout.mkdir()
    confined = confine(
        command, dict(os.environ), configured="none" if mode == "none" else "bwrap",
        found=found, workspace_root=tmp, run_id=f"r{n}", writable=[checkout], cwd=checkout,
    )  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(confined.argv, env=confined.env, cwd=checkout, start_new_session=True,
                          stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{confined.argv} exited with {done.returncode}")
    return took


def process_starts(command: Sequence[str], found: Probe, starts: int) -> dict[str, list[float]]:
    tmp = Path(tempfile.mkdtemp(prefix="jarvis-bench-sandbox-"))
    found_times: dict[str, list[float]] = {"bwrap": [], "none": []}
    try:
        for n in range(starts):
            for mode in ("bwrap", "none") if n % 2 else ("none", "bwrap"):
                found_times[mode].append(start_once(command, mode, found, tmp, n))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return found_times


def stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def run_starts(repo: Path, mode: str, runs: int, rounds: int) -> list[float]:
    """Dispatch → first progress event, for ``runs`` runs one at a time on a real host."""
    ws = Path(tempfile.mkdtemp(prefix=f"jarvis-bench-sandbox-{mode}-"))
    (ws / "jarvis.toml").write_text(
        f'[workers]\nsandbox = "{mode}"\n[git]\nworktree_grace_s = 0\n'
        f'[repos."{REPO}"]\npath = "{repo}"\n'
    )
    store = SqliteStore(ws / "jarvis.db")
    host = benchkit.start_host(ws, env=dict(os.environ, JARVIS_SIM_INTERVAL_MS="5,10"))
    conn = sqlite3.connect(ws / "jarvis.db", timeout=30)
    found: list[float] = []
    try:
        for i in range(runs):
            run_id = f"bench-{mode}-{rounds}-{i:03d}"  # a branch of its own in the repository
            doc = {**BASE, "run_id": run_id, "branch": f"jarvis-{run_id}"}
            doc.pop("request_id", None)
            submit_dispatch(store, doc, source_lane="main", target_lane=LANE, actor="bench")
            deadline = time.monotonic() + 120
            while True:
                (created,) = conn.execute(
                    "SELECT at FROM journal WHERE run_id = ? AND kind = 'created'", [run_id]
                ).fetchone()
                first = conn.execute(
                    "SELECT MIN(timestamp) FROM progress_events WHERE run_id = ?", [run_id]
                ).fetchone()[0]
                (state,) = conn.execute(
                    "SELECT state FROM runs WHERE run_id = ?", [run_id]
                ).fetchone()
                if first is not None and state != "running":
                    (sandbox,) = conn.execute(
                        "SELECT sandbox FROM runs WHERE run_id = ?", [run_id]
                    ).fetchone()
                    if sandbox != mode:
                        raise SystemExit(f"{run_id} ran with sandbox {sandbox}, not {mode}")
                    found.append(stamp(first) - stamp(created))
                    break  # the next run starts on a quiet host
                if time.monotonic() > deadline:
                    raise SystemExit(f"{run_id} did not end its attempt (state {state})")
                time.sleep(0.005)
    finally:
        conn.close()
        stop_host(host)
        store.close()
        shutil.rmtree(ws, ignore_errors=True)
    return found


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def report(name: str, times: dict[str, list[float]]) -> None:
    confined, free = times["bwrap"], times["none"]
    print(f"{name} ({len(confined)} each)")
    print(f"  {'':26} {'p50':>9} {'p90':>9}")
    for label, values in (("unconfined (baseline)", free), ("bwrap", confined)):
        print(f"  {label:26} {pct(values, 50) * 1000:7.1f}ms {pct(values, 90) * 1000:7.1f}ms")
    print(f"  {'ratio (bwrap / baseline)':26} {pct(confined, 50) / pct(free, 50):8.2f}× "
          f"{pct(confined, 90) / pct(free, 90):8.2f}×")  # fmt: skip
    print(f"  {'added per start (p50)':26} "
          f"{(pct(confined, 50) - pct(free, 50)) * 1000:7.1f}ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=100)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    found = probe()
    if found.program is None:
        raise SystemExit(f"no sandbox to measure: {found.problem}")
    version = subprocess.run([found.program, "--version"], capture_output=True, text=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
          f"{platform.release()}, Python {platform.python_version()}, "
          f"{version.stdout.strip()}")  # fmt: skip
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    report("process start, /bin/true", process_starts(["/bin/true"], found, args.starts))
    report("process start, python -c pass",
           process_starts([sys.executable, "-c", "pass"], found, args.starts))  # fmt: skip
    where = Path(tempfile.mkdtemp(prefix="jarvis-bench-sandbox-repo-"))
    try:
        repo = make_repo(where / "origin.git", {"README.md": "# fleet engine\n"}, bare=True)
        runs: dict[str, list[float]] = {"bwrap": [], "none": []}
        # Halves in turn, so a drift in the machine's load falls on both.
        half = max(1, args.runs // 2)
        for rounds, mode in enumerate(("none", "bwrap", "bwrap", "none")):
            runs[mode] += run_starts(repo, mode, half, rounds)
        report("run start on a real host, dispatch → first progress", runs)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
