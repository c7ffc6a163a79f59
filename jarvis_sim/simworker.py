"""The simulated worker: ``python -m jarvis_sim.simworker`` speaks the worker side of docs/ipc.md.

It lets the host and the console be exercised end to end without a real coding agent. Its
behaviour comes from a ``sim:<scenario>`` token in the dispatch's ``input``:

- ``ok`` (default): 4-8 progress events, then a completion that passes every gate;
- ``slow``: like ``ok`` with 30-40 events, so there is time to steer it;
- ``fail_contract``: progress, then a completion that breaks a gate;
- ``crash``: 2-4 events, a traceback on stderr, exit 1 without a completion;
- ``hang``: one event, then silence until it is killed;
- ``verify_fail``: like ``ok``, but ``files_changed`` leaves out what the task asked for.

When its checkout (``JARVIS_CHECKOUT``) is a git repository, it really edits the files and
commits them on its branch, and its completion cites that commit. Some scenarios then lie, for
the git gates to catch: ``lie_files`` claims a file it did not touch, ``lie_unclaimed`` changes
a file it does not claim, ``lie_commit`` cites a commit that does not exist, ``stale_commit``
cites its first commit after making a second, ``uncommitted`` leaves a change uncommitted, and
``leak_secret`` commits an access key.

Environment (see docs/ipc.md; read by `core.ipc.worker_env`): ``JARVIS_RUN_ID``,
``JARVIS_LANE``, ``JARVIS_DISPATCH``, ``JARVIS_PROGRESS_DIR``, ``JARVIS_STEER_FILE`` and
``JARVIS_ACK_FILE`` are required; ``JARVIS_ATTEMPT`` defaults to 1; ``JARVIS_IPC_DIR`` is accepted
but not needed, since every path the worker uses comes in its own variable.
``JARVIS_SIM_INTERVAL_MS=min,max`` overrides the 100-500 ms interval between events,
``JARVIS_SIM_EVENTS=N`` how many events a scenario other than ``crash`` and ``hang`` emits (at
least the few its ending needs), and ``JARVIS_SIM_SEED`` makes the run reproducible.

Exit codes: 0 after a completion, 1 for a crash (or an unwritable IPC file), 2 for a bad
environment, 128 + the signal number when stopped by SIGTERM (143) or SIGINT (130).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from types import FrameType
from typing import Any, TextIO

from core.ipc.worker_env import (
    OUTPUT_END,
    OUTPUT_START,
    ConfigError,
    WorkerConfig,
    iso_ms,
    load_worker_config,
    write_json_atomic,
)
from core.repos.git import GitError
from jarvis_sim.sim_task import SCENARIOS, Step, clip, read_task, scenario_of
from jarvis_sim.sim_work import (
    Outcome,
    build_completion,
    build_plan,
    commit_work,
    repository_of,
    write_checkout,
)

DEFAULT_INTERVAL_MS = (100, 500)

EXIT_OK = 0
EXIT_CRASH = 1
EXIT_USAGE = 2

#: How often the worker looks at its steer file and its stop flag. The protocol promises 100 ms;
#: half that leaves room for a slow file system without missing the promise.
POLL_SECONDS = 0.05
#: Steer files bigger than the host's own IPC size cap are not steers; ignore them.
MAX_STEER_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Config(WorkerConfig):
    """Everything the simulated worker takes from its environment: the protocol's, then its own."""

    interval_ms: tuple[int, int] = DEFAULT_INTERVAL_MS
    seed: str | None = None
    events: int | None = None
    """How many progress events to emit (``JARVIS_SIM_EVENTS``); else the scenario's own."""


def _parse_interval(raw: str) -> tuple[int, int]:
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) == 1:
        parts *= 2  # "50" means exactly 50 ms every time
    try:
        low, high = (int(p) for p in parts)
    except ValueError:
        raise ConfigError(
            f"JARVIS_SIM_INTERVAL_MS must be 'min,max' in milliseconds, not {raw!r}"
        ) from None
    if low < 0 or high < low:
        raise ConfigError(f"JARVIS_SIM_INTERVAL_MS needs 0 <= min <= max, not {raw!r}")
    return low, high


