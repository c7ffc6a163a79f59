"""Every attack in turn, with its figures; exit 0 only when every invariant held.

    .venv/bin/python -m tests.attack.run_all [--quick] [--only crash,race]

``--quick`` runs each attack at a tenth of its size (a smoke run, not the figures of record).
The figures of record, with the machine they ran on, are in `docs/reliability.md`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time

from tests.attack.kit import Figures

ATTACKS = ["crash", "race", "bad_ipc", "injection", "fuzz", "disk_full", "corrupt_store",
           "criteria_dos"]  # fmt: skip
QUICK = {
    "crash": ["--kills", "4", "--runs", "10", "--seqs", "40", "--live-runs", "6",
              "--live-kills", "2"],
    "race": ["--rounds", "20"],
    "bad_ipc": ["--mutants", "200"],
    "fuzz": ["--inputs", "5000"],
    "disk_full": ["--cycles", "2"],
    "criteria_dos": ["--max-kb", "40"],
}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=",".join(ATTACKS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.node()} {platform.machine()}, {platform.python_version()}, "
          f"{len(__import__('os').sched_getaffinity(0))} cores")  # fmt: skip
    results: list[tuple[Figures, float]] = []
    for name in args.only.split(","):
        module = importlib.import_module(f"tests.attack.{name}")
        argv = QUICK.get(name, []) if args.quick else []
        began = time.monotonic()
        figures = module.attack(module.parser().parse_args(argv))
        results.append((figures, time.monotonic() - began))
        figures.print()
        print(f"  ({time.monotonic() - began:.0f} s)")
        sys.stdout.flush()
    if args.json:
        print(json.dumps([f.to_json() for f, _ in results]))
    broke = [f.name for f, _ in results if not f.ok]
    print("\nall held" if not broke else f"\nBROKE: {', '.join(broke)}")
    return 1 if broke else 0


if __name__ == "__main__":
    sys.exit(main())
