"""``jarvis quarantine``: the files the host moved aside in ``data/ipc/errors/``, with why, and
``--replay NAME`` to put one back for the host to ingest again (`core.service.quarantine`)."""

from __future__ import annotations

import argparse

from rich.text import Text

from core.service.actions import operator_name
from core.service.quarantine import Quarantined, quarantined, replay_quarantined
from core.service.workspace import Workspace, WorkspaceError
from jarvis_cli.inputs import UsageError
from jarvis_cli.output import console, emit_json, escape


def run(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("usage", "--limit must be at least 1.")
    try:
        root = Workspace.resolve(args.workspace, create=False).root
    except WorkspaceError as exc:
        raise UsageError(exc.code, str(exc)) from None
    if args.replay is not None:
        done = replay_quarantined(root, args.replay, operator_name(args.operator))
        if args.json:
            emit_json(done.to_json())
        else:
            mark = Text("✓ replayed  ", "bold green") if done.ok else Text(
                f"✗ refused ({done.code})  ", "bold red")  # fmt: skip
            console().print(Text.assemble(mark, escape(done.message)), soft_wrap=True)
        return 0 if done.ok else 1
    files, total = quarantined(root, limit=args.limit)
    if args.json:
        emit_json({"quarantined": [f.to_json() for f in files], "total": total})
        return 0
    out = console()
    more = f", newest {len(files)} shown" if total > len(files) else ""
    out.print(Text(f"{total} quarantined file(s){more}, newest first", style="bold"))
    for entry in files:
        _print(entry)
    return 0


def _print(entry: Quarantined) -> None:
    out = console()
    at = entry.quarantined_at
    when = f"{at[:10]} {at[11:19]}Z" if len(at) >= 19 and at[10] == "T" else at
    out.print(Text.assemble(("  " + escape(when), "dim"), "  ", (escape(entry.code), "yellow"),
                            ("  from ", "dim"), escape(entry.lane or "an unknown folder")),
              soft_wrap=True)  # fmt: skip
    out.print(Text("    " + escape(entry.message)), soft_wrap=True)
    out.print(Text.assemble(("    name ", "dim"), (escape(entry.name), "bold")), soft_wrap=True)
    if entry.replayable:
        state = Text("    replayable: jarvis quarantine --replay with its name", style="dim")
    else:
        state = Text("    not replayable: " + escape(str(entry.why_not)), style="dim")
    out.print(state, soft_wrap=True)
