"""SQLite and PostgreSQL side by side: ingest rate, a change seen by another process, claims.

Run on demand (not part of the test suite: pytest collects ``test_*.py`` only):

    .venv/bin/python tests/bench/bench_backends.py            # about 75 s
    .venv/bin/python tests/bench/bench_backends.py --quick    # about 20 s

SQLite is the baseline; every figure is measured on both backends in the same run, and the
ratio printed is PostgreSQL ÷ SQLite. PostgreSQL is a real server started from the system's
programs for this run (tests/pg_server.py) and stopped at its end, with durability set to match
SQLite's: SQLite's WAL with ``synchronous=NORMAL`` writes each commit to the OS but does not
flush it, so PostgreSQL runs with ``fsync`` and ``full_page_writes`` on and
``synchronous_commit=off`` (``--pg-synchronous-commit`` turns it on, PostgreSQL's default: a
disk flush per commit).

1. Ingest, events/s: the same progress files (``<lane>/progress/<run>/<n>.json``, 50 runs) go
   through the engine's ingest (`core.host.ingest.Ingestor.handle_many`, the host's batches of
   `core.host.inbox.BATCH` files a transaction), files read and deleted included.
2. Event → visible in another process: this process hands one progress file at a time to the
   ingest (its own transaction, at ``--rate`` a second) and notes the wall time (``time.time_ns``)
   just before; a reader process reads as the console does (`jarvis_tui.feed.StoreFeed.read`
   after the last sequence number it saw) and notes when each event is in what it read. SQLite's
   reader polls, re-arming after each read: every `jarvis_tui.app.POLL_INTERVAL` (the console's
   0.5 s) and every 50 ms. PostgreSQL's reader waits on `core.store.changes.listener_for`
   (LISTEN/NOTIFY; the console's interval as its fallback) and reads when a change it has not
   seen is announced.
3. Claims/s with three hosts: three processes, each its own connection and a registered lease
   (`core.host.fleet.Lease`), loop ``claim_runs`` (``--claim-batch`` runs of each of 6 lanes) then
   `core.moves.host_move` START for each run claimed, until the queue (``--runs`` runs made
   through `core.intake.submit_dispatch`) is empty. Runs claimed and started per second, the
   three together, from the go signal to the last host's last start. Afterwards every run must
   have exactly one ``start`` transition in the journal, and be running on the host that
   claimed it: the script exits 1 otherwise (and when any event went missing in 1 or 2).

The helper modes ``read`` and ``host`` are the other processes of figures 2 and 3.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.host.fleet import Lease  # noqa: E402
from core.host.inbox import BATCH  # noqa: E402
from core.host.ingest import Ingestor  # noqa: E402
from core.intake import submit_dispatch  # noqa: E402
from core.ipc.files import atomic_write_json  # noqa: E402
from core.ipc.layout import IpcLayout  # noqa: E402
from core.lifecycle import Action, IllegalTransition, RunState  # noqa: E402
from core.moves import NotHeld, host_move  # noqa: E402
from core.store.api import RunStore, iso  # noqa: E402
from core.store.changes import listener_for  # noqa: E402
from core.store.location import open_store  # noqa: E402
from core.store.runs import StaleVersion  # noqa: E402
from jarvis_tui.app import POLL_INTERVAL  # noqa: E402
from jarvis_tui.feed import StoreFeed  # noqa: E402
from jarvis_tui.run_model import RunModel  # noqa: E402
from tests.core.store_helpers import dispatch_doc  # noqa: E402

LANE = "jarvis-worker-1"
LANES = [f"jarvis-worker-{n}" for n in range(1, 7)]
RUNS = 50
"""Runs the progress events of figures 1 and 2 are spread over."""
HOSTS = ("host-a", "host-b", "host-c")
FAST_POLL = 0.05
#: PostgreSQL as durable as SQLite's WAL with synchronous=NORMAL: a commit outlives the process
#: that made it; a crash of the OS (or of PostgreSQL's server) may lose the last few commits, and
#: neither corrupts the store.
PG_SETTINGS = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off"}
EPOCH = datetime(2026, 11, 26, 3, 0, tzinfo=UTC)


class Backends:
    """Where each figure's fresh store is: an SQLite file, or a new database on the server."""

    def __init__(self, workdir: Path, new_database: Callable[[], str]) -> None:
        self.workdir = workdir
        self._new_database = new_database
        self._made = 0

    def workspace(self, backend: str, figure: str) -> tuple[Path, str | Path]:
        """A new workspace folder, and its store: its own ``jarvis.db``, or a new database."""
        self._made += 1
        ws = self.workdir / f"{figure}-{backend}-{self._made}"
        ws.mkdir()
        location: str | Path = ws / "jarvis.db" if backend == "sqlite" else self._new_database()
        return ws, location