def load_config(env: Mapping[str, str]) -> Config:
    """Read and check the worker's environment, ``JARVIS_SIM_*`` included.

    Raises:
        ConfigError: a required variable is missing or blank, or a value is invalid.
    """
    base = load_worker_config(env)
    interval_raw = env.get("JARVIS_SIM_INTERVAL_MS", "").strip()
    seed = env.get("JARVIS_SIM_SEED", "").strip() or None
    raw_events = env.get("JARVIS_SIM_EVENTS", "").strip()
    if raw_events and (not raw_events.isdigit() or int(raw_events) < 1):
        raise ConfigError(f"JARVIS_SIM_EVENTS must be a positive integer, not {raw_events!r}")
    protocol = {f.name: getattr(base, f.name) for f in fields(WorkerConfig)}
    return Config(
        **protocol,
        interval_ms=_parse_interval(interval_raw) if interval_raw else DEFAULT_INTERVAL_MS,
        seed=seed,
        events=int(raw_events) if raw_events else None,
    )


class _StopFlag:
    """Set from a signal handler; the worker checks it between short sleeps.

    A flag, not a `threading.Event`: setting an Event takes a lock, which a handler running in
    the main thread could find already held by that same thread, and deadlock.
    """

    def __init__(self) -> None:
        self.signum: int | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        del frame
        self.signum = signum


