"""Run commands: dispatch, runs, show, the operator actions, and the journal.

Each opens the workspace's store (only ``dispatch`` creates one; the reading commands need only
read access), does one thing through ``core``, and exits 0 when it was done, 1 when it was
refused (invalid, unauthorized, illegal, stale, duplicate, not found), 2 on a usage or I/O error.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from typing import Any

from rich.table import Table
from rich.text import Text

from core.lifecycle import RunState
from core.service.actions import operator_name
from core.service.errors import ServiceError
from core.service.text import found_kinds, usage_line
from jarvis_cli.inputs import UsageError, read_input
from jarvis_cli.opening import age, open_store, reopen, workspace_root
from jarvis_cli.output import (
    console,
    data,
    dumps,
    emit_json,
    errors_table,
    fields,
    verdict_line,
    whole_when_piped,
    write_error,
)
from jarvis_cli.trouble import print_run_trouble, refusals_line
from jarvis_tui.state_look import merge_text, run_state_text

__all__ = ["age", "dispatch", "journal", "open_store", "runs", "show", "workspace_root"]


# -- dispatch ---------------------------------------------------------------------------------


def dispatch(args: argparse.Namespace) -> int:
    from core.service.documents import MAX_DOCUMENT_BYTES
    from core.service.setup import universal_default

    data = read_input(args.path, limit=MAX_DOCUMENT_BYTES)
    with open_store(args, access="create") as store:
        try:
            # The workspace may ask for the universal checklist on every dispatch.
            universal = universal_default(workspace_root(args))
        except ServiceError as exc:
            raise UsageError(exc.code, exc.message) from None
        result = store.submit(
            data,
            source_lane=args.source,
            target_lane=args.target,
            actor=operator_name(args.operator),
            idempotency_key=args.idempotency_key,
            universal_default=universal,
        )
    if args.json:
        emit_json(result.to_json())
    else:
        out = console()
        out.print(verdict_line(result.accepted, result.outcome, result.message))
        # The sentence above already says what a field error repeating it would.
        if further := result.further_errors:
            out.print(errors_table([e.to_json() for e in further]))
    return 0 if result.accepted else 1


# -- reading ----------------------------------------------------------------------------------


def states_of(values: list[str] | None) -> tuple[str, ...]:
    chosen: list[str] = []
    for value in values or []:
        for part in value.split(","):
            part = part.strip()
            if part not in set(RunState):
                raise UsageError(
                    "unknown_state",
                    f"--state {part!r} is not a run state; use one of "
                    f"{', '.join(s.value for s in RunState)}.",
                )
            chosen.append(part)
    return tuple(chosen)


def runs(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("usage", "--limit must be at least 1.")
    states = states_of(args.state)
    now = datetime.now(UTC)
    with open_store(args, access="read") as store:
        rows = store.runs(states=states, lane=args.lane, limit=args.limit)
        refused, refused_line = refusals_line(store, now)
    if args.json:
        emit_json({"runs": [store.summary_of(r) for r in rows], "quarantined_last_24h": refused})
        return 0
    out = console()
    # A terminal gets a table that fits it; a pipe gets every value whole, one line a run, for
    # grep and cut (cut to 80 columns it said "l…" for a lane).
    piped = whole_when_piped(out)
    table = Table(title=f"{len(rows)} run(s)", title_justify="left", expand=not piped)
    # Identity and state keep their width at 80 columns; the progress text gives way.
    table.add_column("run", no_wrap=True, min_width=12)
    table.add_column("lane", no_wrap=True, overflow="ellipsis", max_width=None if piped else 16)
    table.add_column("state", no_wrap=True, min_width=18)
    table.add_column("retry", justify="right", min_width=5)
    table.add_column("age", justify="right", no_wrap=True, min_width=4)
    table.add_column("last progress", overflow="ellipsis", no_wrap=True, ratio=1)
    flagged = False
    for row in rows:
        run_cell = data(row["run_id"])
        if found_kinds(row.get("secrets_found")):
            run_cell.append(" ⚠", style="bold yellow")
            flagged = True
        table.add_row(
            run_cell,
            data(row["lane"]),
            run_state_text(row),
            str(row["retry_count"]),
            age(row["updated_at"], now),
            data(row["last_progress_summary"] or "", "dim"),
        )
    out.print(table)
    if flagged:
        note = " in what the marked runs' workers sent — jarvis show RUN_ID"
        out.print(Text.assemble(("⚠ secrets masked", "bold yellow"), note))
    if refused_line is not None:
        out.print(refused_line)
    return 0


def show(args: argparse.Namespace) -> int:
    from jarvis_cli.show_progress import events_wanted, progress_table, retention_lines

    wanted = events_wanted(args)
    with open_store(args, access="read") as store:
        detail = store.detail(args.run_id, events=wanted)
    if detail is None:
        refusal = {"code": "not_found", "message": f"There is no run {args.run_id}."}
        if args.json:
            emit_json({"run": None, "refusal": refusal})
        else:
            console().print(verdict_line(False, refusal["message"]))
        return 1
    if args.json:
        emit_json({"run": detail, "refusal": None})
        return 0
    out = console()
    out.print(Text.assemble(("run ", "dim"), data(detail["run_id"], "bold"), "  ",
                            run_state_text(detail)))  # fmt: skip
    names = ("lane", "host", "source_lane", "task_type", "retry_count", "version", "state_reason",
             "override_reason", "overridden_by", "created_at", "updated_at",
             "last_progress_summary", "commit_sha", "pr_url", "sandbox")  # fmt: skip
    out.print(fields((name, detail[name]) for name in names if detail.get(name) not in (None, "")))
    if used := usage_line(detail.get("usage")):
        out.print(Text.assemble(("  used  ", "dim"), used))
    if unread := (detail.get("usage") or {}).get("unreadable"):
        # Its figures are unknown: what is shown above is only what could be read.
        out.print(Text.assemble(("  ! usage could not be read: ", "bold yellow"), data(unread)))
    if detail.get("unverified"):
        # The claims of its completion could not be checked against git: say so up front.
        out.print(Text.assemble(("  ? unverified: ", "bold yellow"), data(detail["unverified"])))
    if merge := detail.get("merge"):
        out.print(Text.assemble("  ", merge_text(merge)))
    stat = detail.get("diff_stat")
    if stat:
        out.print(
            Text.assemble(
                ("  diff: ", "dim"),
                f"{stat['files']} file(s) ",
                (f"+{stat['additions']}", "green"),
                " ",
                (f"-{stat['deletions']}", "red"),
                (f"  (jarvis diff {detail['run_id']})", "dim"),
            )
        )
    if detail.get("secrets_found"):
        # The values are masked everywhere they are kept; the kinds say what may need rotating.
        kinds = ", ".join(detail["secrets_found"])
        out.print(Text.assemble(("  ⚠ secrets masked: ", "bold yellow"), data(kinds)))
    if detail["gates"]:
        gates = Table(title="gates", title_justify="left")
        for column in ("attempt", "gate", "", "detail"):
            gates.add_column(column)
        for gate in detail["gates"]:
            mark = {
                "passed": Text("✓", style="green"),
                "not_checked": Text("?", style="yellow"),
            }.get(gate.get("status", ""), Text("✗", style="red"))
            gates.add_row(str(gate["attempt"]), data(gate["name"]), mark, data(gate["detail"]))
        out.print(gates)
    if detail["steers"]:
        steers = Table(title="steers", title_justify="left")
        for column in ("steer", "status", "by", "created", "message"):
            steers.add_column(column, overflow="fold")
        for steer in detail["steers"]:
            steers.add_row(data(steer["steer_id"]), data(steer["status"]),
                           data(steer["operator"]), data(steer["created_at"]),
                           data(steer["message"]))  # fmt: skip
        out.print(steers)
    if progress := progress_table(detail):
        out.print(progress)
    for line in retention_lines(detail):
        out.print(line)
    audit = Table(title="audit", title_justify="left")
    for column in ("at", "who", "action", "from → to", "reason"):
        audit.add_column(column, overflow="fold")
    for row in detail["audit"]:
        audit.add_row(data(row["at"]), data(row["actor"]), data(row["action"]),
                      data(f"{row['from_state'] or '—'} → {row['to_state'] or '—'}"),
                      data(row["reason"] or ""))  # fmt: skip
    out.print(audit)
    print_run_trouble(out, detail, workspace_root(args))
    return 0


# -- journal ----------------------------------------------------------------------------------


def _print_entry(entry: dict[str, Any], as_json: bool) -> None:
    decoded = entry
    if as_json:
        emit_json(decoded)
        return
    # The payload shown decoded and written again: in its stored JSON a control inside a key is
    # a ``\\u001b`` escape, six characters of text through which no mask reads the key.
    payload = decoded["payload"]
    shown = payload if isinstance(payload, str) else dumps(payload)
    # One row of columns, not one line: what wraps stays in its column, under no seq.
    line = Table.grid(padding=(0, 0, 0, 1))
    line.add_column(justify="right", no_wrap=True, style="dim", min_width=8)
    line.add_column(no_wrap=True, style="dim")
    line.add_column(overflow="fold", style="bold", max_width=32)
    line.add_column(overflow="fold", max_width=16)
    line.add_column(overflow="fold", ratio=1)
    line.add_row(
        str(entry["seq"]),
        str(entry["at"]),
        data(entry["run_id"]),
        data(entry["kind"]),
        Text.assemble(data(shown), data(f"  by {entry['actor']}", "dim")),
    )
    console().print(line)


def _print_cut(since: int, horizon: int, as_json: bool) -> None:
    """Entries after ``since`` and below ``horizon`` may have been removed by retention."""
    if as_json:
        emit_json({"history_cut": {"since": since, "horizon": horizon}})
        return
    write_error(
        f"jarvis: journal entries after {since} and before {horizon} may have been removed by "
        "retention ([store] in jarvis.toml); the entries that remain follow."
    )


def journal(args: argparse.Namespace) -> int:
    """Print journal rows after ``--since``; with ``--follow``, keep tailing until interrupted."""
    seq = args.since
    told = 0
    with open_store(args, access="read") as first:
        store = first
        try:
            while True:
                batch = store.journal(seq, limit=1000)
                cut = store.journal_cut(seq)
                if cut is not None and cut != told:
                    _print_cut(seq, cut, args.json)  # never a silent gap
                    told = cut
                for entry in batch:
                    _print_entry(entry, args.json)
                    seq = entry["seq"]
                if batch and len(batch) == 1000:
                    continue  # more is waiting: keep reading without sleeping
                if not args.follow:
                    return 0
                # A 50 ms poll of an indexed range query is cheap and keeps a change on screen
                # well under a tenth of a second after its commit, across processes.
                time.sleep(args.poll)
                if store.immutable and store.path is not None:
                    # Opened as the file was (a read-only directory with no writer): only a new
                    # open sees what a writer that started since has committed.
                    fresh = reopen(args, store)
                    if store is not first:
                        store.close()
                    store = fresh
        finally:
            if store is not first:
                store.close()
