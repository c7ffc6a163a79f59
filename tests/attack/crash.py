"""kill -9 of the host, over and over: no event lost, none doubled, no worker orphaned.

Two rounds:

1. **Ingest under fire.** A writer drops ``runs x seqs`` progress files into a lane the host
   starts no worker for, at a steady pace, while the host is SIGKILLed at random moments and
   started again (alternating inotify and polling). At the end every event must be in the store
   exactly once, with exactly one journal row, and no file left or quarantined.
2. **Live workers under fire.** Simulated workers run (some steered, some slow); the host is
   SIGKILLed at random moments. Each restart settles the runs it finds running; at the end every
   run has ended, no worker process of the workspace is alive, no progress file is left, and the
   journal holds one row per recorded progress event.

    .venv/bin/python -m tests.attack.crash [--kills 40] [--runs 50] [--seqs 200]
"""

from __future__ import annotations

import argparse
import os
import random
import threading
import time
from pathlib import Path

from core.ipc.files import atomic_write_json
from core.store.sqlite_store import SqliteStore
from tests.attack.kit import LANE, Figures, main, workspace
from tests.host.hostkit import (
    HostProcess,
    connect,
    dispatch,
    rows,
    wait_until,
    workers_of,
    write_config,
)

TERMINAL = {"review_requested", "failed", "failed_contract", "done"}


class Writer(threading.Thread):
    """Writes every progress file, seq by seq across the runs, as a worker would."""

    def __init__(self, root: Path, run_ids: list[str], seqs: int, pace: float) -> None:
        super().__init__(daemon=True)
        self.root, self.run_ids, self.seqs, self.pace = root, run_ids, seqs, pace
        self.written = 0

    def run(self) -> None:
        for run_id in self.run_ids:
            (self.root / run_id).mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        base_ms = time.time_ns() // 1_000_000
        for seq in range(1, self.seqs + 1):
            for run_id in self.run_ids:
                if (ahead := started + self.written / self.pace - time.monotonic()) > 0:
                    time.sleep(ahead)
                ms = base_ms + self.written
                atomic_write_json(
                    self.root / run_id / f"{ms}-{seq}.json",
                    {
                        "kind": "worker_progress",
                        "run_id": run_id,
                        "group_folder": LANE,
                        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                        "phase": "testing",
                        "summary": f"{run_id} step {seq}",
                        "seq": seq,
                    },
                )
                self.written += 1


def _errors(ws: Path) -> int:
    errors = ws / "data" / "ipc" / "errors"
    return len(list(errors.glob("*.reason.json"))) if errors.exists() else 0


def _left(ws: Path) -> int:
    return sum(
        1 for p in (ws / "data" / "ipc").glob("*/progress/*/*.json") if not p.name.startswith(".")
    )


def ingest_under_fire(args: argparse.Namespace, figures: Figures, rng: random.Random) -> None:
    with workspace("crash-ingest") as ws:
        write_config(ws, lane_concurrency={LANE: 0})
        run_ids = [f"crash-{n:03d}" for n in range(args.runs)]
        store = SqliteStore(ws / "jarvis.db")
        for run_id in run_ids:
            dispatch(store, run_id, lane=LANE)
        store.close()
        total = args.runs * args.seqs
        writer = Writer(ws / "data" / "ipc" / LANE / "progress", run_ids, args.seqs, args.pace)
        conn = connect(ws)
        kills = 0
        writer.start()
        for round_no in range(args.kills):
            host = HostProcess(ws, poll=round_no % 2 == 1)
            host.wait_started()
            time.sleep(rng.uniform(0.05, 0.6))  # the attack: a kill at any moment
            host.kill()
            kills += 1
        writer.join()
        host = HostProcess(ws)
        host.wait_started()
        wait_until(lambda: _left(ws) == 0, 600, "the last host to drain the tree")
        host.stop()
        events = rows(conn, "SELECT COUNT(*) AS n FROM progress_events")[0]["n"]
        distinct = rows(
            conn, "SELECT COUNT(*) AS n FROM (SELECT DISTINCT run_id, attempt, seq "
            "FROM progress_events)",
        )[0]["n"]  # fmt: skip
        journal = rows(conn, "SELECT COUNT(*) AS n FROM journal WHERE kind = 'progress'")[0]["n"]
        conn.close()
        figures.add("ingest: kill -9 of the host", kills)
        figures.add("ingest: events written", writer.written)
        figures.add("ingest: events in the store", events)
        figures.add("ingest: journal rows for them", journal)
        figures.add("ingest: quarantined", _errors(ws))
        figures.check(writer.written == total, f"the writer wrote {writer.written} of {total}")
        figures.check(events == total, f"{total - events} event(s) lost")
        figures.check(distinct == events, f"{events - distinct} event(s) doubled")
        figures.check(journal == total, f"{journal} journal rows for {total} events")
        figures.check(_errors(ws) == 0, "valid files were quarantined")


