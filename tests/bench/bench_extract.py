"""Criteria extraction: task size → time, for the extractor now and before it was made linear.

Run on demand (not part of the test suite):

    .venv/bin/python tests/bench/bench_extract.py [--baseline REV] [--cap SECONDS]

The baseline is the extractor as it was at ``REV`` (default: the commit before
``core/criteria/extract_text.py`` was added), read from git and measured in the same run, on the
same inputs. Each baseline figure runs in its own process and is stopped at ``--cap`` seconds
(shown as "> cap"); once a shape passes the cap, its larger sizes are shown so without being
run (the time only grows with the size). Ours is the
best of three runs in this process. Shapes are the ones that made the old patterns backtrack:
a long word (the issue's ``'a' * 40000``), long runs of spaces, dotted words, a realistic task
repeated, and many paths referred back to.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.criteria.extract import extract_criteria  # noqa: E402

TASK = (
    "Create src/app/handlers.py and update README.md; it must contain `## Usage`.\n"
    "- Run `pytest tests/test_handlers.py` and `ruff check .`\n"
    "- All tests in tests/test_handlers.py must pass, e.g. after editing config.json.\n\n"
)


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


SHAPES: dict[str, Callable[[int], str]] = {
    "one long word": lambda n: "a" * n,
    "a run of spaces in a sentence": lambda n: "tests" + " " * (n - 9) + "pass",
    "dotted words": _repeat("a."),
    "paths referred back to": _repeat("a.py it has `x` "),
    "a realistic task, repeated": _repeat(TASK),
}
SIZES = (10_000, 40_000, 150_000, 1_000_000)

_CHILD = """
import importlib.util, sys, time
sys.path.insert(0, {root!r})
spec = importlib.util.spec_from_file_location("baseline_extract", {path!r})
module = importlib.util.module_from_spec(spec)
sys.modules["baseline_extract"] = module  # dataclasses look their module up while building
spec.loader.exec_module(module)
text = open({text!r}, encoding="utf-8").read()
start = time.perf_counter()
module.extract_criteria(text, universal=False)
print(time.perf_counter() - start)
"""


def baseline_revision() -> str:
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", "core/criteria/extract_text.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    if not added:
        sys.exit("cannot find where extract_text.py was added; pass --baseline REV")
    return f"{added[-1]}^"


def ours(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        extract_criteria(text, universal=False)
        best = min(best, time.perf_counter() - start)
    return best


def theirs(source: Path, text: str, cap: float, scratch: Path) -> float | None:
    """The baseline's time on ``text`` in a fresh process, or None past ``cap`` seconds."""
    text_file = scratch / "task.txt"
    text_file.write_text(text, encoding="utf-8")
    code = _CHILD.format(root=str(ROOT), path=str(source), text=str(text_file))
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=cap, check=True
        )
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip())


def _times(ratio: float) -> str:
    return f"{ratio:,.1f}×" if ratio < 10 else f"{ratio:,.0f}×"


def shown(seconds: float | None, cap: float) -> str:
    if seconds is None:
        return f"> {cap:.0f} s"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", help="git revision of the extractor to compare with")
    parser.add_argument("--cap", type=float, default=120.0, help="seconds per baseline run")
    args = parser.parse_args()
    revision = args.baseline or baseline_revision()
    old = subprocess.run(
        ["git", "show", f"{revision}:core/criteria/extract.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}; baseline {revision}; load average at start "
        f"{os.getloadavg()[0]:.1f}"
    )
    print("| shape | size | before | after | ratio |\n|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "baseline_extract.py"
        source.write_text(old, encoding="utf-8")
        for name, make in SHAPES.items():
            capped = False
            for size in SIZES:
                text = make(size)
                after = ours(text)
                before = None if capped else theirs(source, text, args.cap, Path(scratch))
                capped = capped or before is None
                ratio = "—" if before is None else _times(before / after)
                print(
                    f"| {name} | {size:,} | {shown(before, args.cap)} | {shown(after, args.cap)}"
                    f" | {ratio} |",
                    flush=True,
                )
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