def make_runs(store: RunStore, run_ids: list[str], lanes: list[str]) -> None:
    """Queued runs, each dispatched through intake as the host receives them."""
    for n, run_id in enumerate(run_ids):
        result = submit_dispatch(
            store, dispatch_doc(run_id), source_lane="main",
            target_lane=lanes[n % len(lanes)], actor="bench",
        )  # fmt: skip
        assert result.outcome == "enqueued", result.message


def progress_body(run_id: str, seq: int, at: datetime) -> dict[str, object]:
    return {
        "kind": "worker_progress",
        "run_id": run_id,
        "group_folder": LANE,
        "timestamp": iso(at),
        "phase": "testing",
        "summary": f"step {seq} of the benchmark",
        "seq": seq,
    }


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


# -- 1. ingest --------------------------------------------------------------------------------


def bench_ingest(ws: Path, location: str | Path, events: int, problems: list[str]) -> float:
    """Progress events ingested per second, files on disk before the clock starts."""
    store = open_store(location)
    try:
        run_ids = [f"ingest-{i:03d}" for i in range(RUNS)]
        make_runs(store, run_ids, [LANE])
        layout = IpcLayout(ws / "data" / "ipc")
        for n in range(events):
            run_id, seq = run_ids[n % RUNS], n // RUNS + 1
            folder = layout.progress_dir(LANE, run_id)
            folder.mkdir(parents=True, exist_ok=True)
            at = EPOCH + timedelta(milliseconds=n)
            atomic_write_json(folder / f"{n:08d}-{seq}.json", progress_body(run_id, seq, at))
        # In the order the host's sweep takes them: run folder by run folder, by name.
        paths = sorted(p for run_id in run_ids for p in layout.progress_dir(LANE, run_id).iterdir())
        ingestor = Ingestor(store, layout)
        outcomes: Counter[str] = Counter()
        start = time.perf_counter()
        for first in range(0, len(paths), BATCH):
            for result in ingestor.handle_many(paths[first : first + BATCH]):
                outcomes[result.outcome] += 1
        elapsed = time.perf_counter() - start
        stored = store.progress_event_count()
        if outcomes != Counter({"ingested": events}) or stored != events:
            problems.append(
                f"ingest on {store.location}: {dict(outcomes)} for {events} files, "
                f"{stored} progress rows"
            )
        return events / elapsed
    finally:
        store.close()


# -- 2. event → visible in another process ----------------------------------------------------


@dataclass
class Visibility:
    event_ms: list[float] = field(default_factory=list)
    """Per event: handed to the ingest → in a read of the other process."""
    commit_ms: list[float] = field(default_factory=list)
    """Per event: the ingest's commit returned → in a read of the other process."""
    reads: int = 0
    """Reads the other process made (a poll that found nothing included)."""


def bench_visible(
    ws: Path,
    location: str | Path,
    *,
    wake: str,
    interval: float,
    rate: float,
    seconds: float,
    problems: list[str],
) -> Visibility:
    """Event → visible to a `StoreFeed` in another process; ``wake`` is ``poll`` or ``listen``."""
    store = open_store(location)
    run_ids = [f"live-{i:03d}" for i in range(RUNS)]
    make_runs(store, run_ids, [LANE])
    layout = IpcLayout(ws / "data" / "ipc")
    for run_id in run_ids:
        layout.progress_dir(LANE, run_id).mkdir(parents=True)
    total = int(rate * seconds)
    ready, out = ws / "reader.ready", ws / "reader.json"
    reader = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "read",
            str(ws / "jarvis.db"),
            str(location),
            wake,
            str(interval),
            str(total),
            str(seconds + 30),
            str(ready),
            str(out),
        ]  # fmt: skip
    )
    try:
        while not ready.exists():
            if reader.poll() is not None:
                raise SystemExit("the reading process exited before it was ready")
            time.sleep(0.01)
        ingestor = Ingestor(store, layout)
        handed: dict[tuple[str, int], tuple[int, int]] = {}
        start = time.monotonic()
        for n in range(total):
            run_id, seq = run_ids[n % RUNS], n // RUNS + 1
            path = layout.progress_dir(LANE, run_id) / f"{n:08d}-{seq}.json"
            atomic_write_json(path, progress_body(run_id, seq, datetime.now(UTC)))
            before = time.time_ns()
            result = ingestor.handle(path)
            handed[(run_id, seq)] = (before, time.time_ns())
            if result.outcome != "ingested":
                problems.append(f"live ingest of {path.name}: {result}")
            # A steady stream, not a burst: the reader then measures pickup, not a backlog.
            pause = start + (n + 1) / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        if reader.wait(timeout=seconds + 60) != 0:
            problems.append(f"the reading process ({wake}) exited with {reader.returncode}")
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
        store.close()
    seen: dict[str, Any] = {"visible": [], "reads": 0}
    if out.exists():
        seen = json.loads(out.read_text())
    visible = {(run_id, seq): at for run_id, seq, at in seen["visible"]}
    missing = len(set(handed) - set(visible))
    if missing:
        problems.append(f"{missing} of {total} events never became visible ({wake}, {location})")
    found = Visibility(reads=seen["reads"])
    for key, (before, committed) in handed.items():
        if key in visible:
            found.event_ms.append((visible[key] - before) / 1e6)
            found.commit_ms.append((visible[key] - committed) / 1e6)
    return found


