"""The ``jarvis`` command line (``python -m jarvis_cli``).

Its own package, beside the engine (`core`) and the console (`jarvis_tui`), so that commands that
need no screen never load one: each command's handler is imported only when the command runs,
and only `jarvis tui` and `jarvis demo` import the console, Textual with it. `jarvis host`, the
long-running service `ensure_host` starts, never imports `jarvis_tui` (an import-linter contract,
and tests/cli/test_host_imports.py on a running host).

Exit codes are part of the interface, because scripts depend on them: 0 valid / accepted,
1 invalid / rejected, 2 usage or I/O error (a store that cannot be opened, or fails while in use,
included: never a traceback, never a verdict on the input). With ``--json`` every command writes
exactly one JSON object to stdout; without it, a readable rendering.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from core.service.errors import ServiceError, StoreError, as_store_error
from jarvis_cli.inputs import UsageError, has_terminal
from jarvis_cli.output import usage_error, write_error
from jarvis_cli.parsers import add_completion, add_config, add_quarantine, add_repo, add_store
from jarvis_cli.verbs import add_lane_verbs, add_verbs

Handler = Callable[[argparse.Namespace], int]


def _handler(name: str) -> Handler:
    """The handler ``module.function`` of ``jarvis_cli``, imported only now.

    Each command imports just what it uses: `jarvis tui` then never loads the contract models
    or the criteria extractor, which kept a quarter of a second off the console's first paint.
    """
    module, _, function = name.partition(".")
    handler: Handler = getattr(importlib.import_module(f"jarvis_cli.{module}"), function)
    return handler


class ArgumentsError(UsageError):
    """The command line does not parse; ``usage`` is the command's usage line."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__("usage", message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse that raises `ArgumentsError` instead of printing and exiting.

    `run` reports it like every other usage error: one inert line (JSON with ``--json``), exit 2.
    ``forms`` maps a first word to a parser of its own, for a command whose first word changes
    what follows (``jarvis criteria extract PATH`` beside ``jarvis criteria RUN_ID``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.forms: dict[str, argparse.ArgumentParser] = {}

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # A form is its own parser rather than an optional positional of this one: argparse
        # fills positionals greedily at the first one, so `extract --no-universal PATH` used to
        # leave PATH unrecognised.
        if args and args[0] in self.forms:
            return self.forms[args[0]].parse_known_args(list(args[1:]), namespace)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        raise ArgumentsError(message, self.format_usage())


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="write one JSON object to stdout")


def _workspace_flags(
    parser: argparse.ArgumentParser, *, acts: bool = False, creates: bool = False
) -> None:
    made = "created if missing" if creates else "never created"
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        default=None,
        help=f"the workspace (default: $JARVIS_WORKSPACE, else ./.jarvis); {made}",
    )
    _db_flag(parser)
    if acts:
        parser.add_argument(
            "--operator",
            default=None,
            help="who is acting (default: $JARVIS_OPERATOR, else the OS user)",
        )
    _json_flag(parser)


def _db_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        default=None,
        help="the store: a postgresql:// URL or an SQLite file (default: $JARVIS_DB, else "
        "[store] url in jarvis.toml, else the workspace's jarvis.db)",
    )


