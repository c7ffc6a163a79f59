"""Contract throughput: dispatch validations and completion-gate evaluations per second.

Run on demand (not part of the test suite):

    .venv/bin/python tests/bench/bench_contracts.py [--seconds 3]

Each figure is the best of five timed rounds in one process, on raw bytes as they arrive from a
file or pipe (so strict JSON parsing is included). The target from the contracts issue is
>= 20,000 dispatch validations per second; the ratio to it is printed beside the figure.
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

from core.contracts.completion import evaluate_completion  # noqa: E402
from core.contracts.dispatch import validate_dispatch  # noqa: E402

DISPATCH_TARGET = 20_000


def rate(fn: Callable[[], object], seconds: float) -> float:
    """Calls per second: the best of five rounds of about ``seconds / 5`` each."""
    best = 0.0
    for _ in range(5):
        calls = 0
        start = time.perf_counter()
        deadline = start + seconds / 5
        while True:
            for _ in range(100):
                fn()
            calls += 100
            now = time.perf_counter()
            if now >= deadline:
                break
        best = max(best, calls / (now - start))
    return best


def cycle(items: list[bytes], check: Callable[[bytes], object]) -> Callable[[], object]:
    state = {"i": 0}

    def step() -> object:
        state["i"] = (state["i"] + 1) % len(items)
        return check(items[state["i"]])

    return step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="time per figure")
    args = parser.parse_args()

    samples = ROOT / "sample_runs"
    valid = [p.read_bytes() for p in sorted((samples / "dispatches").glob("valid-*.json"))]
    valid = [d for d in valid if b'"run_id"' in d]  # Jarvis dispatches only
    invalid = [p.read_bytes() for p in sorted((samples / "dispatches").glob("invalid-*"))]
    folder = samples / "outputs" / "ui-dashboard"
    ui_dispatch = json.loads((folder / "dispatch.json").read_text())
    outputs = [p.read_bytes() for p in sorted(folder.glob("*.txt"))]

    figures = {
        "dispatch validations/s (valid samples)": rate(
            cycle(valid, validate_dispatch), args.seconds
        ),
        "dispatch validations/s (invalid samples)": rate(
            cycle(invalid, validate_dispatch), args.seconds
        ),
        "dispatch validations/s (all samples)": rate(
            cycle(valid + invalid, validate_dispatch), args.seconds
        ),
        "completion-gate evaluations/s": rate(
            cycle(outputs, lambda out: evaluate_completion(ui_dispatch, out)), args.seconds
        ),
    }
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}"
    )
    for name, value in figures.items():
        note = ""
        if name.startswith("dispatch"):
            note = f"  ({value / DISPATCH_TARGET:.2f}x the {DISPATCH_TARGET:,}/s target)"
        print(f"{name:<44} {value:>10,.0f}   {1e6 / value:6.1f} µs/call{note}")


if __name__ == "__main__":
    main()
