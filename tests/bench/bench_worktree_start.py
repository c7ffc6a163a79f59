"""Dispatch → worker started, with a git worktree of a 10,000-file repository per run, against
today's empty checkout folder (the baseline the real-repositories issue names).

Run on demand (not part of the test suite); takes about a minute:

    .venv/bin/python tests/bench/bench_worktree_start.py [--runs 40] [--files 10000]

For each configuration a real host runs; runs are dispatched one at a time, each once the
previous one has ended its attempt (so no other run's git work competes), and the latency is
the store's own record: the run's ``created`` journal row to its ``worker`` row (the host
notices the run, makes the checkout, starts the process). Ratios are ours / baseline (how
many times longer a worktree start takes).
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
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.intake import submit_dispatch  # noqa: E402
from core.repos.git import git  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.bench import benchkit  # noqa: E402
from tests.bench.benchkit import stop_host  # noqa: E402

LANE = "jarvis-worker-1"
REPO = "acme-labs/fleet-engine"
BASE = json.loads((ROOT / "sample_runs/dispatches/valid-backend-fix.json").read_text())
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def big_repo(where: Path, files: int) -> Path:
    """A bare repository whose one commit holds ``files`` small files in 100 folders."""
    work = where / "work"
    work.mkdir(parents=True)
    git(["init", "--quiet", "-b", "main"], cwd=work)
    for i in range(files):
        folder = work / "src" / f"pkg{i % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module_{i:05d}.py").write_text(f"VALUE = {i}\n")
    git(["add", "--all"], cwd=work)
    # No automatic gc in the background: it would delete loose objects while we remove them.
    git(["-c", "gc.auto=0", "commit", "--quiet", "-m", "a big repository"], cwd=work,
        env=IDENTITY)  # fmt: skip
    bare = where / "big.git"
    git(["clone", "--quiet", "--bare", str(work), str(bare)], cwd=where)
    shutil.rmtree(work, ignore_errors=True)
    return bare


def start_host(ws: Path) -> subprocess.Popen[bytes]:
    return benchkit.start_host(ws, env=dict(os.environ, JARVIS_SIM_INTERVAL_MS="5,10"))


def stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def latencies(repo: Path | None, runs: int) -> list[float]:
    ws = Path(tempfile.mkdtemp(prefix="jarvis-bench-wt-"))
    config = "[workers]\nconcurrency = 64\n[git]\nworktree_grace_s = 0\n"
    if repo is not None:
        config += f'[repos."{REPO}"]\npath = "{repo}"\n'
    (ws / "jarvis.toml").write_text(config)
    store = SqliteStore(ws / "jarvis.db")
    host = start_host(ws)
    conn = sqlite3.connect(ws / "jarvis.db", timeout=30)
    found: list[float] = []
    try:
        for i in range(runs):
            run_id = f"bench-{i:03d}"
            doc = {**BASE, "run_id": run_id, "branch": f"jarvis-bench-{i:03d}"}
            doc.pop("request_id", None)
            submit_dispatch(store, doc, source_lane="main", target_lane=LANE, actor="bench")
            deadline = time.monotonic() + 120
            latency: float | None = None
            while True:
                if latency is None:
                    rows = conn.execute(
                        "SELECT kind, at FROM journal WHERE run_id = ? AND kind IN "
                        "('created', 'worker')",
                        [run_id],
                    ).fetchall()
                    times = dict(rows)
                    if "worker" in times:
                        latency = stamp(times["worker"]) - stamp(times["created"])
                (state,) = conn.execute(
                    "SELECT state FROM runs WHERE run_id = ?", [run_id]
                ).fetchone()
                if latency is not None and state != "running":
                    found.append(latency)
                    break  # the next run starts on a quiet host: no other run's git work
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{run_id} did not end its attempt")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="jarvis-bench-repo-"))
    try:
        made = time.monotonic()
        repo = big_repo(where, args.files)
        print(f"repository of {args.files:,} files made in {time.monotonic() - made:.1f} s")
        baseline = latencies(None, args.runs)
        ours = latencies(repo, args.runs)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {version}")  # fmt: skip
    print(f"dispatch → worker started, {args.runs} runs each")
    print(f"{'':28} {'p50':>9} {'p99':>9}")
    for name, values in (("empty folder (baseline)", baseline), ("worktree", ours)):
        print(f"{name:28} {pct(values, 50) * 1000:7.0f}ms {pct(values, 99) * 1000:7.0f}ms")
    print(f"{'ratio (worktree / baseline)':28} {pct(ours, 50) / pct(baseline, 50):8.1f}× "
          f"{pct(ours, 99) / pct(baseline, 99):8.1f}×")  # fmt: skip


if __name__ == "__main__":
    main()
