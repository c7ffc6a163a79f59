"""The host's CPU while it supervises 20 coding agents streaming at once, against 20 simulated
workers writing as many events, measured in the same run.

Run on demand (not part of the test suite); about a minute with the defaults, 20 s with --quick:

    .venv/bin/python tests/bench/bench_host_agents.py [--runs 20] [--events 200]
        [--interval-ms 100] [--rounds 1] [--quick]

Agents: ``--runs`` runs at once on one lane (``[workers] concurrency``), each worked by a
``claude-code`` profile whose program is the stand-in tests/agents/fake_claude.py, so every run
is the real runner (``python -m core.agents.runner``) and the Claude Code adapter reading
stream-json. Each stand-in reads ``--events`` files first, one ``Read`` tool use and its result
every ``--interval-ms``, then edits, commits and answers as usual: ``--events`` + 5 progress
events a run (the runner's start, the session, the reads, the edit, the commit, the result).

Baseline: the same host and workspace settings, the lane running the plain ``command`` worker
(the built-in simulated worker, ``python -m jarvis_sim.simworker``) told to write exactly as many
events at the same pace (``JARVIS_SIM_EVENTS``, ``JARVIS_SIM_INTERVAL_MS``).

No repository is configured: each run gets an empty checkout, so no git runs in either mode and
the figures are the cost of streaming and supervising, not of worktrees. The dispatch's only
acceptance test is prose, so verification runs no command.

Measured, for each mode, from the moment the runs are dispatched (the host up and idle) to the
moment every run has ended and been gated:

- the host process's own CPU (user + system, ``/proc/<pid>/stat``), so not its workers';
- the progress events ingested (rows of ``progress_events``), and the host's CPU per event;
- the workers' CPU: the host's reaped children (``cutime + cstime`` in the same file), every
  worker's process tree. For the agents the stand-in reports its own CPU (``FAKE_CPU_FILE``) and
  is subtracted, which leaves the runners' own: starting Python, reading the agent's lines,
  adapting them, writing progress files and the log.

With ``--rounds N`` both modes run N times (the baseline first every other round) and the table
adds the rounds up; each round's ratio of host CPU per event is printed too, to show the noise.
Ratios are agents ÷ baseline. The project's modules are byte-compiled first, as installing does
(where ``PYTHONDONTWRITEBYTECODE`` is set every worker would compile them again).
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.intake import submit_dispatch  # noqa: E402
from core.store.sqlite_store import SqliteStore  # noqa: E402
from tests.bench import benchkit  # noqa: E402
from tests.bench.benchkit import stop_host  # noqa: E402

LANE = "jarvis-worker-1"
FAKE = ROOT / "tests" / "agents" / "fake_claude.py"
TICK = os.sysconf("SC_CLK_TCK")
#: Progress events a stand-in run makes besides its reads (see the module docstring).
AGENT_EXTRA_EVENTS = 5
BASE = json.loads((ROOT / "sample_runs/dispatches/valid-backend-fix.json").read_text())
ENDED = ("review_requested", "failed_contract", "failed", "done")


def dispatch(run_id: str) -> dict[str, object]:
    doc = dict(BASE)
    doc.pop("request_id", None)
    doc.update(
        run_id=run_id,
        branch=f"jarvis-{run_id}",
        universal_criteria=False,
        acceptance_tests=["a retried run keeps its run_id"],
    )
    return doc


@dataclass
class Cpu:
    own: float
    children: float


def cpu_of(pid: int) -> Cpu:
    """``pid``'s own CPU seconds and those of the children it has reaped."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": fields 3 onwards
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return Cpu((utime + stime) / TICK, (cutime + cstime) / TICK)


@dataclass
class Batch:
    mode: str
    wall: float
    events: int
    host: float
    host_idle: float
    """The host's CPU share (of one core) while idle, just before the batch."""
    workers: float
    agents: float
    """The stand-ins' own CPU (0 for the baseline)."""
    states: dict[str, int]