def mode_read(
    db_path: str,
    location: str,
    wake: str,
    interval: str,
    total: str,
    give_up_s: str,
    ready: str,
    out: str,
) -> None:
    """The reading process: a console's reads, noting when each progress event is first seen."""
    store_at: str | Path = location if location.startswith("postgres") else Path(location)
    feed = StoreFeed(Path(db_path), store_at)
    listener = listener_for(store_at) if wake == "listen" else None
    every, expected = float(interval), int(total)
    first = feed.read(None, RunModel().ask())
    assert first is not None
    since = first.last_seq
    if listener is not None:
        listener.wait(0.01)  # connected and listening before the writer starts
    visible: dict[tuple[str, int], int] = {}
    reads = 0
    Path(ready).touch()
    deadline = time.monotonic() + float(give_up_s)
    while len(visible) < expected and time.monotonic() < deadline:
        if listener is not None:
            announced = listener.wait(every)
            if announced is not None and announced <= since:
                continue  # a change this reader has already read
        got = feed.read(since, RunModel().ask())
        now = time.time_ns()
        reads += 1
        if got is not None:
            for entry in got.journal:
                if entry["kind"] == "progress":
                    visible.setdefault((entry["run_id"], int(entry["payload"]["seq"])), now)
            since = got.last_seq
        if listener is None:
            time.sleep(every)  # the console arms its next read once this one is done
    if listener is not None:
        listener.close()
    feed.close()
    rows = [[run_id, seq, at] for (run_id, seq), at in visible.items()]
    Path(out).write_text(json.dumps({"visible": rows, "reads": reads}))


# -- 3. claims with three hosts ---------------------------------------------------------------


@dataclass
class Claims:
    rate: float
    seconds: float
    by_host: dict[str, int]
    claim_calls: int


def bench_claims(
    ws: Path, location: str | Path, runs: int, batch: int, problems: list[str]
) -> Claims:
    """Three host processes claim and start every queued run; claims/s and the checks."""
    store = open_store(location)
    run_ids = [f"pool-{i:05d}" for i in range(runs)]
    make_runs(store, run_ids, LANES)
    after = store.last_seq()
    go = ws / "go"
    me = [sys.executable, str(Path(__file__).resolve()), "host", str(location), str(ws), str(batch)]
    hosts = {
        name: subprocess.Popen(
            [*me, name, str(ws / f"{name}.ready"), str(go), str(ws / f"{name}.json")]
        )  # fmt: skip
        for name in HOSTS
    }
    try:
        while not all((ws / f"{name}.ready").exists() for name in HOSTS):
            for name, process in hosts.items():
                if process.poll() is not None:
                    raise SystemExit(f"{name} exited with {process.returncode} before the start")
            time.sleep(0.01)
        go_at = time.time()
        go.touch()
        for name, process in hosts.items():
            if process.wait(timeout=600) != 0:
                problems.append(f"{name} exited with {process.returncode}")
    finally:
        for process in hosts.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    reports = {name: json.loads((ws / f"{name}.json").read_text()) for name in HOSTS}
    for name, report in reports.items():
        for error in report["errors"]:
            problems.append(f"{name}: {error}")
    started = sum(report["started"] for report in reports.values())
    ended = max(report["ended"] for report in reports.values())
    check_started_once(store, after, run_ids, reports, problems)
    store.close()
    seconds = ended - go_at
    return Claims(
        started / seconds,
        seconds,
        {name: report["started"] for name, report in reports.items()},
        sum(report["claim_calls"] for report in reports.values()),
    )


