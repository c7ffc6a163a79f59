"""``jarvis hosts``: every host serving the workspace's store, its lanes, heartbeat and lease."""

from __future__ import annotations

import argparse
from datetime import datetime

from rich.table import Table
from rich.text import Text

from jarvis_cli.opening import age, open_store
from jarvis_cli.output import console, emit_json, escape, whole_when_piped

#: How each lease state is shown.
_LOOK = {"live": "green", "stopped": "dim", "lost": "bold red", "recovered": "yellow"}


def run(args: argparse.Namespace) -> int:
    with open_store(args, access="read") as store:
        now = store.now()
        hosts = store.hosts(now)
    if args.json:
        emit_json({"hosts": hosts, "now": now})
        return 0
    out = console()
    if not hosts:
        out.print("No host has served this store yet.")
        return 0
    when = datetime.fromisoformat(now)
    whole_when_piped(out)
    table = Table(box=None, pad_edge=False)
    for column in ("host", "state", "heartbeat", "lanes", "running", "machine / pid"):
        table.add_column(column, overflow="fold")
    for host in hosts:
        state = host["state"]
        if state == "recovered":
            state += f" by {host['recovered_by']}"
        lanes = ", ".join(host["lanes"]) if host["lanes"] is not None else "every lane"
        table.add_row(
            Text(escape(host["name"]), style="bold"),
            Text(escape(state), style=_LOOK[host["state"]]),
            f"{age(host['heartbeat_at'], when)} ago",
            Text(escape(lanes)),
            str(host["running"]),
            Text(escape(f"{host['machine']} / {host['pid']}")),
        )
    out.print(table)
    return 0
