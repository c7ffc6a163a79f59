"""``jarvis samples``: the engine at work on the bundled sample runs.

Runs every sample in ``sample_runs/`` through the contract engine — dispatch validation,
completion gates, the scope and risk gate, versioned records and planner parsing — and shows each
verdict beside what the sample's name says it should be. Exit code 0 when every sample behaves as
named, 1 otherwise, so it doubles as a smoke test of an installation.
"""

from __future__ import annotations

import argparse
from collections import Counter

from rich.table import Table
from rich.text import Text

from jarvis_cli.output import console, emit_json, escape, verdict_line
from jarvis_sim.samples import check_samples, samples_dir

_GOOD = {"valid", "review_requested", "ok", "repaired", "L0"}


def run(args: argparse.Namespace) -> int:
    root = samples_dir()
    checks = check_samples(root)
    all_as_named = all(c.as_named for c in checks)
    if args.json:
        emit_json(
            {
                "samples_dir": str(root),
                "all_as_named": all_as_named,
                "samples": [c.to_json(root) for c in checks],
            }
        )
        return 0 if all_as_named else 1

    out = console()
    table = Table(
        title=f"sample runs in {escape(str(root))}  (✓ = does what its name says)",
        title_justify="left",
        expand=True,
    )
    # The verdict keeps its width at 80 columns; the sample name and explanation give way first.
    table.add_column("sample", no_wrap=True, overflow="ellipsis", ratio=3)
    table.add_column("verdict", no_wrap=True, min_width=18)
    table.add_column("why", no_wrap=True, overflow="ellipsis", style="dim", ratio=2)
    family = ""
    for check in checks:
        if check.family != family:
            family = check.family
            table.add_section()
            table.add_row(Text(family.replace("_", " "), style="bold underline"))
        style = (
            "green"
            if check.actual in _GOOD
            else ("yellow" if check.actual in ("L1", "L2") else "red")
        )
        verdict = Text.assemble(
            ("✓ ", "green") if check.as_named else ("✗ ", "bold red"),
            (escape(check.actual), style),
        )
        if not check.as_named:
            verdict.append(f" (expected {escape(check.expected)})", style="bold red")
        table.add_row(Text(escape(check.path.name)), verdict, Text(escape(check.detail)))
    out.print(table)
    counts = Counter(c.family for c in checks)
    summary = ", ".join(f"{n} {family}" for family, n in counts.items())
    mismatched = sum(not c.as_named for c in checks)
    out.print(
        verdict_line(
            all_as_named,
            f"{len(checks)} samples behave as named"
            if all_as_named
            else f"{mismatched} sample(s) do not behave as named",
            summary,
        )
    )
    return 0 if all_as_named else 1
