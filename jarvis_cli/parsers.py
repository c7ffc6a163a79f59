"""The parsers of `jarvis quarantine`, `jarvis completion` and `jarvis store`, beside
`jarvis_cli.build_parser` (which adds them), to keep that module to a size one can read."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

Flags = Callable[..., None]


def add_quarantine(commands: Any, flags: Flags) -> None:
    p = commands.add_parser(
        "quarantine", help="the files the host quarantined, and --replay to put one back"
    )
    p.add_argument("--replay", default=None, metavar="NAME",
                   help="put this quarantined file back for the host to ingest again")  # fmt: skip
    p.add_argument("--limit", type=int, default=100, metavar="N", help="at most N (default 100)")
    flags(p, acts=True)
    p.set_defaults(handler="quarantine.run")


def add_completion(commands: Any) -> None:
    p = commands.add_parser("completion", help="a shell completion script for bash or zsh")
    p.add_argument("shell", choices=("bash", "zsh"))
    p.set_defaults(handler="completion.run")


def add_store(commands: Any, parser_class: type[argparse.ArgumentParser], flags: Flags) -> None:
    p = commands.add_parser("store", help="the store itself: its size and retention")
    store = p.add_subparsers(
        dest="what", metavar="ACTION", required=True, parser_class=parser_class
    )
    p = store.add_parser(
        "stats", help="rows and bytes per table, an event's cost, what retention would remove"
    )
    p.add_argument(
        "--keep-days",
        type=int,
        default=None,
        metavar="N",
        help="preview keeping N days of every table (default: [store] in jarvis.toml)",
    )
    flags(p)
    p.set_defaults(handler="store_stats.run")