def _console_flags(parser: argparse.ArgumentParser, *, workspace_help: str | None = None) -> None:
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        default=None,
        help=workspace_help
        or "the workspace (default: $JARVIS_WORKSPACE, else ./.jarvis); created if missing",
    )
    parser.add_argument(
        "--theme", default=None, metavar="NAME",
        help="jarvis-dark (default, or the theme last chosen in the palette), jarvis-light, "
        "jarvis-high-contrast or any theme the console's palette offers (nord, dracula, …)",
    )  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="jarvis",
        description="Operator console and tools for fleets of coding-agent workers.",
    )
    parser.add_argument(
        "--version", action="version", version=f"jarvis {_version()}",
        help="say which jarvis this is and exit",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    v = commands.add_parser("validate", help="check a document against its contract")
    kinds = v.add_subparsers(dest="what", metavar="WHAT", required=True, parser_class=_Parser)

    p = kinds.add_parser(
        "dispatch", help="a worker dispatch (Jarvis, OpenClaw request or dispatch record)"
    )
    p.add_argument("path", metavar="PATH|-")
    p.add_argument(
        "--as",
        dest="as_kind",
        choices=["auto", "jarvis_dispatch", "openclaw_request", "dispatch_record"],
        default="auto",
        help="validate as this kind instead of recognising it (default: auto)",
    )
    _json_flag(p)
    p.set_defaults(handler="validate.dispatch")

    p = kinds.add_parser("completion", help="a worker's output, gated against its dispatch")
    p.add_argument(
        "--dispatch", required=True, metavar="PATH", help="the dispatch the worker was given"
    )
    p.add_argument("output", metavar="OUTPUT|-")
    _json_flag(p)
    p.set_defaults(handler="validate.completion")

    p = kinds.add_parser("request", help="an OpenClaw worker request (v0)")
    p.add_argument("path", metavar="PATH|-")
    _json_flag(p)
    p.set_defaults(handler="validate.request")

    p = kinds.add_parser(
        "results", help="an OpenClaw result folder, through the scope and risk gate"
    )
    p.add_argument(
        "--request", required=True, metavar="PATH", help="the request the worker was given"
    )
    p.add_argument("dir", metavar="DIR")
    _json_flag(p)
    p.set_defaults(handler="validate.results")

    p = kinds.add_parser(
        "record", help="a versioned record (task_command/task_result/task_event/error)"
    )
    p.add_argument("path", metavar="PATH|-")
    _json_flag(p)
    p.set_defaults(handler="validate.record")

    p = kinds.add_parser("planner", help="raw planner model output (planner.v1)")
    p.add_argument("path", metavar="PATH|-")
    _json_flag(p)
    p.set_defaults(handler="validate.planner")

    p = commands.add_parser("fingerprint", help="the error.v1 fingerprint of a failure")
    p.add_argument("--class", dest="error_class", required=True, metavar="C")
    p.add_argument("--code", dest="error_code", required=True, metavar="X")
    p.add_argument("--step", dest="step_id", required=True, metavar="S")
    p.add_argument("--selector", default=None, metavar="SEL")
    p.add_argument("--url", default=None, metavar="URL")
    _json_flag(p)
    p.set_defaults(handler="validate.fingerprint_command")

    p = commands.add_parser("dispatch", help="submit a dispatch: it becomes a queued run")
    p.add_argument("path", metavar="PATH|-")
    p.add_argument(
        "--from", dest="source", default="main", metavar="LANE", help="source lane (default: main)"
    )
    p.add_argument(
        "--to", dest="target", default="jarvis-worker-1", metavar="LANE",
        help="target lane (default: jarvis-worker-1)",
    )  # fmt: skip
    p.add_argument(
        "--idempotency-key", default=None, metavar="K", help="default: the dispatch's request_id"
    )
    _workspace_flags(p, acts=True, creates=True)
    p.set_defaults(handler="runs.dispatch")

    p = commands.add_parser("runs", help="list runs, most recently updated first")
    p.add_argument(
        "--state", action="append", metavar="S", help="only these states (repeat or comma-separate)"
    )
    p.add_argument("--lane", default=None, metavar="L")
    p.add_argument(
        "--limit", type=int, default=200, metavar="N", help="at most N runs (default: 200)"
    )
    _workspace_flags(p)
    p.set_defaults(handler="runs.runs")

    p = commands.add_parser("show", help="one run with its gates, steers, events and audit trail")
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--events", type=int, default=None, metavar="N",
                   help="its newest N progress events (default 20, with --json 50)")  # fmt: skip
    _workspace_flags(p)
    p.set_defaults(handler="runs.show")

    p = commands.add_parser("diff", help="what a run changed: its files, then the patch")
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--stat", action="store_true", help="only the files and their line counts")
    _workspace_flags(p)
    p.set_defaults(handler="diff.run")

    p = commands.add_parser("logs", help="the end of a run's worker log, or follow it live")
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--attempt", type=int, default=None, metavar="N",
                   help="this attempt's log (default: the latest with logs)")  # fmt: skip
    p.add_argument("--stderr", action="store_true", help="the worker's stderr, not its stdout")
    p.add_argument("--lines", type=int, default=100, metavar="N",
                   help="the last N lines (default: 100)")  # fmt: skip
    p.add_argument("--follow", action="store_true",
                   help="then each new line, until the attempt ends or ctrl-c")  # fmt: skip
    p.add_argument("--poll", type=float, default=0.1, help=argparse.SUPPRESS)
    _workspace_flags(p)
    p.set_defaults(handler="logs.run")

    # The operator actions: a verb each, from the engine's registry of them.
    add_verbs(commands, _Parser, _workspace_flags)
    add_lane_verbs(commands, _Parser, _workspace_flags)

    p = commands.add_parser("journal", help="the change feed, as JSON lines with --json")
    p.add_argument("--since", type=int, default=0, metavar="SEQ", help="rows after this seq")
    p.add_argument("--follow", action="store_true", help="keep printing new rows until interrupted")
    p.add_argument("--poll", type=float, default=0.05, help=argparse.SUPPRESS)
    _workspace_flags(p)
    p.set_defaults(handler="runs.journal")

    p = commands.add_parser("errors", help="the IPC files the host refused, newest first")
    p.add_argument("--run", default=None, metavar="RUN_ID", help="only those of this run")
    p.add_argument("--unattached", action="store_true", help="only those naming no known run")
    p.add_argument("--limit", type=int, default=100, metavar="N", help="at most N (default 100)")
    _workspace_flags(p)
    p.set_defaults(handler="trouble.errors")

    add_quarantine(commands, _workspace_flags)

    p = commands.add_parser(
        "criteria",
        help="a run's acceptance criteria (or `criteria extract`: a task's)",
        usage="jarvis criteria RUN_ID [options]\n       jarvis criteria extract [options] PATH|-",
    )
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--add", default=None, metavar="JSON", help="append this criterion (queued)")
    p.add_argument("--remove", type=int, default=None, metavar="INDEX",
                   help="remove the criterion at this 0-based index (queued)")  # fmt: skip
    p.add_argument("--expect-version", type=int, default=None, metavar="N",
                   help="refuse if the run is no longer at this version")  # fmt: skip
    _workspace_flags(p, acts=True)
    p.set_defaults(handler="criteria.criteria")
    assert isinstance(p, _Parser)
    x = _Parser(prog="jarvis criteria extract", description="The criteria a task would get.")
    x.add_argument("path", metavar="PATH|-", help="the task: a dispatch, or plain text")
    x.add_argument("--repo", default=None, metavar="DIR",
                   help="infer commands and files from this repository")  # fmt: skip
    x.add_argument("--no-universal", action="store_true",
                   help="leave out the universal checklist")  # fmt: skip
    x.add_argument("--model-command", nargs=argparse.REMAINDER, default=None, metavar="CMD",
                   help="ask this model command first (must come last)")  # fmt: skip
    _json_flag(x)
    x.set_defaults(handler="criteria.extract", command="criteria")
    p.forms["extract"] = x

    p = commands.add_parser(
        "workers", help="the worker profiles (jarvis.toml): lanes, programs found, versions"
    )
    _workspace_flags(p)
    p.set_defaults(handler="workers.run")

    add_repo(commands, _Parser, _workspace_flags)

    p = commands.add_parser("host", help="run the engine for a workspace until interrupted")
    p.add_argument("--poll", action="store_true", help="poll the IPC tree instead of inotify")
    p.add_argument("--verbose", action="store_true", help="log more")
    p.add_argument(
        "--stop",
        action="store_true",
        help="stop the host running on the workspace (SIGTERM, then wait until it lets go)",
    )
    p.add_argument(
        "--name",
        default=None,
        metavar="NAME",
        help="this host's name among the store's hosts (default: [host] name, else "
        "MACHINE:WORKSPACE)",
    )
    p.add_argument(
        "--lanes",
        default=None,
        metavar="LANE,...",
        help="claim queued runs of these lanes only (default: [host] lanes, else every lane)",
    )
    _workspace_flags(p, creates=True)
    p.set_defaults(handler="host.run")

    p = commands.add_parser(
        "hosts", help="the hosts serving the store: lanes, heartbeats, leases, running runs"
    )
    _workspace_flags(p)
    p.set_defaults(handler="hosts.run")

    add_store(commands, _Parser, _workspace_flags)

    add_config(commands, _Parser, _json_flag)

    p = commands.add_parser("tui", help="the operator console (the default command)")
    _console_flags(p)
    _db_flag(p)
    p.add_argument(
        "--no-host",
        action="store_true",
        help="do not start a background host when none is running",
    )
    p.set_defaults(handler="tui.run")

    p = commands.add_parser(
        "serve", help="the operator console in a browser (textual-serve), loopback by default"
    )
    _console_flags(p)
    _db_flag(p)
    p.add_argument(
        "--operator",
        default=None,
        help="who the served consoles act as (default: $JARVIS_OPERATOR, else the OS user)",
    )
    p.add_argument(
        "--bind",
        default="127.0.0.1:8700",
        metavar="HOST:PORT",
        help="the address to listen on (default: 127.0.0.1:8700); any but loopback needs a token",
    )
    p.add_argument(
        "--no-host",
        action="store_true",
        help="do not start a background host when none is running",
    )
    p.set_defaults(handler="serve.run")

    p = commands.add_parser(
        "demo", help="the console on a seeded workspace with a live simulated fleet"
    )
    _console_flags(p, workspace_help="use DIR (empty or absent) instead of a temporary workspace")
    p.add_argument(
        "--keep", action="store_true", help="keep the temporary workspace when the demo ends"
    )
    p.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="S",
        help="seconds between the fleet's dispatches (default: 1.5)",
    )
    # Tests and scripted checks: run the host and the fleet for SECONDS without the console.
    p.add_argument("--no-console", type=float, default=None, metavar="SECONDS",
                   help=argparse.SUPPRESS)  # fmt: skip
    p.set_defaults(handler="demo.run")

    p = commands.add_parser(
        "samples", help="check every bundled sample through the engine, as its name says"
    )
    _json_flag(p)
    p.set_defaults(handler="samples.run")
    add_completion(commands)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jarvis-tui")
    except PackageNotFoundError:
        return "(not installed)"


