"""The operator actions' verbs, built from the engine's registry (`core.service.actions`).

Every `jarvis` command builds its parser, the console's and the host's included: this module
loads the registry and nothing else (each verb's handler, `jarvis_cli.acting.run`, is imported
when a verb runs).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from core.service.actions import ACTIONS

#: The verbs that take many runs, or a selection of them (`core.service.bulk.BULK_ACTIONS`; the
#: parser names them without loading the engine).
BULK_VERBS = ("retry", "approve", "cancel", "override")

Flags = Callable[..., None]


def add_verbs(commands: Any, parser_class: type[argparse.ArgumentParser], flags: Flags) -> None:
    """A subcommand of ``commands`` for each registered action with a verb.

    Args:
        commands: The command line's subparsers.
        parser_class: The parser class to add (the command line's own).
        flags: Adds the workspace flags of a command that acts (``flags(parser, acts=True)``).
    """
    for entry in ACTIONS.values():
        if entry.verb is None:
            continue
        p = commands.add_parser(entry.verb, help=entry.verb_line)
        assert isinstance(p, parser_class)
        if entry.verb in BULK_VERBS:
            _bulk_arguments(p)
        else:
            p.add_argument("run_id", metavar="RUN_ID")
        for option in entry.options:
            if option.flag is None:
                p.add_argument(option.name, metavar=option.metavar or option.name.upper())
            elif option.takes == "flag":
                p.add_argument(option.flag, dest=option.name, action="store_true",
                               help=option.help or None)  # fmt: skip
            else:
                p.add_argument(option.flag, dest=option.name, required=option.required,
                               default=None, metavar=option.metavar,
                               help=option.help or None)  # fmt: skip
        p.add_argument("--expect-version", type=int, default=None, metavar="N",
                       help=entry.expect_version_help)  # fmt: skip
        flags(p, acts=True)
        p.set_defaults(handler="acting.run", action=entry.name)


def _bulk_arguments(p: argparse.ArgumentParser) -> None:
    """Run ids, or a selection of runs, for a verb that takes many (docs/cli.md, "Many runs")."""
    p.add_argument("run_ids", nargs="*", metavar="RUN_ID",
                   help="the run, or several (each acted on by itself)")  # fmt: skip
    p.add_argument("--state", action="append", metavar="S",
                   help="select the runs in these states (repeat or comma-separate)")  # fmt: skip
    p.add_argument("--lane", default=None, metavar="L", help="select the runs of this lane")
    p.add_argument("--yes", action="store_true",
                   help="act on every run a --state/--lane selection matches")  # fmt: skip
    p.add_argument("--dry-run", action="store_true",
                   help="say what would be done to each run, and do nothing")  # fmt: skip


def add_lane_verbs(
    commands: Any, parser_class: type[argparse.ArgumentParser], flags: Flags
) -> None:
    """``jarvis lane VERB NAME`` for each lane action (`core.service.lanes.LANE_ACTIONS`), and
    ``jarvis lane list``."""
    from core.service.lanes import LANE_ACTIONS

    p = commands.add_parser("lane", help="the lanes: list them, pause or resume one")
    verbs = p.add_subparsers(dest="what", metavar="ACTION", required=True,
                             parser_class=parser_class)  # fmt: skip
    p = verbs.add_parser("list", help="every lane: its worker, sandbox, concurrency, runs, pause")
    flags(p)
    p.set_defaults(handler="lanes.list_lanes")
    for entry in LANE_ACTIONS.values():
        p = verbs.add_parser(entry.verb, help=entry.help.replace("the selected lane", "a lane"))
        p.add_argument("lane", metavar="NAME")
        if entry.asks == "reason":
            p.add_argument("--reason", required=True, metavar="TEXT", help="why (recorded)")
        flags(p, acts=True)
        p.set_defaults(handler="lanes.act", action=entry.name)