def workers_under_fire(args: argparse.Namespace, figures: Figures, rng: random.Random) -> None:
    with workspace("crash-workers") as ws:
        write_config(ws, concurrency=4, no_output_s=20, shutdown_grace_s=1)
        store = SqliteStore(ws / "jarvis.db")
        scenarios = ["ok", "slow", "ok", "fail_contract", "crash"]
        run_ids = [f"live-{n:03d}" for n in range(args.live_runs)]
        for n, run_id in enumerate(run_ids):
            dispatch(store, run_id, scenario=scenarios[n % len(scenarios)])
        store.close()
        conn = connect(ws)
        kills = 0
        for _ in range(args.live_kills):
            host = HostProcess(ws, interval="20,60")
            host.wait_started()
            time.sleep(rng.uniform(0.3, 2.0))
            host.kill()
            kills += 1
        host = HostProcess(ws, interval="20,60")
        host.wait_started()

        def settled() -> bool:
            found = rows(conn, "SELECT state FROM runs")
            return all(r["state"] in TERMINAL for r in found)

        wait_until(settled, 900, "every run to end")
        host.stop()
        orphans = workers_of(ws)
        ended = rows(conn, "SELECT state, COUNT(*) AS n FROM runs GROUP BY state")
        events = rows(conn, "SELECT COUNT(*) AS n FROM progress_events")[0]["n"]
        journal = rows(conn, "SELECT COUNT(*) AS n FROM journal WHERE kind = 'progress'")[0]["n"]
        conn.close()
        figures.add("workers: kill -9 of the host", kills)
        figures.add("workers: runs", len(run_ids))
        figures.add("workers: ended as", ", ".join(f"{r['state']} {r['n']}" for r in ended))
        figures.add("workers: progress events / journal rows", f"{events:,} / {journal:,}")
        figures.add("workers: orphaned worker processes", len(orphans))
        figures.add("workers: files left in the tree", _left(ws))
        figures.check(not orphans, f"worker processes outlived their hosts: {orphans}")
        figures.check(events == journal, f"{events} events but {journal} journal rows")
        figures.check(_left(ws) == 0, "progress files were left behind")
        figures.check(_errors(ws) == 0, "valid files were quarantined")


def attack(args: argparse.Namespace) -> Figures:
    figures = Figures("crash (kill -9 of the host)")
    rng = random.Random(args.seed)
    ingest_under_fire(args, figures, rng)
    workers_under_fire(args, figures, rng)
    return figures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kills", type=int, default=40)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--seqs", type=int, default=200)
    p.add_argument("--pace", type=float, default=400.0, help="files per second")
    p.add_argument("--live-runs", type=int, default=30)
    p.add_argument("--live-kills", type=int, default=12)
    p.add_argument("--seed", default=os.environ.get("JARVIS_ATTACK_SEED", "crash"))
    return p


if __name__ == "__main__":
    main(attack, parser())
