"""The operator actions on the command line: every verb's handler (`jarvis_cli.verbs` builds
the verbs from the engine's registry).

`run` is every such verb's handler: it makes the request from what was parsed, carries it out
with the engine's `act`, and says what came of it: done (exit 0) or refused (exit 1), or, for
a verb with a rendering of its own (`RENDERINGS`), as that says.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from rich.text import Text

from core.service.action_types import ActionRequest, OperatorAction, Outcome
from core.service.actions import ACTIONS, operator_name
from jarvis_cli.opening import open_store
from jarvis_cli.output import console, data, emit_json, verdict_line
from jarvis_tui.state_look import run_state_text

#: Verbs whose outcome is shown their own way: verb → ``module.function`` of ``jarvis_cli``,
#: imported when the verb runs.
RENDERINGS: dict[str, str] = {"verify": "criteria.verified"}


def request_of(entry: OperatorAction, args: argparse.Namespace) -> ActionRequest:
    """The request a parsed verb makes."""
    options = {option.name: getattr(args, option.name) for option in entry.options}
    return ActionRequest(
        entry.name,
        args.run_id,
        operator_name(args.operator),
        args.expect_version,
        options,
        strict=True,  # a command line refuses an unusable jarvis.toml rather than guess
    )


def run(args: argparse.Namespace) -> int:
    """Every action verb: the request, the engine's `act`, what came of it."""
    entry = ACTIONS[args.action]
    if hasattr(args, "run_ids"):  # a verb that takes many runs (`jarvis_cli.verbs.BULK_VERBS`)
        from jarvis_cli import bulk

        one = bulk.single_run(args)
        if one is None:
            return bulk.run(args)
        args.run_id = one
    request = request_of(entry, args)
    with open_store(args, access="write") as store:
        outcome = store.act(request)
    rendering = RENDERINGS.get(args.command)
    if rendering is not None:
        module, _, function = rendering.partition(".")
        show: Callable[[argparse.Namespace, Outcome], int] = getattr(
            importlib.import_module(f"jarvis_cli.{module}"), function
        )
        return show(args, outcome)
    return moved(args, outcome)


def moved(args: argparse.Namespace, outcome: Outcome) -> int:
    """An action's outcome: the run as it is now, or the engine's refusal."""
    if args.json:
        emit_json(outcome.to_json())
    else:
        out = console()
        if outcome.ok and outcome.run:
            out.print(verdict_line(True, f"{args.command} {outcome.run['run_id']}", ""))
            out.print(Text.assemble("  now ", run_state_text(outcome.run)))
            if outcome.merge:
                out.print(Text.assemble("  ", data(outcome.merge["note"])))
        elif outcome.refusal:
            out.print(verdict_line(False, f"refused ({outcome.refusal.code})",
                                   outcome.refusal.message))  # fmt: skip
    return 0 if outcome.ok else 1
