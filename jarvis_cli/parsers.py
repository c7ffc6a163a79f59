"""The parsers of `jarvis repo`, `quarantine`, `completion`, `config` and `store`, beside
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


def add_repo(commands: Any, parser_class: type[argparse.ArgumentParser], flags: Flags) -> None:
    p = commands.add_parser("repo", help="the repositories runs work in (jarvis.toml)")
    repo = p.add_subparsers(dest="what", metavar="ACTION", required=True, parser_class=parser_class)
    p = repo.add_parser("add", help="name a repository: a path on this host or a URL to clone")
    p.add_argument("name", metavar="OWNER/NAME")
    p.add_argument("source", metavar="PATH|URL")
    p.add_argument("--base-ref", default=None, metavar="REF",
                   help="what a run's worktree starts from (default: main)")  # fmt: skip
    p.add_argument("--remote", default=None, metavar="NAME",
                   help="the remote to push the base branch to after a merge")  # fmt: skip
    p.add_argument("--merge", default="auto-merge", choices=("auto-merge", "recommend-only"),
                   help="what approving a run does with its branch")  # fmt: skip
    p.add_argument("--replace", action="store_true", help="change a repository already named")
    flags(p)
    p.set_defaults(handler="repo.add")
    p = repo.add_parser("list", help="every repository, its source and whether it is here")
    flags(p)
    p.set_defaults(handler="repo.list_repos")
    p = repo.add_parser("remove", help="take a repository out of jarvis.toml")
    p.add_argument("name", metavar="OWNER/NAME")
    flags(p)
    p.set_defaults(handler="repo.remove")


def add_config(commands: Any, parser_class: type[argparse.ArgumentParser], flags: Flags) -> None:
    p = commands.add_parser("config", help="your own settings: theme, keys, notifications")
    personal = p.add_subparsers(dest="what", metavar="ACTION", required=True,
                                parser_class=parser_class)  # fmt: skip
    p = personal.add_parser(
        "check",
        help="read $XDG_CONFIG_HOME/jarvis/config.toml as the console does; say what is wrong",
    )
    flags(p)
    p.set_defaults(handler="personal.check")
    p = personal.add_parser(
        "keys", help="every key of the console: its binding id (for [keymap]), keys and action"
    )
    flags(p)
    p.set_defaults(handler="personal.keys")


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
