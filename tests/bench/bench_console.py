"""Console figures: key → repaint latency, CPU and memory under live load, idle CPU, first paint.

Run on demand (not part of the test suite); about two and a half minutes with the defaults:

    .venv/bin/python tests/bench/bench_console.py [--runs 10000] [--rate 200] [--seconds 20]
        [--quiet-load 10] [--idle 60] [--repeats 7] [--poll-seconds 8] [--profile FILE]

The store: ``--runs`` runs with a realistic history bulk-inserted in one transaction (journal,
audit, gate verdicts, failures sharing fingerprints, steers, past progress); the 50 newest runs
are running, so live changes land on the rows at the top of the table, where the operator looks.

The load: a writer process (the host's place) writes ``--rate`` progress events per second
across the 50 running runs, each in its own transaction as the host's ingest does: a
``progress_events`` row and ``touch_run(kind="progress")`` with its journal row.

The console is the real `JarvisApp` with live polling, in its own process under a
pseudo-terminal (160 × 48, TERM=xterm-256color) with Textual's real Linux driver. Not headless:
the headless driver skips turning each frame into terminal output, which is part of what a
console costs. CPU (utime + stime of all its threads, /proc/PID/stat) and RSS (/proc/PID/status)
are the console's alone. Keys are bytes written to the terminal, as an SSH client's would be.
Phases: ``--quiet-load`` s of load without keys; ``--seconds`` s of load with ``down`` pressed
10 times a second (CPU, RSS, key latency); filter keystrokes under load; the writer stops;
``--idle`` s with no writes and no keys. For each window the script also prints the CPU that
other processes used on the machine (/proc/stat): above 10% the figures are not to be trusted.

What "painted" means: the console process wraps `App._display`, where a compositor frame is
handed to the driver (Screen._on_timer_update → _compositor_refresh → App._display → the
driver's writer thread → the terminal), and records for each frame its time (``time.monotonic``,
one clock for every process on Linux) and what it shows: the table's cursor row, the filter the
table was built with, and which run the side panels show. That state is read in the same
synchronous stretch as the frame's rendering, so it is what the frame shows. A key's latency runs
from just before its bytes are written to the terminal to the end of the first frame showing
its effect, the wait for Textual's update timer included (paced at ``jarvis_tui.FRAME_RATE``,
240 a second; ``BENCH_FPS=60`` runs the console at Textual's default, to compare), as for an
operator:

- ``down``: the first frame whose cursor is on the expected row or beyond (a frame that shows
  two keys' moves answers both); also given apart for the keys landing on the running runs (the
  top rows), whose panels carry a live stream, and for the rest;
- the selected run's panels: the first frame where, as well, the panels show the selected run
  (this includes the thread worker's store read);
- a filter keystroke (``/``, then typing three words and erasing each; erasing the last letter
  shows every run again): the first frame whose table was built for the text it made.

Also recorded, to find where time goes: each screen update with its duration and whether it
needed a full layout, every garbage collection with its generation and duration, each message
a widget took SPAN_MS or more to handle, and when each key reached its handler. For the
slowest keys the report lists what of these fell between the press and the paint.

Per-poll cost against the naive approach, measured in this process with the writer running:
a poll every 0.25 s, first `StoreFeed.read(since)` (the journal since the last seq, re-reading
only the runs it names), then re-reading the whole run list (`table_rows(store)` +
`state_counts(store)`), each with its own connection as the console opens one per read. Store
side only: a naive console would also re-apply every row to the table on every poll.

First paint: the real command, ``jarvis tui --workspace DIR --no-host``, under a pseudo-terminal
as above: the time from spawning it until its output holds the header's "need a human", and
(with runs) until it holds the newest run's id, the table's top row. Median and max of
``--repeats`` starts, for an empty (already created) workspace and for the full one. The
project's modules are byte-compiled first, as installing the package or its first run does
(where ``PYTHONDONTWRITEBYTECODE`` is set, every start would compile them again).

Idle CPU: the console refreshes every age cell once a minute; a 60 s window holds one such
refresh, so the figure is the long-run average.

``--profile FILE`` runs the console under cProfile (its main thread: the event loop, where keys,
store changes and frames are handled), prints where the time went and which widgets asked for a
layout or recompose, by call site. Profiling slows the console: take figures from a run without.

The helper modes ``console`` and ``write`` are the console's and the writer's processes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.contracts.completion import GATES  # noqa: E402
from core.run_views import state_counts, table_rows  # noqa: E402
from core.store.api import iso  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.processes import PtyProcess  # noqa: E402

SAMPLE: dict[str, Any] = json.loads(
    (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
)
RUNNING = 50
QUEUED = 30
LANES = tuple(f"jarvis-worker-{i}" for i in range(1, 9))
TASKS = ("fix", "feature", "refactor", "test", "docs")
COLS, ROWS = 160, 48
POLL = 0.25
KEY_RATE = 10.0
#: Messages handled in at least this many ms are recorded, to explain the slowest keys.
SPAN_MS = 2.0
#: The slowest keys of each kind whose wait is broken down in the report.
SLOW_KEYS = 4
DOWN = b"\x1b[B"
BACKSPACE = b"\x7f"
ENTER = b"\r"
FILTER_WORDS = ("failed", "worker-7", "run-005")
#: Targets from the console issue.
TARGET_P99_MS = 50.0
TARGET_LOAD_CPU = 25.0
TARGET_RSS_MB = 250.0
TARGET_IDLE_CPU = 2.0
TARGET_FIRST_PAINT_S = 1.0


def run_id(i: int) -> str:
    # Short enough for the table's 18-column run cell: the first-paint probe looks for it.
    return f"run-{i:05d}"


def stamp(seconds: float) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


# -- the store ------------------------------------------------------------------------------------


def fill(db: Path, count: int) -> dict[str, int]:
    """``count`` runs with a realistic history, inserted in one transaction; rows per table.

    Run ``count - 1`` is the newest (the table's top row under the default sort, newest first).
    The newest ``RUNNING`` runs are running, the next ``QUEUED`` queued, the rest finished or
    waiting on an operator.
    """
    store = SqliteStore(db)
    rng = random.Random(17)
    now = time.time()
    spacing = 90.0
    names = ("done", "failed", "failed_contract", "review_requested")
    weights = (78, 7, 6, 9)
    fingerprints = [f"fp-{rng.getrandbits(64):016x}" for _ in range(40)]
    runs: list[tuple[Any, ...]] = []
    journal: list[tuple[str, str, str, str, str]] = []
    audit: list[tuple[Any, ...]] = []
    gates: list[tuple[Any, ...]] = []
    failures: list[tuple[Any, ...]] = []
    steers: list[tuple[Any, ...]] = []
    progress: list[tuple[Any, ...]] = []
    for i in range(count):
        rid = run_id(i)
        age = count - i  # the newest run has the smallest age
        if age <= RUNNING:
            state = "running"
        elif age <= RUNNING + QUEUED:
            state = "queued"
        else:
            state = rng.choices(names, weights)[0]
        created = now - age * spacing - 60
        started = created + rng.uniform(1, 30)
        updated = (
            now - rng.uniform(5, 60) if state == "running" else created + rng.uniform(60, 3000)
        )
        lane = LANES[i % len(LANES)]
        task = TASKS[i % len(TASKS)]
        doc = dict(SAMPLE, run_id=rid, request_id=f"req-{i:08x}", task_type=task)
        finished = state in ("done", "failed", "failed_contract")
        retries = rng.choices((0, 1, 2), (85, 11, 4))[0] if state != "queued" else 0
        reason = {
            "failed": "the worker exited with status 1",
            "failed_contract": "gates failed: test_result_and_risk",
        }.get(state)
        summary = {
            "running": "editing tests/test_retry.py",
            "queued": None,
        }.get(state, "all tests pass")
        steps = {"queued": ["queued"], "running": ["queued", "running"]}.get(
            state, ["queued", "running", state]
        )
        if state == "done":
            steps = ["queued", "running", "review_requested", "done"]
        runs.append((
            rid, lane, "main", task, doc["request_id"], doc["request_id"], state, reason,
            retries, 1 + len(steps), json.dumps(doc, sort_keys=True), doc["repo"],
            doc["branch"], doc["context_intent"],
            f"jarvis/{rid}" if state != "queued" else None,
            f"{rng.getrandbits(160):040x}" if state in ("done", "review_requested") else None,
            f"https://github.com/{doc['repo']}/pull/{i}" if state == "done" else None,
            summary, stamp(updated) if summary else None, 0,
            stamp(created), stamp(updated), stamp(started) if state != "queued" else None,
            stamp(updated) if finished else None,
        ))  # fmt: skip
        at = created
        journal.append((rid, "created", json.dumps({"state": "queued"}), "main", stamp(at)))
        for before, after in zip(steps, steps[1:], strict=False):
            at += rng.uniform(1, 600)
            move = {"action": "move", "from": before, "to": after, "reason": None}
            journal.append((rid, "transition", json.dumps(move), "host", stamp(at)))
            audit.append((rid, "host", "move", before, after, None, stamp(at)))
        if state in ("done", "failed", "failed_contract", "review_requested"):
            for seq in range(1, 6):
                text = f"step {seq}: editing engine/retry.py"
                progress.append((rid, retries + 1, seq, stamp(started + seq), "edit", text,
                                 None, stamp(started + seq)))  # fmt: skip
                step = {"attempt": retries + 1, "seq": seq, "phase": "edit", "summary": text,
                        "tool_used": None, "timestamp": stamp(started + seq)}  # fmt: skip
                journal.append((rid, "progress", json.dumps(step), lane, stamp(started + seq)))
        if state in ("done", "failed_contract", "review_requested"):
            for gate in GATES:
                passed = not (state == "failed_contract" and gate == "test_result_and_risk")
                gates.append((rid, retries + 1, gate, int(passed), "ok" if passed else "missing",
                              stamp(updated)))  # fmt: skip
        if state in ("failed", "failed_contract"):
            failures.append((rid, retries + 1, "worker", "crash", "run", "",
                             "the worker exited with status 1", rng.choice(fingerprints),
                             stamp(updated)))  # fmt: skip
        if rng.random() < 0.1 and state != "queued":
            status = rng.choices(("acked", "expired", "pending"), (85, 10, 5))[0]
            steers.append((f"steer-{i:06d}", rid, "run only the unit tests", "night-operator",
                           status, stamp(started + 10)))  # fmt: skip
    journal.sort(key=lambda entry: entry[4])  # in time order, as it was written
    with store.transaction():
        conn = store.db.conn
        conn.executemany(
            "INSERT INTO runs (run_id, lane, source_lane, task_type, request_id, "
            "idempotency_key, state, state_reason, retry_count, version, dispatch_json, "
            "dispatch_repo, dispatch_branch, context_intent, branch_name, commit_sha, pr_url, "
            "last_progress_summary, last_progress_at, steer_count, created_at, updated_at, "
            "started_at, finished_at) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            runs,
        )
        conn.executemany(
            "INSERT INTO journal (run_id, kind, payload, actor, at) VALUES (?, ?, ?, ?, ?)",
            journal,
        )
        conn.executemany(
            "INSERT INTO audit (run_id, actor, action, from_state, to_state, reason, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            audit,
        )
        conn.executemany(
            "INSERT INTO progress_events (run_id, attempt, seq, timestamp, phase, summary, "
            "tool_used, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            progress,
        )
        conn.executemany(
            "INSERT INTO gate_results (run_id, attempt, name, passed, detail, evaluated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            gates,
        )
        conn.executemany(
            "INSERT INTO failures (run_id, attempt, error_class, error_code, step_id, url, "
            "message, fingerprint, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            failures,
        )
        conn.executemany(
            "INSERT INTO steering_events (steer_id, run_id, message, operator, status, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            steers,
        )
    store.close()
    return {
        "runs": len(runs), "journal": len(journal), "gate_results": len(gates),
        "progress_events": len(progress), "failures": len(failures), "steers": len(steers),
    }  # fmt: skip


def running_ids(db: Path) -> list[str]:
    store = SqliteStore(db, migrate=False)
    try:
        rows = store.rows("SELECT run_id FROM runs WHERE state = 'running' ORDER BY run_id")
        return [row["run_id"] for row in rows]
    finally:
        store.close()


# -- the writer process (the host's place) --------------------------------------------------------


def mode_write(db: str, rate: float, out: str) -> None:
    """Progress events at ``rate`` per second across the running runs until SIGTERM."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    store = SqliteStore(db, migrate=False)
    ids = running_ids(Path(db))
    seqs = dict.fromkeys(ids, 100)
    written = 0
    start = time.monotonic()
    while not stop.is_set():
        rid = ids[written % len(ids)]
        seqs[rid] += 1
        seq = seqs[rid]
        summary = f"step {seq}: editing engine/retry.py, {written % 97} tests to go"
        with store.transaction() as tx:
            tx.execute(
                "INSERT OR IGNORE INTO progress_events (run_id, attempt, seq, timestamp, phase, "
                "summary, tool_used, ingested_at) VALUES (?, 1, ?, ?, 'edit', ?, 'editor', ?)",
                [rid, seq, tx.now, summary, tx.now],
            )
            tx.touch_run(
                rid,
                changes={"last_progress_summary": summary, "last_progress_at": tx.now},
                kind="progress",
                payload={
                    "attempt": 1,
                    "seq": seq,
                    "phase": "edit",
                    "summary": summary,
                    "tool_used": "editor",
                    "timestamp": tx.now,
                },  # fmt: skip
                actor="jarvis-worker-1",
            )
        written += 1
        pause = start + written / rate - time.monotonic()
        if pause > 0:
            stop.wait(pause)
    elapsed = time.monotonic() - start
    store.close()
    Path(out).write_text(json.dumps({"written": written, "seconds": elapsed}))


# -- the console process --------------------------------------------------------------------------


def mode_console(db: str, out: str, profile: str) -> None:
    """The real console under the terminal it was given, recording what each frame shows.

    Also recorded, for finding where time goes: each screen update (Textual's 60 fps update
    timer firing with work to do) with its duration and whether it needed a full layout, every
    garbage collection, and the minute's age refresh. With ``profile``: cProfile of the main
    thread, and which widgets asked for a layout (or recompose), by call site.
    """
    import asyncio
    import traceback
    from collections import Counter

    import jarvis_tui  # noqa: F401 - first, as the CLI does: it sets Textual's frame rate

    if os.environ.get("BENCH_FPS"):  # the frame rate to compare against (e.g. Textual's 60)
        os.environ["TEXTUAL_FPS"] = os.environ["BENCH_FPS"]

    from rich.console import RenderableType
    from textual.message_pump import MessagePump
    from textual.screen import Screen
    from textual.widget import Widget

    from jarvis_tui.app import JarvisApp
    from jarvis_tui.screens import main_screen
    from jarvis_tui.widgets.run_table import RunTable

    frames: list[tuple[float, int, str, str | None, str | None]] = []
    updates: list[tuple[float, str, float]] = []  # (end, "layout" | "scroll" | "partial", s)
    ages: list[tuple[float, float]] = []
    pauses: list[tuple[float, int, float]] = []  # (end, generation, seconds) of each collection
    layouts: Counter[str] = Counter()

    class TimedApp(JarvisApp):
        table: RunTable | None = None

        def on_mount(self) -> None:
            asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, self.exit)

        def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
            painted = renderable is not None and not self._batch_count
            super()._display(screen, renderable)
            if not painted:
                return
            main: Any = self.screen_stack[0]
            if self.table is None:
                self.table = main.query_one(RunTable)
            view = getattr(main, "view", None)
            frames.append((
                time.monotonic(),
                self.table.cursor_row,
                # The filter the table's lines were read for: none while the view's page is on
                # its way (the lines are the old view's).
                None if main.model.view_pending else main.model.view.text,
                view.run_id if view is not None else None,
                self.table.selected_run_id,
            ))  # fmt: skip

    on_timer_update = Screen._on_timer_update

    def timed_update(self: Any) -> None:
        kind = (
            "layout" if self._layout_required else "scroll" if self._scroll_required else "partial"
        )
        start = time.perf_counter()
        on_timer_update(self)
        updates.append((time.monotonic(), kind, time.perf_counter() - start))

    Screen._on_timer_update = timed_update  # type: ignore[method-assign]

    refresh_ages = main_screen.MainScreen._refresh_ages

    def timed_refresh_ages(self: Any) -> None:
        start = time.thread_time()
        refresh_ages(self)
        ages.append((time.monotonic(), time.thread_time() - start))

    main_screen.MainScreen._refresh_ages = timed_refresh_ages  # type: ignore[method-assign]

    began = [0.0]

    def collecting(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            pauses.append((time.monotonic(), info["generation"], time.perf_counter() - began[0]))

    gc.callbacks.append(collecting)

    # Each message a widget or screen handled for over SPAN_MS, to say what a slow key waited on.
    spans: list[tuple[float, float, str]] = []  # (start, end, "Message → Handler")
    dispatch = MessagePump._dispatch_message

    async def timed_dispatch(self: MessagePump, message: Any) -> Any:
        start = time.monotonic()
        try:
            return await dispatch(self, message)
        finally:
            end = time.monotonic()
            # Keys always: when a key reached its handler tells input lag from a busy loop.
            if end - start >= SPAN_MS / 1000 or type(message).__name__ == "Key":
                spans.append((start, end, f"{type(message).__name__} → {type(self).__name__}"))

    MessagePump._dispatch_message = timed_dispatch  # type: ignore[method-assign]

    if profile:
        refresh = Widget.refresh

        def counted_refresh(self: Widget, *regions: Any, **kwargs: Any) -> Widget:
            if kwargs.get("layout") or kwargs.get("recompose"):
                stack = traceback.extract_stack(limit=5)[:-1]
                sites = " ← ".join(f"{Path(f.filename).stem}.{f.name}" for f in reversed(stack))
                what = "recompose" if kwargs.get("recompose") else "layout"
                layouts[f"{type(self).__name__} {what}: {sites}"] += 1
            return refresh(self, *regions, **kwargs)

        Widget.refresh = counted_refresh  # type: ignore[method-assign, assignment]

    app = TimedApp(Path(db), own_process=True)  # as the CLI runs it
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.runcall(app.run)
        profiler.dump_stats(profile)
    else:
        app.run()
    Path(out).write_text(
        json.dumps(
            {
                "frames": frames,
                "updates": updates,
                "age_refreshes": ages,
                "gc": pauses,
                "spans": spans,
                "layouts": layouts.most_common(15),
            }
        )  # fmt: skip
    )


# -- processes under a pseudo-terminal ------------------------------------------------------------


class Terminal(PtyProcess):
    """A process on a pseudo-terminal of COLS × ROWS, its output read (and timed) on a thread."""

    def __init__(self, argv: list[str]) -> None:
        env = {
            name: value
            for name, value in os.environ.items()
            if name not in ("COLUMNS", "LINES") and not name.startswith("TEXTUAL")
        }
        env.update(TERM="xterm-256color", LANG=env.get("LANG") or "C.UTF-8")
        self.total = 0
        """Bytes the process wrote to the terminal."""
        self._kept = 0
        self._marks: list[tuple[int, float]] = []  # (end offset of a read, when it arrived)
        self._keep = True
        self._lock = threading.Lock()
        super().__init__(argv, cols=COLS, rows=ROWS, env=env, cwd=ROOT, on_chunk=self._arrived)

    def _arrived(self, data: bytes, now: float) -> None:
        # Called before the reader keeps the chunk, so a mark exists for any text seen.
        with self._lock:
            self.total += len(data)
            if self._keep:
                self._kept += len(data)
                self._marks.append((self._kept, now))

    def wait_for_time(self, text: bytes, timeout: float) -> float | None:
        """When the output first held ``text`` (the arrival of the read that completed it)."""
        if not self.reader.wait(lambda data: text in data, timeout):
            return None
        end = self.output.find(text) + len(text)
        with self._lock:
            return next(t for offset, t in self._marks if offset >= end)

    def forget(self) -> None:
        """Stop keeping the output (it is still read and counted)."""
        with self._lock:
            self._keep = False
            self._marks.clear()
        self.reader.forget()

    def press(self, data: bytes) -> float:
        """Write a key's bytes; the time just before."""
        now = time.monotonic()
        self.write(data)
        return now

    def finish(self, how: bytes | int = b"q", timeout: float = 15.0) -> int | None:
        """Ask the process to leave (a key, or a signal), kill it if it does not."""
        if self.proc.poll() is None:
            if isinstance(how, bytes):
                self.write(how)
            else:
                self.proc.send_signal(how)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.close()
        return self.proc.returncode


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of every thread of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS (now) and VmHWM (the peak so far) of ``pid``, in MB."""
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found


class Sampler:
    """The peak RSS of a process, sampled every 0.1 s while armed."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            try:
                self.peak = max(self.peak, memory_mb(self.pid)["VmRSS"])
            except (OSError, KeyError):
                return

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def spread(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": percentile(values, 0.50),
        "p99": percentile(values, 0.99),
        "max": max(values),
        "mean": statistics.fmean(values),
    }


# -- 1. first paint -------------------------------------------------------------------------------


def tui_command() -> tuple[list[str], bool]:
    """The installed ``jarvis tui`` (else ``python -m jarvis_cli tui``), and whether it has
    ``--no-host``."""
    jarvis = Path(sys.executable).parent / "jarvis"
    command = (
        [str(jarvis), "tui"] if jarvis.exists() else [sys.executable, "-m", "jarvis_cli", "tui"]
    )
    usage = subprocess.run([*command, "--help"], cwd=ROOT, capture_output=True, text=True)
    no_host = "--no-host" in usage.stdout
    return (command + ["--no-host"] if no_host else command), no_host


def first_paint(
    command: list[str], workspace: Path, top: str | None, repeats: int
) -> dict[str, Any]:
    """Seconds from spawning the command to the header on screen, and to the table's top row;
    and the CPU other processes used meanwhile (% of a core)."""
    header: list[float] = []
    table: list[float] = []
    others = Others()
    for _ in range(repeats):
        term = Terminal([*command, "--workspace", str(workspace)])
        seen = term.wait_for_time(b"need a human", 30)
        if seen is None:
            term.finish(signal.SIGKILL)
            raise SystemExit(f"no header within 30 s; the terminal showed:\n{term.tail()}")
        header.append(seen - term.started)
        if top is not None:
            row = term.wait_for_time(top.encode(), 60)
            if row is None:
                term.finish(signal.SIGKILL)
                raise SystemExit(f"{top} never appeared; the terminal showed:\n{term.tail()}")
            table.append(row - term.started)
        term.finish()
        time.sleep(0.3)
    return {"header": header, "table": table, "others_pct": others.close()}


# -- 2. per-poll cost: the journal feed against re-reading every run ------------------------------


class Writer:
    """The writer process, writing progress until stopped."""

    def __init__(self, db: Path, rate: float, workdir: Path) -> None:
        self.out = workdir / f"writer-{time.monotonic_ns()}.json"
        me = [sys.executable, str(Path(__file__).resolve())]
        self.proc = subprocess.Popen([*me, "write", str(db), str(rate), str(self.out)], cwd=ROOT)

    def stop(self) -> float:
        """Stop it; the rate it achieved."""
        self.proc.send_signal(signal.SIGTERM)
        if self.proc.wait(30) != 0:
            raise SystemExit("the writer failed")
        done = json.loads(self.out.read_text())
        return float(done["written"] / done["seconds"])


def per_poll(db: Path, seconds: float) -> dict[str, Any]:
    """Each way of polling on its own for ``seconds``, one poll every POLL seconds."""
    from jarvis_tui.feed import StoreFeed
    from jarvis_tui.run_model import RunModel

    feed = StoreFeed(db)
    first = feed.read(None, RunModel().ask())
    assert first is not None
    since = first.last_seq
    ours: list[float] = []
    changed: list[int] = []
    entries: list[int] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(POLL)
        start = time.perf_counter()
        read = feed.read(since, RunModel().ask())
        ours.append((time.perf_counter() - start) * 1000)
        if read is not None:
            since = read.last_seq
            changed.append(len(read.rows) + (len(read.page.rows) if read.page else 0))
            entries.append(len(read.journal))
    naive: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(POLL)
        start = time.perf_counter()
        store = SqliteStore(db, migrate=False)
        try:
            rows = table_rows(store)
            state_counts(store)
        finally:
            store.close()
        naive.append((time.perf_counter() - start) * 1000)
    return {
        "ours": spread(ours),
        "naive": spread(naive),
        "runs_per_read": statistics.fmean(changed) if changed else 0.0,
        "entries_per_read": statistics.fmean(entries) if entries else 0.0,
        "naive_rows": len(rows),
    }


# -- 3. the live console --------------------------------------------------------------------------

#: (time, cursor row, the filter the table was built with, the panels' run, the selected run)
Frame = tuple[float, int, str, "str | None", "str | None"]


def paced(term: Terminal, keys: list[bytes], rate: float) -> list[float]:
    """Write ``keys`` at ``rate`` per second; when each was written."""
    times: list[float] = []
    start = time.monotonic()
    for i, key in enumerate(keys):
        pause = start + i / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        times.append(term.press(key))
    return times


def progress_latencies(
    frames: list[Frame], pressed: list[float], reached: Any
) -> list[float | None]:
    """For each key, ms from its press to the first frame showing its effect.

    ``reached(frame, i)`` says whether ``frame`` shows the effect of key ``i`` (or of a later
    key, which implies it). Keys are walked in order, frames in time.
    """
    out: list[float | None] = []
    f = 0
    for i, t0 in enumerate(pressed):
        while f < len(frames) and frames[f][0] < t0:
            f += 1
        g = f
        while g < len(frames) and not reached(frames[g], i):
            g += 1
        out.append((frames[g][0] - t0) * 1000 if g < len(frames) else None)
    return out


def filter_keys() -> tuple[list[bytes], list[str]]:
    """Keystrokes typing each of FILTER_WORDS and erasing it, and the filter after each."""
    keys: list[bytes] = []
    texts: list[str] = []
    for word in FILTER_WORDS:
        for n in range(1, len(word) + 1):
            keys.append(word[n - 1].encode())
            texts.append(word[:n])
        for n in range(len(word) - 1, -1, -1):
            keys.append(BACKSPACE)
            texts.append(word[:n])
    return keys, texts


def filter_latencies(
    frames: list[Frame], pressed: list[float], texts: list[str], *, keep_missing: bool = False
) -> list[Any]:
    """ms from each keystroke to the first frame whose table was built for the filter it made.

    A frame showing a later keystroke's filter also answers every earlier one pressed before it
    (keystrokes typed faster than the console rebuilds are answered together).
    """
    out: list[float | None] = [None] * len(texts)
    begin = pressed[0]
    j = 0
    current = next((f[2] for f in reversed(frames) if f[0] < begin), "")
    for t, _row, text, _panels, _selected in frames:
        if t < begin or j >= len(texts):
            continue
        if text == current:
            continue
        try:
            k = texts.index(text, j)
        except ValueError:
            continue
        for i in range(j, k + 1):
            if pressed[i] <= t:
                out[i] = (t - pressed[i]) * 1000
        current = text
        j = k + 1
    return out if keep_missing else [value for value in out if value is not None]


def machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (every core), from /proc/stat."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields)
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class Others:
    """CPU that processes other than this one and its finished children used, meanwhile."""

    def __init__(self) -> None:
        self.t0, self.busy0, self.ours0 = time.monotonic(), machine_busy(), self._ours()

    @staticmethod
    def _ours() -> float:
        times = os.times()
        return times.user + times.system + times.children_user + times.children_system

    def close(self) -> float:
        wall = time.monotonic() - self.t0
        others = (machine_busy() - self.busy0) - (self._ours() - self.ours0)
        return max(0.0, 100 * others / wall)


class Window:
    """CPU over a stretch of time: the console's, and everyone else's on the machine."""

    def __init__(self, pid: int, ours: list[int]) -> None:
        self.pid, self.ours = pid, ours
        self.t0, self.cpu0, self.busy0, self.mine0 = self._now()

    def _now(self) -> tuple[float, float, float, float]:
        busy = machine_busy()
        mine = 0.0
        for pid in self.ours:
            try:
                mine += cpu_seconds(pid)
            except OSError:
                pass
        return time.monotonic(), cpu_seconds(self.pid), busy, mine

    def close(self) -> dict[str, float]:
        t1, cpu1, busy1, mine1 = self._now()
        wall = t1 - self.t0
        console = cpu1 - self.cpu0
        others = (busy1 - self.busy0) - console - (mine1 - self.mine0)
        return {
            "t0": self.t0,
            "t1": t1,
            "seconds": wall,
            "cpu_pct": 100 * console / wall,
            "others_pct": max(0.0, 100 * others / wall),
        }


def bench_console(
    db: Path,
    top: str,
    rate: float,
    seconds: float,
    quiet_load: float,
    idle: float,
    workdir: Path,
    profile: str,
) -> dict[str, Any]:
    out = workdir / "frames.json"
    me = [sys.executable, str(Path(__file__).resolve())]
    term = Terminal([*me, "console", str(db), str(out), profile])
    pid = term.proc.pid
    if term.wait_for_time(top.encode(), 120) is None:
        term.finish(signal.SIGKILL)
        raise SystemExit(f"the console never showed {top}; the terminal showed:\n{term.tail()}")
    term.forget()
    time.sleep(3)  # the panels' first read, the footer
    result: dict[str, Any] = {"rss_loaded_mb": memory_mb(pid)["VmRSS"]}

    writer = Writer(db, rate, workdir)
    ours = [os.getpid(), writer.proc.pid]
    time.sleep(3)  # the console catches up with the writer's first seconds
    sampler = Sampler(pid)
    window = Window(pid, ours)
    time.sleep(quiet_load)
    result["quiet"] = window.close()

    window, bytes0 = Window(pid, ours), term.total
    downs = paced(term, [DOWN] * round(seconds * KEY_RATE), KEY_RATE)
    time.sleep(1 / KEY_RATE)
    result["load"] = load = window.close()
    load["out_kib_s"] = (term.total - bytes0) / 1024 / load["seconds"]

    term.press(b"/")
    time.sleep(0.5)
    keys, texts = filter_keys()
    typed = paced(term, keys, KEY_RATE)
    time.sleep(2)
    term.press(ENTER)
    result["rss_load_peak_mb"] = sampler.stop()
    result["writer_rate"] = writer.stop()

    time.sleep(3)  # the last reads land
    window = Window(pid, [os.getpid()])
    time.sleep(idle)
    result["idle"] = window.close()
    memory = memory_mb(pid)
    result["rss_end_mb"], result["rss_hwm_mb"] = memory["VmRSS"], memory["VmHWM"]
    if term.finish(signal.SIGUSR1, timeout=60 if profile else 15) != 0:
        raise SystemExit(f"the console failed; the terminal showed:\n{term.tail()}")

    recorded = json.loads(out.read_text())
    frames: list[Frame] = [tuple(frame) for frame in recorded["frames"]]
    start_row = next((f[1] for f in reversed(frames) if f[0] < downs[0]), 0)
    moved = progress_latencies(frames, downs, lambda f, i: f[1] >= start_row + i + 1)
    panels = progress_latencies(
        frames, downs, lambda f, i: f[1] >= start_row + i + 1 and f[3] is not None and f[3] == f[4]
    )
    result["down"] = [v for v in moved if v is not None]
    result["down_missing"] = moved.count(None)
    # Newest first: the top RUNNING rows are the running runs, whose panels show a live stream.
    onto = [(start_row + i + 1 < RUNNING, v) for i, v in enumerate(moved) if v is not None]
    result["down_running"] = [v for running, v in onto if running]
    result["down_other"] = [v for running, v in onto if not running]
    result["panels"] = [v for v in panels if v is not None]
    result["filter"] = filter_latencies(frames, typed, texts)
    result["filter_keys"] = len(texts)
    for name in ("quiet", "load", "idle"):
        w = result[name]
        inside = [u for u in recorded["updates"] if w["t0"] <= u[0] <= w["t1"]]
        w["updates"] = {
            kind: [u[2] * 1000 for u in inside if u[1] == kind]
            for kind in ("layout", "scroll", "partial")
        }
        w["gc"] = [(g[1], g[2] * 1000) for g in recorded["gc"] if w["t0"] <= g[0] <= w["t1"]]
    result["ages"] = [
        (t - result["idle"]["t0"], cpu * 1000)
        for t, cpu in recorded["age_refreshes"]
        if result["idle"]["t0"] <= t <= result["idle"]["t1"]
    ]
    result["layouts"] = recorded["layouts"]
    result["slow_down"] = slow_keys(downs, moved, recorded)
    typed_ms = filter_latencies(frames, typed, texts, keep_missing=True)
    result["slow_filter"] = slow_keys(typed, typed_ms, recorded)
    return result


def slow_keys(
    pressed: list[float], latencies: list[float | None], recorded: dict[str, Any]
) -> list[str]:
    """The slowest keys, each with what the console's main thread did between its press and
    its paint: messages handled for SPAN_MS or more, screen updates and collections, in ms from
    the press."""
    timed = sorted(
        ((ms, t0) for t0, ms in zip(pressed, latencies, strict=True) if ms is not None),
        reverse=True,
    )[:SLOW_KEYS]
    busy: list[tuple[float, float, str]] = [tuple(span) for span in recorded["spans"]]
    busy += [(end - s, end, f"{kind} update") for end, kind, s in recorded["updates"]]
    busy += [(end - s, end, f"GC gen {gen}") for end, gen, s in recorded["gc"]]
    lines = []
    for ms, t0 in timed:
        t1 = t0 + ms / 1000
        inside = sorted(b for b in busy if b[1] > t0 - 0.05 and b[0] < t1)
        what = ", ".join(
            f"{name} {1000 * (start - t0):+.0f}…{1000 * (end - t0):+.0f}"
            for start, end, name in inside
        )
        lines.append(f"{ms:.0f} ms: {what or 'nothing recorded'}")
    return lines


def describe_window(w: dict[str, Any]) -> str:
    """Screen updates and garbage collections inside a window, per second and per kind."""
    parts = []
    for kind, values in w["updates"].items():
        if values:
            parts.append(
                f"{len(values) / w['seconds']:.1f} {kind} updates/s "
                f"(mean {statistics.fmean(values):.1f} ms, max {max(values):.0f} ms)"
            )
    full = [ms for gen, ms in w["gc"] if gen == 2]
    total = sum(ms for _gen, ms in w["gc"])
    parts.append(
        f"GC {100 * total / 1000 / w['seconds']:.1f}% of the time, {len(full)} full collections"
        + (f" (max {max(full):.0f} ms)" if full else "")
    )
    return "; ".join(parts)


# -- report ---------------------------------------------------------------------------------------


def machine() -> str:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {memory:.0f} GiB, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def source_state() -> str:
    """The commit measured, and whether the console or engine had uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "core", "jarvis_cli", "jarvis_tui", "themes"],
            cwd=ROOT, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
    except OSError:
        return "unknown"
    return f"{head}{' + uncommitted changes to the code' if dirty else ''}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_profile(path: str) -> None:
    import pstats

    print(f"\nprofile of the console's main thread ({path}), by own time:")
    pstats.Stats(path).sort_stats("tottime").print_stats(25)
    print("by cumulative time:")
    pstats.Stats(path).sort_stats("cumulative").print_stats(40)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000, help="runs in the store")
    parser.add_argument("--rate", type=float, default=200.0, help="progress events per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="load window (keys at 10/s)")
    parser.add_argument("--quiet-load", type=float, default=10.0, help="load window, no keys")
    parser.add_argument("--idle", type=float, default=60.0, help="idle window, seconds")
    parser.add_argument("--repeats", type=int, default=7, help="starts per first-paint figure")
    parser.add_argument("--poll-seconds", type=float, default=8.0, help="per-poll window, each")
    parser.add_argument("--profile", default="", help="run the console under cProfile to FILE")
    args = parser.parse_args()

    print(f"machine: {machine()}")
    print(f"source: {source_state()}")
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-") as tmp:
        workdir = Path(tmp)
        empty, full = workdir / "empty", workdir / "full"
        empty.mkdir()
        full.mkdir()
        SqliteStore(empty / "jarvis.db").close()
        db = full / "jarvis.db"
        start = time.perf_counter()
        filled = fill(db, args.runs)
        print(f"store: {filled} (bulk insert {time.perf_counter() - start:.1f} s)")
        top = run_id(args.runs - 1)

        # As an installed console starts: with its modules' bytecode already on disk.
        compileall = [sys.executable, "-m", "compileall", "-q",
                      "core", "jarvis_cli", "jarvis_sim", "jarvis_tui"]  # fmt: skip
        subprocess.run(compileall, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        command, no_host = tui_command()
        shown = " ".join([Path(command[0]).name, *command[1:]])
        note = "" if no_host else " (no --no-host flag: the command may start a host)"
        print(f"first paint: `{shown} --workspace DIR`{note}")
        paint_empty = first_paint(command, empty, None, args.repeats)
        paint_full = first_paint(command, full, top, args.repeats)
        paint_others = max(paint_empty["others_pct"], paint_full["others_pct"])
        for name, values in (
            ("empty workspace, header", paint_empty["header"]),
            (f"{args.runs:,} runs, header", paint_full["header"]),
            (f"{args.runs:,} runs, table's top row", paint_full["table"]),
        ):
            print(f"  {name}: median {statistics.median(values):.3f} s, max {max(values):.3f} s "
                  f"({', '.join(f'{v:.3f}' for v in values)})")  # fmt: skip
        print(f"  other processes meanwhile: {paint_others:.0f}% of a core")

        writer = Writer(db, args.rate, workdir)
        time.sleep(1)
        polls = per_poll(db, args.poll_seconds)
        achieved = writer.stop()
        ours, naive = polls["ours"], polls["naive"]
        print(f"per poll at {achieved:.0f} events/s (writer achieved): StoreFeed.read(since) "
              f"p50 {ours['p50']:.2f} ms, p99 {ours['p99']:.2f} ms ({ours['n']} polls, "
              f"{polls['runs_per_read']:.0f} runs / {polls['entries_per_read']:.0f} entries a read)"
              f"; whole run list ({polls['naive_rows']:,} rows) p50 {naive['p50']:.1f} ms, "
              f"p99 {naive['p99']:.1f} ms ({naive['n']} polls); ratio (p50) "
              f"{naive['p50'] / ours['p50']:.0f}×")  # fmt: skip

        live = bench_console(
            db, top, args.rate, args.seconds, args.quiet_load, args.idle, workdir,
            os.path.abspath(args.profile) if args.profile else "",
        )  # fmt: skip

    quiet, load, idle = live["quiet"], live["load"], live["idle"]
    down, panels, typed = spread(live["down"]), spread(live["panels"]), spread(live["filter"])
    print(
        f"console, {live['writer_rate']:.0f} events/s, no keys ({quiet['seconds']:.1f} s): CPU "
        f"{quiet['cpu_pct']:.1f}% of one core (other processes: {quiet['others_pct']:.0f}%)\n"
        f"  {describe_window(quiet)}"
    )
    print(
        f"console, {live['writer_rate']:.0f} events/s and `down` at {KEY_RATE:.0f}/s "
        f"({load['seconds']:.1f} s): CPU {load['cpu_pct']:.1f}% of one core (other processes: "
        f"{load['others_pct']:.0f}%), {load['out_kib_s']:.0f} KiB/s to the terminal\n"
        f"  {describe_window(load)}"
    )
    print(
        f"  RSS: {live['rss_loaded_mb']:.0f} MB loaded, peak under load "
        f"{live['rss_load_peak_mb']:.0f} MB, lifetime peak (VmHWM) {live['rss_hwm_mb']:.0f} MB"
    )
    print(
        f"  down → cursor painted: p50 {down['p50']:.1f} ms, p99 {down['p99']:.1f} ms, max "
        f"{down['max']:.1f} ms ({down['n']} keys, {live['down_missing']} never painted)"
    )
    for name, values in (("running", live["down_running"]), ("other", live["down_other"])):
        if values:
            part = spread(values)
            print(
                f"    onto {name} runs: p50 {part['p50']:.1f} ms, p99 {part['p99']:.1f} ms "
                f"({part['n']} keys)"
            )
    print(
        f"  down → selected run's panels painted: p50 {panels['p50']:.1f} ms, p99 "
        f"{panels['p99']:.1f} ms, max {panels['max']:.1f} ms ({panels['n']} keys)"
    )
    print(
        f"  filter keystroke → table rebuilt and painted: p50 {typed['p50']:.1f} ms, p99 "
        f"{typed['p99']:.1f} ms, max {typed['max']:.1f} ms ({typed['n']} of "
        f"{live['filter_keys']} keys)"
    )
    for name, lines in (("`down`", live["slow_down"]), ("filter", live["slow_filter"])):
        print(f"  slowest {name} keys, and what the console did meanwhile (ms from the press):")
        for line in lines:
            print(f"    {line}")
    ages = ", ".join(f"at {t:.0f} s ({ms:.1f} ms)" for t, ms in live["ages"]) or "none"
    print(
        f"idle, no writes, no keys ({idle['seconds']:.1f} s): CPU {idle['cpu_pct']:.2f}% of one "
        f"core (other processes: {idle['others_pct']:.0f}%); age refreshes: {ages}\n"
        f"  {describe_window(idle)}"
    )
    windows = (("first paint", {"others_pct": paint_others}), ("load", quiet),
               ("load + keys", load), ("idle", idle))  # fmt: skip
    busy = [name for name, w in windows if w["others_pct"] > 10]
    if busy:
        print(f"WARNING: other processes used over 10% of a core during: {', '.join(busy)}; "
              "the latencies, and less so the CPU figures, are not reliable")  # fmt: skip
    if args.profile:
        print("\nwho asked for a layout or recompose (whole run), by call site:")
        for site, count in live["layouts"]:
            print(f"  {count:6d}  {site}")
        print_profile(os.path.abspath(args.profile))

    paint_e = statistics.median(paint_empty["header"])
    paint_f = statistics.median(paint_full["header"])
    paint_t = statistics.median(paint_full["table"])
    n = f"{args.runs:,} runs"
    rows = [
        ("`down` → repaint, p99", TARGET_P99_MS, down["p99"], "ms"),
        ("filter keystroke → repaint, p99", TARGET_P99_MS, typed["p99"], "ms"),
        (f"CPU, {args.rate:.0f} events/s + keys", TARGET_LOAD_CPU, load["cpu_pct"], "%"),
        (f"CPU, {args.rate:.0f} events/s, no keys", TARGET_LOAD_CPU, quiet["cpu_pct"], "%"),
        ("RSS under load, peak", TARGET_RSS_MB, live["rss_load_peak_mb"], "MB"),
        (f"CPU idle ({idle['seconds']:.0f} s)", TARGET_IDLE_CPU, idle["cpu_pct"], "%"),
        ("first paint, empty workspace, median", TARGET_FIRST_PAINT_S, paint_e, "s"),
        (f"first paint, {n}, median", TARGET_FIRST_PAINT_S, paint_f, "s"),
    ]
    print("\n| figure | target | measured | target ÷ measured | |\n|---|---:|---:|---:|---|")
    for name, target, measured, unit in rows:
        digits = 2 if unit in ("s", "%") and measured < 10 else 1 if unit != "MB" else 0
        sep = "" if unit == "%" else " "
        print(
            f"| {name} | ≤ {target:g}{sep}{unit} | {measured:.{digits}f}{sep}{unit} | "
            f"{target / max(measured, 1e-9):.2f}× | {verdict(measured <= target)} |"
        )
    print("\n| figure | value |\n|---|---:|")
    print(f"| `down` → repaint, p50 | {down['p50']:.1f} ms |")
    print(f"| `down` → selected run's panels painted, p50 / p99 | {panels['p50']:.0f} ms / "
          f"{panels['p99']:.0f} ms |")  # fmt: skip
    print(f"| filter keystroke → repaint, p50 | {typed['p50']:.1f} ms |")
    print(f"| first paint, {n}, max of {args.repeats} | {max(paint_full['header']):.2f} s |")
    print(f"| table's top row painted, {n}, median / max | {paint_t:.2f} s / "
          f"{max(paint_full['table']):.2f} s |")  # fmt: skip
    print("\n| per poll, store side | ours: journal feed | naive: whole run list | ratio |")
    print("|---|---:|---:|---:|")
    for q in ("p50", "p99"):
        print(f"| {q} | {ours[q]:.2f} ms | {naive[q]:.0f} ms | {naive[q] / ours[q]:.0f}× |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "write":
        mode_write(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) > 1 and sys.argv[1] == "console":
        mode_console(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
    else:
        main()
