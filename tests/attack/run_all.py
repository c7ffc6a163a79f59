"""Every attack in turn, with its figures; exit 0 only when every invariant held.

    .venv/bin/python -m tests.attack.run_all [--quick] [--only crash,race]

``--quick`` runs each attack small (a smoke run, not the figures of record; `.ci/run` runs it).
The figures of record, with the machine they ran on, are in `docs/reliability.md`.

Each attack runs as its own process, in a process group of its own: one that breaks, gives up
waiting or crashes is reported and the next one runs; Ctrl-C or a SIGTERM reaches this process
only, which ends the attack's whole group and everything it started (`leftovers`) before it
exits. Nothing of an attack outlives it: no host, worker, console or temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time

from tests.attack import leftovers
from tests.attack.kit import ROOT, Figures

ATTACKS = ["crash", "race", "bad_ipc", "injection", "fuzz", "disk_full", "corrupt_store",
           "criteria_dos"]  # fmt: skip
QUICK = {
    "crash": ["--kills", "4", "--runs", "10", "--seqs", "40", "--live-runs", "6",
              "--live-kills", "2"],
    "race": ["--rounds", "20"],
    "bad_ipc": ["--mutants", "200"],
    "fuzz": ["--inputs", "5000"],
    "disk_full": ["--cycles", "2"],
    "corrupt_store": ["--commands", "3"],
    "criteria_dos": ["--max-kb", "40", "--pattern-timeout", "3"],
}  # fmt: skip


def run_one(name: str, argv: list[str], scope: leftovers.Scope) -> Figures:
    """One attack in a child process of its own group; its figures, or why there are none."""
    figures_file = scope.root / f"{name}.figures.json"
    command = [sys.executable, "-m", f"tests.attack.{name}", *argv,
               "--figures-json", str(figures_file)]  # fmt: skip
    child = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, process_group=0)
    try:
        code = child.wait()
    finally:
        if child.poll() is None:  # interrupted: the attack's own clean-up is not waited for
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        left = leftovers.stop(scope)
    try:
        figures = Figures.from_json(json.loads(figures_file.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        figures = Figures(name)
        figures.fail(f"the attack exited {code} without its figures")
        figures.print()
    if left:
        figures.fail(f"{len(left)} process(es) outlived the attack (now ended)")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=",".join(ATTACKS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = args.only.split(",")
    unknown = sorted(set(names) - set(ATTACKS))
    if unknown:
        parser.error(f"no such attack: {', '.join(unknown)} (there are {', '.join(ATTACKS)})")
    print(f"machine: {platform.node()} {platform.machine()}, {platform.python_version()}, "
          f"{len(os.sched_getaffinity(0))} cores")  # fmt: skip
    sys.stdout.flush()
    results: list[Figures] = []
    began_all = time.monotonic()
    try:
        with leftovers.contained() as scope:
            for name in names:
                began = time.monotonic()
                figures = run_one(name, QUICK.get(name, []) if args.quick else [], scope)
                results.append(figures)
                print(f"  ({time.monotonic() - began:.0f} s)")
                sys.stdout.flush()
    except KeyboardInterrupt:
        print("\ninterrupted: every attack's processes ended, its folders removed")
        return 130
    if args.json:
        print(json.dumps([f.to_json() for f in results]))
    broke = [f.name for f in results if not f.ok]
    print(f"\n{len(results)} attacks in {time.monotonic() - began_all:.0f} s")
    print("all held" if not broke else f"BROKE: {', '.join(broke)}")
    return 1 if broke else 0


if __name__ == "__main__":
    sys.exit(main())