#: Options every command that takes them means the same by: also understood before the
#: command (`jarvis --workspace ./ws runs`), as people who script the CLI write them.
SHARED_OPTIONS = {"--workspace": True, "--db": True, "--operator": True, "--json": False}


def shared_options_after_command(argv: Sequence[str]) -> list[str]:
    """``argv`` with the shared options written before the command moved after it (and after
    an action such as ``repo add``'s, at the end of the options: before ``--`` if any)."""
    args = list(argv)
    moved: list[str] = []
    while args and args[0].split("=", 1)[0] in SHARED_OPTIONS:
        name = args.pop(0)
        moved.append(name)
        if SHARED_OPTIONS[name.split("=", 1)[0]] and "=" not in name and args:
            moved.append(args.pop(0))
    if not moved:
        return list(argv)
    if not args:
        return ["tui", *moved]  # `jarvis --workspace ./ws` opens that workspace's console
    at = args.index("--") if "--" in args else len(args)
    return [*args[:at], *moved, *args[at:]]


def _leaf(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command parser ``args`` were parsed by: ``repo add``'s for ``jarvis repo add``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return _leaf(chosen, args)
    return parser


def run(argv: Sequence[str]) -> int:
    """Run one ``jarvis`` command and return its exit code."""
    parser = build_parser()
    given = list(argv)
    argv = shared_options_after_command(argv)
    as_json = "--json" in argv
    if (not argv or argv[0] == "tui" and "tui" not in given) and not has_terminal():
        # `jarvis` alone means the console, which needs a terminal: in a script or over `ssh
        # host jarvis` it drew into the void, hung, and left a workspace and a host behind.
        # `jarvis tui` said on purpose still tries (a test or a driver may give it a screen).
        return usage_error("no_terminal", "no terminal: jarvis alone opens the full-screen "
                           "console, which needs one. Run it in a terminal, or use jarvis runs, "
                           "jarvis show RUN_ID and the other commands in a script.",
                           as_json=as_json)  # fmt: skip
    try:
        # `jarvis` alone opens the console, as `jarvis tui` does.
        args, extras = parser.parse_known_args(list(argv) or ["tui"])
        if extras:
            # Said with the usage of the command they were given to, not jarvis's own.
            _leaf(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
    except ArgumentsError as exc:
        if not as_json:
            for line in exc.usage.rstrip("\n").splitlines():
                write_error(line)
        return usage_error(exc.code, exc.message, as_json=as_json)
    name: str | None = getattr(args, "handler", None)
    if name is None:
        parser.print_help()
        return 2
    as_json = getattr(args, "json", False)
    try:
        return _handler(name)(args)
    except UsageError as exc:
        return usage_error(exc.code, exc.message, as_json=as_json, lines=exc.lines)
    except (StoreError, ServiceError) as exc:
        return usage_error(exc.code, exc.message, as_json=as_json)
    except BrokenPipeError:
        # `jarvis ... | head` closing the pipe early is not an error worth a traceback.
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        # Every command that opens a store reports its faults with the store's path; this is
        # the last resort for one that escaped, still a sentence and an I/O error.
        error = as_store_error(exc)
        if error is None:
            raise
        return usage_error(error.code, error.message, as_json=as_json)
