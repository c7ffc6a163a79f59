"""Run commands: dispatch, runs, show, the operator actions, and the journal.

Each opens the workspace's store (only ``dispatch`` creates one; the reading commands need only
read access), does one thing through ``core``, and exits 0 when it was done, 1 when it was
refused (invalid, unauthorized, illegal, stale, duplicate, not found), 2 on a usage or I/O error.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from rich.table import Table
from rich.text import Text

from core import operator_actions
from core.contracts.jsondoc import MAX_DOCUMENT_BYTES
from core.identity import operator_name
from core.intake import submit_dispatch
from core.lifecycle import RunState
from core.run_secrets import found_kinds
from core.run_views import journal_entry, run_detail, run_summary
from core.store.api import RunStore
from core.store.errors import StoreError
from core.store.location import open_store as open_at
from core.store.location import store_location
from core.usage_text import usage_line
from core.workspace import Workspace, WorkspaceError
from jarvis_cli.inputs import UsageError, read_input
from jarvis_cli.output import (
    console,
    data,
    dumps,
    emit_json,
    errors_table,
    fields,
    verdict_line,
    write_error,
)
from jarvis_cli.trouble import print_run_trouble, refusals_line
from jarvis_tui.ages import in_largest_unit, seconds_since
from jarvis_tui.state_look import run_state_text


def age(stamp: str, now: datetime) -> str:
    """How long ago an ISO timestamp was, in the largest whole unit: 42s, 7m, 3h, 2d."""
    seconds = seconds_since(stamp, now)
    return "?" if seconds is None else in_largest_unit(seconds)


#: How long a command waits for another process's write lock before it gives up (exit 2,
#: ``store_busy``). A host's transactions take milliseconds; 30 s means something is stuck.
BUSY_TIMEOUT_S = 30.0

#: How a command uses the store: ``create`` makes the workspace when there is none (and says so),
#: ``write`` changes runs in an existing one, ``read`` needs only read access and writes nothing.
Access = Literal["create", "write", "read"]


def _open(location: str | Path, access: Access) -> RunStore:
    if access != "read":
        return open_at(location, create=access == "create", busy_timeout_s=BUSY_TIMEOUT_S)
    try:
        return open_at(location, read_only=True, busy_timeout_s=BUSY_TIMEOUT_S)
    except StoreError as exc:
        if exc.code != "store_outdated":
            raise
        behind = exc
    # A store older than this code's schema: brought up to date once, by a user who may.
    try:
        open_at(location, create=False, busy_timeout_s=BUSY_TIMEOUT_S).close()
    except StoreError as exc:
        raise (behind if exc.code == "store_read_only" else exc) from None
    return open_at(location, read_only=True, busy_timeout_s=BUSY_TIMEOUT_S)


def workspace_root(args: argparse.Namespace) -> Path:
    """The workspace a command that opened its store (`open_store`) works in."""
    return Workspace.resolve(getattr(args, "workspace", None), create=False).root


@contextmanager
def open_store(args: argparse.Namespace, *, access: Access) -> Iterator[RunStore]:
    """The workspace's store for one command; any store problem is an I/O error (exit 2).

    The store is the workspace's jarvis.db unless ``--db``, ``JARVIS_DB`` or ``[store] url``
    names another (`core.store.location`). Opening refuses a missing workspace (unless
    ``access`` is ``create``), an empty, damaged or too new store, a database server that
    cannot be reached; a fault while the command uses it (disk full, lock held past the busy
    timeout, read-only, I/O error, a lost connection) ends the command the same way, with the
    store's sentence and code, never as a verdict on what the command was given.
    """
    try:
        workspace = Workspace.resolve(getattr(args, "workspace", None), create=access == "create")
        store = _open(store_location(workspace.root, getattr(args, "db", None)), access)
    except WorkspaceError as exc:
        raise UsageError(exc.code, str(exc)) from None
    except StoreError as exc:
        raise UsageError(exc.code, exc.message) from None
    if store.created:
        write_error(f"jarvis: created a new workspace store at {store.location}.")
    try:
        yield store
    except StoreError as exc:
        raise UsageError(exc.code, exc.message) from None
    finally:
        store.close()


# -- dispatch ---------------------------------------------------------------------------------


def dispatch(args: argparse.Namespace) -> int:
    from core.host.config import ConfigError, load_config

    data = read_input(args.path, limit=MAX_DOCUMENT_BYTES)
    with open_store(args, access="create") as store:
        try:
            # The workspace may ask for the universal checklist on every dispatch.
            universal = load_config(workspace_root(args)).criteria.universal
        except ConfigError as exc:
            raise UsageError("config_unusable", str(exc)) from None
        result = submit_dispatch(
            store,
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


def _states(values: list[str] | None) -> tuple[str, ...]:
    chosen: list[str] = []
    for value in values or []:
        for part in value.split(","):
            part = part.strip()
            if part not in {s.value for s in RunState}:
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
    states = _states(args.state)
    now = datetime.now(UTC)
    with open_store(args, access="read") as store:
        rows = store.list_runs(states=states, lane=args.lane, limit=args.limit)
        refused, refused_line = refusals_line(store, now)
    if args.json:
        emit_json({"runs": [run_summary(r) for r in rows], "quarantined_last_24h": refused})
        return 0
    table = Table(title=f"{len(rows)} run(s)", title_justify="left", expand=True)
    # Identity and state keep their width at 80 columns; the progress text gives way.
    table.add_column("run", no_wrap=True, min_width=12)
    table.add_column("lane", no_wrap=True, overflow="ellipsis", max_width=16)
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
    out = console()
    out.print(table)
    if flagged:
        note = " in what the marked runs' workers sent — jarvis show RUN_ID"
        out.print(Text.assemble(("⚠ secrets masked", "bold yellow"), note))
    if refused_line is not None:
        out.print(refused_line)
    return 0


def show(args: argparse.Namespace) -> int:
    from jarvis_cli.show_progress import events_wanted, progress_table

    wanted = events_wanted(args)
    with open_store(args, access="read") as store:
        detail = run_detail(store, args.run_id, events=wanted)
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


# -- operator actions -------------------------------------------------------------------------

Act = Callable[[RunStore, str, str], operator_actions.ActionResult]


def _act(args: argparse.Namespace, act: Act) -> int:
    with open_store(args, access="write") as store:
        result = act(store, args.run_id, operator_name(args.operator))
    if args.json:
        emit_json(result.to_json())
    else:
        out = console()
        if result.ok and result.run:
            out.print(verdict_line(True, f"{args.command} {result.run['run_id']}", ""))
            now = run_state_text(result.run)
            out.print(Text.assemble("  now ", now))
            if result.merge:
                out.print(Text.assemble("  ", data(result.merge["note"])))
        elif result.refusal:
            out.print(
                verdict_line(False, f"refused ({result.refusal.code})", result.refusal.message)
            )
    return 0 if result.ok else 1


def approve(args: argparse.Namespace) -> int:
    return _act(
        args,
        lambda s, r, o: operator_actions.approve(
            s, r, o, expected_version=args.expect_version, merge=not args.no_merge
        ),
    )


def retry(args: argparse.Namespace) -> int:
    return _act(
        args,
        lambda s, r, o: operator_actions.retry(
            s, r, o, expected_version=args.expect_version, fresh=args.fresh
        ),
    )


def override(args: argparse.Namespace) -> int:
    return _act(
        args,
        lambda s, r, o: operator_actions.override(
            s, r, o, args.reason, expected_version=args.expect_version
        ),
    )


def cancel(args: argparse.Namespace) -> int:
    return _act(
        args,
        lambda s, r, o: operator_actions.cancel(
            s, r, o, args.reason, expected_version=args.expect_version
        ),
    )


def steer(args: argparse.Namespace) -> int:
    return _act(
        args,
        lambda s, r, o: operator_actions.steer(
            s, r, o, args.message, expected_version=args.expect_version
        ),
    )


# -- journal ----------------------------------------------------------------------------------


def _print_entry(entry: dict[str, Any], as_json: bool) -> None:
    decoded = journal_entry(entry)
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


def journal(args: argparse.Namespace) -> int:
    """Print journal rows after ``--since``; with ``--follow``, keep tailing until interrupted."""
    seq = args.since
    with open_store(args, access="read") as first:
        store = first
        try:
            while True:
                batch = store.journal_since(seq, limit=1000)
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
                    fresh = _open(store.path, "read")
                    if store is not first:
                        store.close()
                    store = fresh
        finally:
            if store is not first:
                store.close()
