"""What an agent adapter costs per line of agent output, against a baseline in the same run.

Run on demand (not part of the test suite):

    .venv/bin/python tests/bench/bench_agents.py [--lines 100000] [--rounds 5]

Each agent's fixtures (tests/agents/fixtures/<agent>/: a successful run, an error run and a
malformed one) are fed again and again, a fresh adapter per run as the host would make one,
until about ``--lines`` lines have gone through ``parse_line`` (and ``finish`` once per run).
The baseline reads the same lines the least a reader must: ``json.loads`` for the JSON agents
(refused lines caught), a UTF-8 decode and strip for aider's plain text. Figures are the best of
``--rounds`` rounds; the ratio is the adapter's time over the baseline's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.agents.registry import ADAPTERS, adapter_for  # noqa: E402

FIXTURES = ROOT / "tests" / "agents" / "fixtures"
FOLDERS = {"claude-code": "claude_code", "codex": "codex", "opencode": "opencode", "aider": "aider"}


def runs_of(name: str) -> list[list[bytes]]:
    folder = FIXTURES / FOLDERS[name]
    return [
        path.read_bytes().splitlines(keepends=True)
        for path in sorted(folder.iterdir())
        if path.suffix in (".jsonl", ".txt")
    ]


def json_baseline(line: bytes) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None


def text_baseline(line: bytes) -> object:
    return line.decode("utf-8", "replace").strip()


def best(fn: Callable[[], int], rounds: int) -> tuple[float, int]:
    """The fastest of ``rounds`` calls, in seconds, and what the call counted."""
    fastest, counted = float("inf"), 0
    for _ in range(rounds):
        start = time.perf_counter()
        counted = fn()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest, counted


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000, help="lines per figure")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the best is kept")
    args = parser.parse_args()

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}"
    )
    print(
        "\n| agent | lines | events | adapter ns/line | ns/event | baseline | baseline ns/line "
        "| ratio |\n|---|---:|---:|---:|---:|---|---:|---:|"
    )
    for name in sorted(ADAPTERS):
        runs = runs_of(name)
        per_pass = sum(len(lines) for lines in runs)
        passes = max(1, round(args.lines / per_pass))
        total_lines = passes * per_pass

        def adapt(runs: list[list[bytes]] = runs, passes: int = passes, name: str = name) -> int:
            events = 0
            for _ in range(passes):
                for lines in runs:
                    adapter = adapter_for(name)
                    for line in lines:
                        events += len(adapter.parse_line(line))
                    events += len(adapter.finish())
            return events

        read = text_baseline if name == "aider" else json_baseline

        def baseline(
            runs: list[list[bytes]] = runs,
            passes: int = passes,
            read: Callable[[bytes], object] = read,
        ) -> int:
            for _ in range(passes):
                for lines in runs:
                    for line in lines:
                        read(line)
            return 0

        took, events = best(adapt, args.rounds)
        base, _ = best(baseline, args.rounds)
        label = "decode+strip" if name == "aider" else "json.loads"
        print(
            f"| {name} | {total_lines:,} | {events:,} | {took / total_lines * 1e9:,.0f} "
            f"| {took / max(events, 1) * 1e9:,.0f} | {label} | {base / total_lines * 1e9:,.0f} "
            f"| {took / base:.1f}x |"
        )


if __name__ == "__main__":
    main()