def check_started_once(
    store: RunStore,
    after: int,
    run_ids: list[str],
    reports: dict[str, dict[str, Any]],
    problems: list[str],
) -> None:
    """Every run has exactly one ``start`` transition after ``after``, and runs on the host
    that says it started it."""
    starts: Counter[str] = Counter()
    seq = after
    while True:
        rows = store.journal_since(seq, limit=10_000)
        if not rows:
            break
        for row in rows:
            if row["kind"] == "transition" and json.loads(row["payload"])["action"] == "start":
                starts[row["run_id"]] += 1
        seq = rows[-1]["seq"]
    twice = sorted(run_id for run_id, n in starts.items() if n > 1)
    never = sorted(set(run_ids) - set(starts))
    if twice or never or set(starts) - set(run_ids):
        problems.append(
            f"claims on {store.location}: {len(twice)} runs started more than once "
            f"({twice[:5]}), {len(never)} never started ({never[:5]})"
        )
    for name, report in reports.items():
        held = {row["run_id"] for row in store.runs_held(name, RunState.RUNNING.value)}
        if len(held) != report["started"]:
            problems.append(
                f"{name} started {report['started']} runs but holds {len(held)} running"
            )
    states = store.state_counts()
    if states != {RunState.RUNNING.value: len(run_ids)}:
        problems.append(f"claims on {store.location}: runs end in states {states}")


def mode_host(location: str, ws: str, batch: str, name: str, ready: str, go: str, out: str) -> None:
    """One host: register, wait for the go, then claim and start until nothing is left."""
    store_at: str | Path = location if location.startswith("postgres") else Path(location)
    store = open_store(store_at, migrate=False)
    lease = Lease(store, name, Path(ws), LANES, heartbeat_s=60.0, lease_s=600.0)
    lease.register()
    wants = dict.fromkeys(LANES, int(batch))
    started, calls = 0, 0
    errors: list[str] = []
    Path(ready).touch()
    while not os.path.exists(go):
        time.sleep(0.0005)
    while True:
        claimed = store.claim_runs(name, wants, RunState.QUEUED.value)
        calls += 1
        if not claimed:
            break
        for run_id in claimed:
            try:
                host_move(store, run_id, Action.START, holder=name)
            except (NotHeld, IllegalTransition, StaleVersion) as exc:
                # A run this host claimed that it may not start: another host claimed it too.
                errors.append(f"could not start {run_id}, which it claimed: {exc!r}")
            else:
                started += 1
    ended = time.time()
    lease.end()
    store.close()
    report = {"started": started, "claim_calls": calls, "ended": ended, "errors": errors}
    Path(out).write_text(json.dumps(report))


# -- the run ----------------------------------------------------------------------------------


@contextmanager
def postgres(
    *, synchronous_commit: bool, unix_socket: bool
) -> Iterator[tuple[Callable[[], str], str]]:
    """A server for the run: a function making a new database (its URL: over TCP on 127.0.0.1,
    as hosts on other machines reach it, or over its Unix socket), and its version."""
    from tests.pg_server import running_server

    settings = {**PG_SETTINGS, "synchronous_commit": "on" if synchronous_commit else "off"}
    with running_server(settings=settings) as server:
        version = server.admin().execute("SHOW server_version").fetchone()
        assert version is not None

        def new_database() -> str:
            name = server.create_database()
            return server.socket_url(name) if unix_socket else server.url(name)

        yield new_database, str(version[0])


def machine(pg_version: str) -> str:
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}, PostgreSQL {pg_version}; load average {load}"
    )


