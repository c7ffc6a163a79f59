"""``jarvis approve|retry|cancel|override`` on many runs: ``A B …`` or a ``--state``/``--lane``
selection, each run's result said (docs/cli.md, "Many runs at once").

The engine acts on each run on its own (`core.service.bulk`), exactly once, as for one run.
A selection can match more than was meant, so it acts only with ``--yes``; without it, it says
what it would do and does nothing (exit 2, ``confirmation_required``). ``--dry-run`` says what
would be done to named runs or a selection, and does nothing.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.text import Text

from core.service.actions import ACTIONS, availability, operator_name
from core.service.fleet import Fleet
from jarvis_cli.inputs import UsageError
from jarvis_cli.opening import open_store
from jarvis_cli.output import console, data, emit_json

#: The runs a selection left alone that the readable output names (it counts them all).
LEFT_SHOWN = 10


def _selects(args: argparse.Namespace) -> bool:
    return bool(args.state) or args.lane is not None


def single_run(args: argparse.Namespace) -> str | None:
    """The one run a verb names, or None when it names many or a selection (`run` acts)."""
    if _selects(args) and args.run_ids:
        raise UsageError("usage", "Give run ids or a --state/--lane selection, not both.")
    if not _selects(args) and not args.run_ids:
        raise UsageError(
            "usage", f"jarvis {args.command} needs a run id, several, or --state/--lane."
        )
    if len(args.run_ids) == 1 and not args.dry_run and not args.yes:
        return str(args.run_ids[0])
    if args.expect_version is not None:
        raise UsageError("usage", "--expect-version applies to one run; give only one run id.")
    return None


def _states(args: argparse.Namespace) -> tuple[str, ...]:
    from jarvis_cli.runs import states_of

    return states_of(args.state)


def run(args: argparse.Namespace) -> int:
    """Act on every run named or selected, each on its own, and say what came of each."""
    entry = ACTIONS[args.action]
    reason = getattr(args, "reason", None)
    options = {o.name: getattr(args, o.name) for o in entry.options if o.name != "reason"}
    left: list[tuple[str, str]] = []
    with open_store(args, access="read" if args.dry_run else "write") as store:
        if _selects(args):
            chosen = store.select_runs(entry.name, states=_states(args), lane=args.lane)
            run_ids, left = chosen.applies, chosen.left
            if not args.yes and not args.dry_run:
                if not args.json:
                    _show_plan(args, _plan(store, entry.name, run_ids), left)
                raise UsageError(
                    "confirmation_required",
                    f"The selection matches {len(run_ids)} run(s) to {args.command}; nothing "
                    "was done. Add --yes to act on them (--dry-run lists them).",
                )
        else:
            run_ids = list(dict.fromkeys(args.run_ids))
        if args.dry_run:
            plan = _plan(store, entry.name, run_ids)
            if args.json:
                emit_json({"action": args.command, "dry_run": True, "results": plan,
                           "left_alone": _left_json(left)})  # fmt: skip
            else:
                _show_plan(args, plan, left)
            return 0
        results = store.act_on_runs(entry.name, run_ids, operator_name(args.operator),
                                    reason=reason, options=options, strict=True)  # fmt: skip
    done = sum(1 for r in results if r.ok)
    if args.json:
        emit_json({"action": args.command, "ok": done == len(results), "done": done,
                   "refused": len(results) - done, "results": [r.to_json() for r in results],
                   "left_alone": _left_json(left)})  # fmt: skip
    else:
        out = console()
        for result in results:
            note = result.message if result.ok else f"refused ({result.code}): {result.message}"
            out.print(_line(result.ok, f"{args.command} {result.run_id}", note), soft_wrap=True)
        _show_left(left)
        summary = f"{done} of {len(results)} run(s): {entry.done.lower() or args.command}"
        if done < len(results):
            summary += f"; {len(results) - done} refused"
        out.print(Text(summary, style="bold"))
    return 0 if done == len(results) else 1


def _line(ok: bool, label: str, note: str) -> Text:
    """``✓ label  note``: one line a run, whole when piped (a terminal wraps it)."""
    mark = Text("✓ ", style="bold green") if ok else Text("✗ ", style="bold red")
    return Text.assemble(mark, data(label, "bold"), "  ", data(note, "dim"))


def _plan(store: Fleet, action: str, run_ids: list[str]) -> list[dict[str, Any]]:
    """What acting would do to each run now (the engine asks again when it acts)."""
    plan: list[dict[str, Any]] = []
    for run_id in run_ids:
        row = store.run(run_id)
        if row is None:
            plan.append({"run_id": run_id, "ok": False, "code": "not_found",
                         "message": f"There is no run {run_id}."})  # fmt: skip
            continue
        can = availability(action, row)
        plan.append({"run_id": run_id, "ok": can.enabled,
                     "code": "would_act" if can.enabled else "not_applicable",
                     "message": "" if can.enabled else can.reason,
                     "state": row["state"]})  # fmt: skip
    return plan


def _show_plan(args: argparse.Namespace, plan: list[dict[str, Any]], left: list[Any]) -> None:
    out = console()
    for item in plan:
        if item["ok"]:
            label, note = f"would {args.command} {item['run_id']}", f"now {item['state']}"
        else:
            label, note = f"would not {args.command} {item['run_id']}", item["message"]
        out.print(_line(item["ok"], label, note), soft_wrap=True)
    _show_left(left)
    would = sum(1 for item in plan if item["ok"])
    out.print(Text(f"{would} of {len(plan)} run(s) would be acted on; nothing was done.",
                   style="bold"))  # fmt: skip


def _show_left(left: list[tuple[str, str]]) -> None:
    if not left:
        return
    out = console()
    out.print(Text(f"{len(left)} matched run(s) left alone: the action cannot apply to them",
                   style="dim"))  # fmt: skip
    for run_id, why in left[:LEFT_SHOWN]:
        out.print(Text.assemble("  ", data(run_id), "  ", data(why, "dim")))
    if len(left) > LEFT_SHOWN:
        out.print(Text(f"  and {len(left) - LEFT_SHOWN} more (--json lists them all)", style="dim"))


def _left_json(left: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"run_id": run_id, "message": why} for run_id, why in left]
