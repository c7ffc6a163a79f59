"""``jarvis lane``: the lanes as the fleet view shows them, and pausing or resuming one."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from core.service.actions import operator_name
from core.service.lanes import LaneRequest
from jarvis_cli.opening import open_store
from jarvis_cli.output import (
    console,
    emit_json,
    escape,
    verdict_line,
    whole_when_piped,
    write_error,
)


def act(args: argparse.Namespace) -> int:
    """Pause or resume a lane: done (exit 0) or refused with the engine's sentence (exit 1)."""
    request = LaneRequest(args.action, args.lane, operator_name(args.operator),
                          getattr(args, "reason", None))  # fmt: skip
    with open_store(args, access="write") as store:
        outcome = store.lane_act(request)
    if args.json:
        emit_json(outcome.to_json())
    elif outcome.ok:
        now = "paused: its queued runs wait" if outcome.paused else "resumed"
        console().print(verdict_line(True, f"{args.what} {args.lane}", now))
    elif outcome.refusal:
        console().print(verdict_line(False, f"refused ({outcome.refusal.code})",
                                     outcome.refusal.message))  # fmt: skip
    return 0 if outcome.ok else 1


def list_lanes(args: argparse.Namespace) -> int:
    """Every lane: what works it, its concurrency, its runs, the hosts serving it, its pause."""
    with open_store(args, access="read") as store:
        fleet = store.lanes()
    if args.json:
        emit_json({
            "lanes": [{
                "lane": line.lane, "profile": line.profile, "agent": line.agent,
                "sandbox": line.sandbox, "concurrency": line.concurrency,
                "running": line.running, "queued": line.queued, "counts": line.counts,
                "hosts": list(line.hosts), "pause": line.pause,
            } for line in fleet.lanes],
            "config_problem": fleet.config_problem,
        })  # fmt: skip
        return 0
    if fleet.config_problem:
        write_error(f"jarvis: {fleet.config_problem} (the lanes are shown with the defaults)")
    out = console()
    if not fleet.lanes:
        out.print("No lane is configured and no run names one yet.")
        return 0
    whole_when_piped(out)
    table = Table(box=None, pad_edge=False)
    for column in ("lane", "worker", "sandbox", "at a time", "running", "queued", "hosts",
                   "paused"):  # fmt: skip
        table.add_column(column, overflow="fold")
    for line in fleet.lanes:
        pause = line.pause
        paused = f"by {pause['paused_by']}: {pause['reason']}" if pause else ""
        table.add_row(
            Text(escape(line.lane), style="bold"),
            Text(escape(line.worker)),
            line.sandbox,
            str(line.concurrency),
            str(line.running),
            str(line.queued),
            Text(escape(", ".join(line.hosts) or "none")),
            Text(escape(paused), style="bold yellow"),
        )
    out.print(table)
    return 0