class Worker:
    """Runs one scenario: progress events, steering, and the completion."""

    def __init__(
        self,
        config: Config,
        rng: random.Random,
        stop: _StopFlag,
        out: TextIO,
        err: TextIO,
    ) -> None:
        self.config = config
        self.rng = rng
        self.stop = stop
        self.out = out
        self.err = err
        self.seq = 0
        self.last_ms = 0
        self.acked: set[str] = set()
        self.pending: deque[tuple[str, str]] = deque()

    def say(self, line: str) -> None:
        """A log line on stdout, flushed so the host sees output as it happens."""
        # A host that went away must not turn the simulator's exit into a traceback.
        with contextlib.suppress(OSError, ValueError):
            print(line, file=self.out, flush=True)

    def emit(self, step: Step) -> None:
        self.seq += 1
        # Names must sort in event order: never reuse or go back on a millisecond, even if the
        # clock does, so `<ms>-<seq>.json` always increases.
        now_ms = time.time_ns() // 1_000_000
        self.last_ms = max(now_ms, self.last_ms + 1)
        stamp = iso_ms(self.last_ms)
        doc: dict[str, Any] = {
            "kind": "worker_progress",
            "run_id": self.config.run_id,
            "group_folder": self.config.lane,
            "timestamp": stamp,
            "phase": step.phase,
            "summary": clip(step.summary),
            "seq": self.seq,
        }
        if step.tool_used:
            doc["tool_used"] = step.tool_used
        write_json_atomic(self.config.progress_dir / f"{self.last_ms}-{self.seq}.json", doc)
        self.say(f"[{stamp}] #{self.seq} {step.phase}: {doc['summary']}")

    def poll_steer(self) -> None:
        """Acknowledge a new steer, once; anything unreadable is left for the next poll."""
        try:
            raw = self.config.steer_file.read_bytes()
        except OSError:
            return  # usually absent; anything else may clear up by the next poll
        if len(raw) > MAX_STEER_BYTES:
            return
        try:
            doc = json.loads(raw)
        except ValueError:
            return  # half-written by a careless writer: it will parse once complete
        if not isinstance(doc, dict):
            return
        steer_id = doc.get("steer_id")
        if not isinstance(steer_id, str) or not steer_id.strip() or steer_id in self.acked:
            return
        run_id = doc.get("run_id")
        if isinstance(run_id, str) and run_id != self.config.run_id:
            return  # misrouted: acknowledging it would tell the host the wrong run took it in
        message = doc.get("message")
        text = " ".join(message.split()) if isinstance(message, str) else ""
        ack = {"steer_id": steer_id, "acked_at": iso_ms(time.time_ns() // 1_000_000)}
        try:
            self.config.ack_file.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.config.ack_file, ack)
        except OSError as exc:
            self.say(f"steer {steer_id}: cannot write the acknowledgement yet ({exc})")
            return
        self.acked.add(steer_id)
        self.pending.append((steer_id, text))
        self.say(f"steer {steer_id} received: {clip(text, 120)}")

    def wait(self, seconds: float, *, steerable: bool = True) -> bool:
        """Sleep, polling the steer file; False as soon as a stop signal arrived."""
        deadline = time.monotonic() + seconds
        while True:
            if self.stop.signum is not None:
                return False
            if steerable:
                self.poll_steer()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            time.sleep(min(remaining, POLL_SECONDS))

    def interval(self) -> float:
        low, high = self.config.interval_ms
        return self.rng.uniform(low, high) / 1000

    def flush_steers(self) -> None:
        while self.pending:
            steer_id, text = self.pending.popleft()
            self.emit(Step("steering", f"steer {steer_id} acknowledged: {text}"))

    def run(self, scenario: str) -> int:
        task = read_task(self.config.dispatch, self.config.run_id, self.config.criteria)
        outcome = build_completion(self.config.dispatch, task, scenario, self.rng)
        repo = repository_of(os.environ.get("JARVIS_CHECKOUT"))
        if repo is not None and scenario not in ("crash", "hang", "fail_contract"):
            # Real work in a real worktree: the commit comes first, so progress can cite it.
            try:
                lie = commit_work(repo, outcome.completion, task, scenario, self.rng)
            except GitError as exc:
                print(f"simworker: cannot commit in {repo}: {exc}", file=self.err, flush=True)
                return EXIT_CRASH
            if lie:
                outcome = Outcome(outcome.completion, f"{outcome.note}; {lie}")
                outcome.completion["summary"] = f"{task.text[:120]} — {outcome.note}"
        plan, count = build_plan(task, outcome, scenario, self.rng, self.config.events)
        self.say(
            f"simworker: run {self.config.run_id} attempt {self.config.attempt} on "
            f"{self.config.lane}, scenario {scenario}"
        )
        steps = deque(plan[:count])
        if scenario == "hang":
            self.emit(steps[0])
            # Silence: no output, no steering, until a signal ends it.
            while self.wait(3600, steerable=False):
                pass
            return self.stopped()
        first = True
        while steps:
            if not first and not self.wait(self.interval()):
                return self.stopped()
            first = False
            if self.pending:
                # A steer acknowledged since the last event is what the next event is about.
                steer_id, text = self.pending.popleft()
                self.emit(Step("steering", f"steer {steer_id} acknowledged: {text}"))
                continue
            self.emit(steps.popleft())
        if not self.wait(self.interval()):
            return self.stopped()
        self.flush_steers()
        if scenario == "crash":
            self.crash()
            return EXIT_CRASH
        self.say(f"simworker: done, {outcome.note}")
        if repo is None:
            write_checkout(os.environ.get("JARVIS_CHECKOUT"), outcome.completion, task)
        body = json.dumps(outcome.completion, indent=2)
        self.say(f"{OUTPUT_START}\n<completion>\n{body}\n</completion>\n{OUTPUT_END}")
        return EXIT_OK

    def stopped(self) -> int:
        signum = self.stop.signum or signal.SIGTERM
        print(f"simworker: stopped by signal {signum}", file=self.err, flush=True)
        return 128 + int(signum)

    def crash(self) -> None:
        print(
            "Traceback (most recent call last):\n"
            '  File "/workspace/agent/loop.py", line 212, in run_step\n'
            "    result = tool.execute(call)\n"
            '  File "/workspace/agent/tools.py", line 88, in execute\n'
            "    raise ToolProcessError(self.name, code)\n"
            "ToolProcessError: simulated crash: the edit tool exited with code 137",
            file=self.err,
            flush=True,
        )


def _install(stop: _StopFlag) -> list[tuple[int, Any]]:
    """Route SIGTERM and SIGINT to ``stop``; returns what to restore (nothing off the main
    thread, where Python refuses signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return []
    restore: list[tuple[int, Any]] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.signal(signum, stop.handle)
        restore.append((signum, previous if previous is not None else signal.SIG_DFL))
    return restore


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Run the simulated worker; returns its exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m jarvis_sim.simworker",
        description="A simulated coding-agent worker speaking the Jarvis IPC protocol. "
        "Configured by JARVIS_* environment variables; see docs/ipc.md.",
    )
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        config = load_config(os.environ if env is None else env)
    except ConfigError as exc:
        print(f"simworker: {exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    scenario, unknown = scenario_of(config.dispatch)
    if unknown is not None:
        print(
            f"simworker: unknown scenario 'sim:{unknown}'; running '{scenario}' "
            f"(known: {', '.join(SCENARIOS)})",
            file=sys.stderr,
            flush=True,
        )
    stop = _StopFlag()
    restore = _install(stop)
    try:
        config.progress_dir.mkdir(parents=True, exist_ok=True)
        worker = Worker(config, random.Random(config.seed), stop, sys.stdout, sys.stderr)
        return worker.run(scenario)
    except OSError as exc:
        print(f"simworker: cannot write to the IPC folder: {exc}", file=sys.stderr, flush=True)
        return EXIT_CRASH
    finally:
        for signum, previous in restore:
            signal.signal(signum, previous)


if __name__ == "__main__":
    sys.exit(main())