def ratio(pg: float, lite: float) -> str:
    if lite <= 0:
        return "—"
    value = pg / lite
    return f"{value:.2f}×" if value >= 0.1 else f"{value:.3f}×"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes: about 20 s in all")
    parser.add_argument("--events", type=int, help="progress files ingested (figure 1)")
    parser.add_argument("--seconds", type=float, help="live events' duration (figure 2)")
    parser.add_argument("--rate", type=float, default=100.0, help="live events a second")
    parser.add_argument("--runs", type=int, help="queued runs the three hosts claim (figure 3)")
    parser.add_argument("--claim-batch", type=int, default=1, help="runs a claim asks per lane")
    parser.add_argument(
        "--pg-synchronous-commit", action="store_true",
        help="PostgreSQL flushes the WAL at every commit (its default), unlike SQLite here",
    )  # fmt: skip
    parser.add_argument(
        "--pg-unix-socket", action="store_true",
        help="connect to PostgreSQL over its Unix socket instead of TCP on 127.0.0.1",
    )  # fmt: skip
    args = parser.parse_args()
    events = args.events or (2_000 if args.quick else 10_000)
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    runs = args.runs or (600 if args.quick else 3_000)

    problems: list[str] = []
    rows: list[tuple[str, str, str, str]] = []
    with (
        tempfile.TemporaryDirectory(prefix="jarvis-bench-") as tmp,
        postgres(
            synchronous_commit=args.pg_synchronous_commit, unix_socket=args.pg_unix_socket
        ) as (new_database, pg_version),
    ):
        print(f"machine: {machine(pg_version)}", flush=True)
        how = "Unix socket" if args.pg_unix_socket else "TCP, 127.0.0.1"
        commit = "on" if args.pg_synchronous_commit else "off"
        print(f"PostgreSQL over {how}; synchronous_commit={commit}", flush=True)
        backends = Backends(Path(tmp), new_database)

        rate = {b: bench_ingest(*backends.workspace(b, "ingest"), events, problems)
                for b in ("sqlite", "postgres")}  # fmt: skip
        print(f"ingest, {events:,} progress files: {rate}", flush=True)
        rows.append(
            (
                f"ingest, progress events/s ({events:,} files, {BATCH} a transaction)",
                f"{rate['sqlite']:,.0f} /s",
                f"{rate['postgres']:,.0f} /s",
                ratio(rate["postgres"], rate["sqlite"]),
            )
        )

        live = {
            "sqlite-0.5": ("sqlite", "poll", POLL_INTERVAL),
            "sqlite-0.05": ("sqlite", "poll", FAST_POLL),
            "postgres": ("postgres", "listen", POLL_INTERVAL),
        }
        seen: dict[str, Visibility] = {}
        for label, (backend, wake, interval) in live.items():
            seen[label] = bench_visible(
                *backends.workspace(backend, "visible"), wake=wake, interval=interval,
                rate=args.rate, seconds=seconds, problems=problems,
            )  # fmt: skip
            found = seen[label]
            print(
                f"event → visible, {label} ({wake} every {interval:g} s): "
                f"{len(found.event_ms):,} events, {found.reads:,} reads, "
                f"p50 {pct(found.event_ms, 50):.1f} ms, p99 {pct(found.event_ms, 99):.1f} ms; "
                f"commit → visible p50 {pct(found.commit_ms, 50):.1f} ms, "
                f"p99 {pct(found.commit_ms, 99):.1f} ms",
                flush=True,
            )
        pg_seen = seen["postgres"].event_ms
        for label, poll in (("sqlite-0.5", "every 0.5 s (the console's)"),
                            ("sqlite-0.05", "every 50 ms")):  # fmt: skip
            for p in (50, 99):
                lite, pg = pct(seen[label].event_ms, p), pct(pg_seen, p)
                rows.append(
                    (
                        f"event → visible in another process, p{p}: SQLite polled {poll}; "
                        "PostgreSQL woken by NOTIFY",
                        f"{lite:.1f} ms",
                        f"{pg:.1f} ms",
                        ratio(pg, lite),
                    )
                )

        claims = {
            b: bench_claims(*backends.workspace(b, "claims"), runs, args.claim_batch, problems)
            for b in ("sqlite", "postgres")
        }
        for backend, claimed in claims.items():
            print(
                f"claims, {backend}: {runs:,} runs in {claimed.seconds:.2f} s, "
                f"{claimed.rate:,.0f} /s; by host {claimed.by_host}; "
                f"{claimed.claim_calls:,} claims",
                flush=True,
            )
        rows.append(
            (
                f"claims/s, three hosts ({runs:,} runs, 6 lanes): claimed and started",
                f"{claims['sqlite'].rate:,.0f} /s",
                f"{claims['postgres'].rate:,.0f} /s",
                ratio(claims["postgres"].rate, claims["sqlite"].rate),
            )
        )
        load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
        print(f"load average at the end: {load}")

    print("\n| figure | SQLite | PostgreSQL | ratio (PostgreSQL ÷ SQLite) |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if problems:
        print("\nFAILED:", file=sys.stderr)
        for problem in problems:
            print(f"- {problem}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "read":
        mode_read(*sys.argv[2:10])
    elif len(sys.argv) > 1 and sys.argv[1] == "host":
        mode_host(*sys.argv[2:9])
    else:
        main()
