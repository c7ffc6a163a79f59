"""``jarvis store stats``: the store's size per table, what an event costs, the retention
policy in force (or one to preview, ``--keep-days``) and what it would remove now."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from jarvis_cli.inputs import UsageError
from jarvis_cli.opening import open_store
from jarvis_cli.output import console, emit_json, escape

#: The most days ``--keep-days`` takes, as ``[store] keep_days`` (a century).
MAX_DAYS = 36500
#: The tables an event writes to, and how the event's cost names each.
EVENT_PARTS = (("progress_events", "progress"), ("journal", "journal"), ("ipc_receipts", "receipt"))


def _days(days: int | None) -> str:
    if days is None:
        return "kept"
    return f"{days} day" if days == 1 else f"{days} days"


def run(args: argparse.Namespace) -> int:
    if args.keep_days is not None and not 0 <= args.keep_days <= MAX_DAYS:
        raise UsageError("usage", f"--keep-days must be from 0 to {MAX_DAYS}.")
    with open_store(args, access="read") as store:
        stats = store.stats(args.keep_days)
    doc = stats.to_json()
    if args.json:
        emit_json(doc)
        return 0
    out = console()
    size = "" if stats.file_bytes is None else f"  ({stats.file_bytes:,} bytes on disk)"
    out.print(Text.assemble(("store  ", "dim"), stats.backend, "  ", escape(stats.location), size))
    table = Table(box=None, pad_edge=False)
    table.add_column("table")
    for column in ("rows", "bytes", "bytes/row", "would remove"):
        table.add_column(column, justify="right")
    tables = doc["tables"]
    order = sorted(tables, key=lambda name: (-(tables[name]["bytes"] or 0), name))
    for name in order:
        found = tables[name]
        removes = doc["would_remove"].get(name, "")
        table.add_row(
            name,
            f"{found['rows']:,}",
            "?" if found["bytes"] is None else f"{found['bytes']:,}",
            "" if found["bytes_per_row"] is None else f"{found['bytes_per_row']:,.0f}",
            "" if removes in ("", None) else f"{removes:,}",
        )
    out.print(table)
    if doc["total_bytes"] is None:
        pages = doc["pages"]
        out.print(
            f"bytes per table unknown (SQLite without dbstat): {pages['page_count']:,} pages of "
            f"{pages['page_size']:,} bytes, {pages['freelist_count']:,} free"
        )
    if (per_event := doc["bytes_per_event"]) is not None:
        parts = " + ".join(
            f"{label} {tables[name]['bytes_per_row'] or 0:,.0f}"
            for name, label in EVENT_PARTS
            if name in tables
        )
        out.print(f"an event: {per_event:,.0f} bytes ({parts})")
    policy = doc["policy"]["keep_days"]
    if all(days is None for days in policy.values()):
        out.print(f"policy ({doc['policy']['from']}): keep everything")
    else:
        named = ", ".join(f"{name} {_days(days)}" for name, days in policy.items())
        out.print(f"policy ({doc['policy']['from']}): {named}")
    return 0