def config(mode: str, args: argparse.Namespace, ws: Path) -> str:
    text = f"[workers]\nconcurrency = {args.runs}\n"
    if mode == "agents":
        env = (
            f'FAKE_STREAM_EVENTS = "{args.events}", '
            f'FAKE_STREAM_INTERVAL_MS = "{args.interval_ms}", '
            f'FAKE_CPU_FILE = "{ws / "agent-cpu.txt"}"'
        )
        text = (
            '[workers]\ndefault = "claude"\n'
            f"concurrency = {args.runs}\n"
            f'[workers.claude]\nagent = "claude-code"\ncommand = ["{sys.executable}", "{FAKE}"]\n'
            f"env = {{ {env} }}\n"
        )
    return text + "[timeouts]\nno_output_s = 120\n"


def start_host(ws: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(ws / "host.err", "wb") as log:  # the host keeps its own copy of the file
        return benchkit.start_host(ws, env=env, stderr=log)


def batch(mode: str, args: argparse.Namespace) -> Batch:
    ws = Path(tempfile.mkdtemp(prefix="jarvis-bench-agents-"))
    (ws / "jarvis.toml").write_text(config(mode, args, ws))
    # Workers import the project from this checkout too, not from wherever it is installed.
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    if mode == "baseline":
        env["JARVIS_SIM_EVENTS"] = str(args.events + AGENT_EXTRA_EVENTS)
        env["JARVIS_SIM_INTERVAL_MS"] = str(args.interval_ms)
    store = SqliteStore(ws / "jarvis.db")
    host = start_host(ws, env)
    conn = sqlite3.connect(ws / "jarvis.db", timeout=30)
    try:
        time.sleep(1.0)  # past its start-up
        idle_from, idle_t0 = cpu_of(host.pid), time.monotonic()
        time.sleep(2.0)
        before, t0 = cpu_of(host.pid), time.monotonic()
        host_idle = (before.own - idle_from.own) / (t0 - idle_t0)
        ids = [f"bench-{mode}-{i:03d}" for i in range(args.runs)]
        for run_id in ids:
            result = submit_dispatch(store, dispatch(run_id), source_lane="main",
                                     target_lane=LANE, actor="bench")  # fmt: skip
            assert result.outcome == "enqueued", result.to_json()
        marks = ",".join("?" * len(ids))
        deadline = time.monotonic() + 120 + args.events * args.interval_ms / 1000 * 3
        while True:
            rows = conn.execute(
                f"SELECT state, verification_state FROM runs WHERE run_id IN ({marks})", ids
            ).fetchall()
            if all(s in ENDED and v not in ("pending", "verifying") for s, v in rows):
                break
            if time.monotonic() > deadline or host.poll() is not None:
                raise RuntimeError(f"{mode}: the runs did not end: {rows}; see {ws}/host.err")
            time.sleep(0.2)
        after, t1 = cpu_of(host.pid), time.monotonic()
        events = conn.execute(
            f"SELECT COUNT(*) FROM progress_events WHERE run_id IN ({marks})", ids
        ).fetchone()[0]
        states: dict[str, int] = {}
        for state, _ in rows:
            states[state] = states.get(state, 0) + 1
    finally:
        conn.close()
        stop_host(host)
        store.close()
    spent = ws / "agent-cpu.txt"
    agents = sum(float(line) for line in spent.read_text().split()) if spent.exists() else 0.0
    if mode == "agents":
        reported = len(spent.read_text().split()) if spent.exists() else 0
        assert reported == args.runs, f"{reported} of {args.runs} stand-ins reported their CPU"
    shutil.rmtree(ws, ignore_errors=True)
    return Batch(mode, t1 - t0, events, after.own - before.own, host_idle,
                 after.children - before.children, agents, states)  # fmt: skip


def total(batches: list[Batch]) -> Batch:
    """The batches of one mode added up (its idle share and states those of the last)."""
    last = batches[-1]
    return Batch(last.mode, sum(b.wall for b in batches), sum(b.events for b in batches),
                 sum(b.host for b in batches), last.host_idle,
                 sum(b.workers for b in batches), sum(b.agents for b in batches),
                 last.states)  # fmt: skip


def us(seconds: float, events: int) -> str:
    return f"{seconds / max(events, 1) * 1e6:,.0f} µs"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="runs at once (concurrency)")
    parser.add_argument("--events", type=int, default=200, help="tool uses each agent streams")
    parser.add_argument("--interval-ms", type=int, default=100, help="between two tool uses")
    parser.add_argument("--rounds", type=int, default=1, help="both modes, repeated; added up")
    parser.add_argument("--quick", action="store_true", help="50 events a run")
    args = parser.parse_args()
    if args.quick:
        args.events = 50

    compileall = [sys.executable, "-m", "compileall", "-q",
                  "core", "jarvis_cli", "jarvis_sim", "jarvis_tui"]  # fmt: skip
    subprocess.run(compileall, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
          f"{platform.release()}, Python {platform.python_version()}; "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"{args.runs} runs at once, {args.events} tool uses each, one every "
          f"{args.interval_ms} ms ({args.events + AGENT_EXTRA_EVENTS} events a run)")  # fmt: skip
    agents: list[Batch] = []
    bases: list[Batch] = []
    for n in range(args.rounds):
        # Every other round the baseline goes first, so a drift in the machine's load is shared.
        order = ("agents", "baseline") if n % 2 == 0 else ("baseline", "agents")
        for mode in order:
            b = batch(mode, args)
            (agents if mode == "agents" else bases).append(b)
            print(f"round {n + 1}, {b.mode}: {b.wall:.1f} s, {b.events} events, host "
                  f"{b.host:.2f} s CPU (idle {b.host_idle:.1%} of a core), workers "
                  f"{b.workers:.2f} s, stand-ins {b.agents:.2f} s, runs {b.states}")  # fmt: skip
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    expected = args.runs * (args.events + AGENT_EXTRA_EVENTS)
    for b in agents + bases:
        if b.events != expected:
            print(f"warning: a {b.mode} batch ingested {b.events} events, not {expected}")
    per_round = [
        (a.host / a.events) / (b.host / b.events) for a, b in zip(agents, bases, strict=True)
    ]
    if len(per_round) > 1:
        print("host CPU per event, agents ÷ baseline, each round: "
              + ", ".join(f"{r:.2f}×" for r in per_round))  # fmt: skip
    # The rounds added up: each mode's CPU over its events.
    agent, base = total(agents), total(bases)
    runner = agent.workers - agent.agents
    runs = args.runs * args.rounds
    rows = [
        ("batch, wall time", f"{agent.wall / args.rounds:.1f} s",
         f"{base.wall / args.rounds:.1f} s", f"{agent.wall / base.wall:.2f}×"),
        ("progress events ingested", f"{agent.events // args.rounds:,}",
         f"{base.events // args.rounds:,}", ""),
        ("host CPU, whole batch", f"{agent.host / args.rounds:.2f} s",
         f"{base.host / args.rounds:.2f} s", f"{agent.host / base.host:.2f}×"),
        ("host CPU, share of one core", f"{agent.host / agent.wall:.1%}",
         f"{base.host / base.wall:.1%}", ""),
        ("host CPU per event", us(agent.host, agent.events), us(base.host, base.events),
         f"{agent.host / agent.events / (base.host / base.events):.2f}×"),
        ("worker CPU per event (runner / simworker)", us(runner, agent.events),
         us(base.workers, base.events),
         f"{runner / agent.events / (base.workers / base.events):.2f}×"),
        ("worker CPU per run (runner / simworker)", f"{runner / runs * 1000:,.0f} ms",
         f"{base.workers / runs * 1000:,.0f} ms", ""),
        ("stand-in agent's own CPU per event", us(agent.agents, agent.events), "—", ""),
    ]  # fmt: skip
    print("\n| a batch | agents | baseline (simulated workers) | ratio |\n|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
