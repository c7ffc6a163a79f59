"""`jarvis show`'s progress: the run's latest progress events, as the console's stream lists
them (time, attempt, phase, tool, summary), newest last.

Every cell is worker text, shown inert and masked (`jarvis_cli.output.data`); a phase or a
tool too long for its column is cut, a summary wraps in its own.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from rich.table import Table
from rich.text import Text

from jarvis_cli.inputs import UsageError
from jarvis_cli.output import data

#: Events listed without ``--events``: what fits a screen beside the rest of the run.
READABLE_EVENTS = 20
#: Events in ``--json`` without ``--events``, as before the readable list existed.
JSON_EVENTS = 50
#: The most ``--events`` reads: the store's read and the table stay bounded.
MAX_EVENTS = 10_000


def events_wanted(args: argparse.Namespace) -> int:
    """How many of the newest events to read: ``--events N``, else the default for the form.

    Raises:
        UsageError: N is below 0 or above `MAX_EVENTS`.
    """
    wanted: int | None = args.events
    if wanted is None:
        return JSON_EVENTS if args.json else READABLE_EVENTS
    if not 0 <= wanted <= MAX_EVENTS:
        raise UsageError("usage", f"--events must be from 0 to {MAX_EVENTS:,}.")
    return wanted


def progress_table(detail: dict[str, Any]) -> Table | None:
    """The run's events as a table, oldest first; None when there are none to list."""
    events: list[dict[str, Any]] = detail["events"]
    if not events:
        return None
    total = int(detail.get("events_count") or len(events))
    title = "progress (newest last)"
    if total > len(events):
        title = f"progress ({len(events)} of {total}, newest last)"
    table = Table(title=title, title_justify="left", caption_justify="left")
    table.add_column("time", no_wrap=True)
    table.add_column("attempt", justify="right", no_wrap=True)
    table.add_column("phase", no_wrap=True, overflow="ellipsis", max_width=12)
    table.add_column("tool", no_wrap=True, overflow="ellipsis", max_width=16)
    table.add_column("summary", overflow="fold", ratio=1)
    clocks = _clocks([event.get("timestamp") for event in events])
    for event, clock in zip(events, clocks, strict=True):
        table.add_row(
            data(clock, "dim"),
            data(event.get("attempt") or ""),
            data(event.get("phase") or "", "bold"),
            data(event.get("tool_used") or "", "dim"),
            data(event.get("summary") or ""),
        )
    if total > len(events):
        more = total - len(events)
        lists = "--events N lists more"
        if total <= MAX_EVENTS:
            lists = f"--events {total} lists them all"
        table.caption = Text(f"{more} earlier event(s) not listed: {lists}", style="dim")
    return table


def _clocks(stamps: list[object]) -> list[str]:
    """Each event's time in UTC, as the rest of `show` gives times: the time of day, with the
    date when the events listed span more than one day. A stamp that is not a time (a store
    written by hand) is shown as it is."""
    moments: list[datetime | None] = []
    for stamp in stamps:
        try:
            moment = datetime.fromisoformat(str(stamp))
        except ValueError:
            moments.append(None)
            continue
        utc = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
        moments.append(utc)
    days = {moment.date() for moment in moments if moment is not None}
    shape = "%H:%M:%S" if len(days) <= 1 else "%Y-%m-%d %H:%M:%S"
    return [
        moment.strftime(shape) if moment is not None else str(stamp)
        for moment, stamp in zip(moments, stamps, strict=True)
    ]


def retention_lines(detail: dict[str, Any]) -> list[Text]:
    """What retention removed of the run's history, a line per kind: "412 progress events
    up to 2026-10-31 removed by retention (keep 7 days)" (``--json``: the span's both ends)."""
    lines = []
    for kind, removed in (detail.get("retention") or {}).items():
        words = kind.replace("_", " ")
        span = f"up to {str(removed['until'])[:10]}"
        keep = f"keep {removed['keep_days']} day{'' if removed['keep_days'] == 1 else 's'}"
        lines.append(
            Text(f"{removed['removed']:,} {words} {span} removed by retention ({keep})", "dim")
        )
    return lines
