"""Contract throughput, and the worst inputs a worker can hand the gates.

Run on demand (not part of the test suite):

    .venv/bin/python tests/bench/bench_contracts.py [--seconds 3]

Throughput: dispatch validations and completion-gate evaluations per second, each the best of
five timed rounds in one process, on raw bytes as they arrive from a file or pipe (so strict JSON
parsing is included). The target from the contracts issue is >= 20,000 dispatch validations per
second; the ratio to it is printed beside the figure.

Worst inputs: how long one call takes on the largest or most hostile input of its kind (best of
three). The tests check that this work grows linearly by counting it (tests/work.py); the time
it takes is measured here, where a slow machine changes a figure instead of failing a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.contracts.completion import evaluate_completion  # noqa: E402
from core.contracts.diffparse import parse_diff  # noqa: E402
from core.contracts.dispatch import validate_dispatch  # noqa: E402
from core.contracts.openclaw_request import GlobSet  # noqa: E402
from core.contracts.secrets_scan import mask_secrets, scan_text  # noqa: E402

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


def seconds_per_call(fn: Callable[[], object]) -> float:
    """One call's seconds, the best of three."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


MODIFY = (
    "diff --git a/src/f.py b/src/f.py\nindex 1111111..2222222 100644\n--- a/src/f.py\n"
    "+++ b/src/f.py\n@@ -1,4 +1,5 @@\n import os\n-import sys\n+import sys  # noqa\n"
    "+import json\n \n def main():\n@@ -10,2 +11,3 @@ def main():\n     pass\n+    return 0\n"
    " # end\n"
)
PEM_BEGIN = "-----BEGIN RSA " + "PRIVATE KEY-----"


def worst_inputs() -> dict[str, tuple[Callable[[], object], int]]:
    """Each hostile call, with the size of its input in bytes."""
    patch = MODIFY * (20 * 1024 * 1024 // len(MODIFY))
    prose = "ordinary line of prose with token words and a password mention\n" * 150_000
    blocks = (PEM_BEGIN + " x\n\n") * 20_000
    segments = "/".join(["aaa"] * 1000 + ["c"])
    globs = GlobSet(["**/*a*/**/*a*/**/*b*/**/*c*"])
    long_lines = {
        "a 100,000-character '+' line": "+" * 100_000 + "\n",
        "a 100,000-character '@' line": "@" * 100_000 + "\n",
        "a 100,000-character diff --git header": "diff --git " + "a " * 50_000 + "\n",
    }
    files = patch.count("diff --git")
    found: dict[str, tuple[Callable[[], object], int]] = {
        f"parse a 20 MB patch ({files:,} files)": (lambda: parse_diff(patch), len(patch)),
    }
    for name, line in long_lines.items():
        found[f"parse {name}"] = (partial(parse_diff, line), len(line))
    found["scan 150,000 lines of prose for secrets"] = (lambda: scan_text(prose, "r"), len(prose))
    found["mask 20,000 key blocks that never end"] = (lambda: mask_secrets(blocks), len(blocks))
    found["match a 1,001-segment path against four **s"] = (
        lambda: globs.match(segments),
        len(segments),
    )
    return found


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

    print("\n| worst input | size | one call (best of 3) |\n|---|---:|---:|")
    for name, (call, size) in worst_inputs().items():
        took = seconds_per_call(call)
        shown = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"
        print(f"| {name} | {shown} | {took * 1000:,.1f} ms |")


if __name__ == "__main__":
    main()
