"""Worker trouble on the command line: refused IPC files and the end of a worker's stderr.

`jarvis show` prints a run's (`print_run_trouble`); `jarvis errors` lists every refused file,
those that named no run included; `jarvis runs` ends with a one-line count of recent ones
(`refusals_line`), so an operator who only lists runs still learns that something was refused.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from core.service.fleet import Fleet
from jarvis_cli.inputs import UsageError
from jarvis_cli.opening import open_store, workspace_root
from jarvis_cli.output import console, emit_json, escape, quoted

#: How far back `jarvis runs` counts refused files.
RECENT = timedelta(hours=24)


def print_run_trouble(out: Console, detail: dict[str, Any], root: Path) -> None:
    """A run's confinement, refused files and stderr tails, after the rest of `jarvis show`."""
    if detail.get("sandbox") == "none":
        # Its worker could write anywhere its user may (docs/agents.md, Confinement).
        out.print(Text.assemble(("  ! unconfined: ", "bold yellow"),
                                "its worker ran without a sandbox"))  # fmt: skip
    refused = detail.get("quarantined") or []
    if refused:
        total = int(detail.get("quarantined_count") or len(refused))
        more = f", newest {len(refused)} shown" if total > len(refused) else ""
        out.print(Text(f"refused files ({total}{more})", style="bold"))
        for row in refused:
            print_refusal(out, row, root, with_run=False)
    for stderr in detail.get("stderr") or []:
        head = (
            f"worker stderr (attempt {stderr['attempt']}, exit {stderr['exit_code']}, "
            f"the end of {int(stderr['total_bytes']):,} bytes)"
        )
        out.print(Text(head, style="bold"))
        out.print(quoted(str(stderr["tail"]).split("\n")))


def print_refusal(out: Console, row: dict[str, Any], root: Path, *, with_run: bool) -> None:
    """One refused file: when, why and from which lane; its run; the message; where it is."""
    at = str(row["quarantined_at"])
    # Seconds are enough to tell refusals apart for a person; the JSON keeps the full stamp.
    when = f"{at[:10]} {at[11:19]}Z" if len(at) >= 19 and at[10] == "T" else at
    out.print(
        Text.assemble(
            ("  " + escape(when), "dim"),
            "  ",
            (escape(str(row["code"])), "yellow"),
            ("  from ", "dim"),
            escape(str(row["lane"] or "an unknown folder")),
        )
    )
    if with_run:
        run = row["run_id"] or row["named_run"]
        line = Text("    run " + escape(str(run))) if run else Text("    no run", style="dim")
        if run and not row["run_id"]:
            line.append(" (unknown)", style="dim")
        out.print(line)
    # Messages and paths are not wrapped by Rich (the terminal does): a path stays one string
    # that copies whole.
    out.print(Text("    " + escape(str(row["message"]))), soft_wrap=True)
    if row["stored_as"]:
        where = "now " + _short(str(row["stored_as"]), root)
    else:
        where = f"still at {_short(str(row['original_path']), root)} ({row['outcome']})"
    out.print(Text("    " + escape(where), style="dim"), soft_wrap=True)


def _short(path: str, root: Path) -> str:
    """``path`` relative to the workspace when it is inside it: shorter, and what one types."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def refusals_line(store: Fleet, now: datetime) -> tuple[dict[str, int], Text | None]:
    """Refused files of the last `RECENT`: the counts, and a line for people when any."""
    counts = store.refusal_counts(now - RECENT)
    if not counts["total"]:
        return counts, None
    line = Text(f"⚠ {counts['total']} IPC file(s) refused in the last 24 h", style="yellow")
    if counts["unattached"]:
        line.append(f", {counts['unattached']} naming no run")
    line.append(" — jarvis errors", style="dim")
    return counts, line


def errors(args: argparse.Namespace) -> int:
    """``jarvis errors``: the files the host refused, newest first."""
    if args.limit < 1:
        raise UsageError("usage", "--limit must be at least 1.")
    with open_store(args, access="read") as store:
        rows = store.refusals(run_id=args.run, limit=args.limit, unattached=args.unattached)
        counts = store.refusal_counts(datetime.now(UTC) - RECENT)
    if args.json:
        emit_json({"quarantined": rows, "last_24h": counts})
        return 0
    out = console()
    out.print(Text(f"{len(rows)} refused file(s), newest first", style="bold"))
    for row in rows:
        print_refusal(out, row, workspace_root(args), with_run=True)
    return 0
