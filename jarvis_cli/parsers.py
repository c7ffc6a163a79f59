"""The parsers of `jarvis quarantine` and `jarvis completion`, beside `jarvis_cli.build_parser`
(which adds them): that module holds the commands that were there first."""

from __future__ import annotations

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
