"""``jarvis repo add|list|remove``: the repositories a workspace's ``jarvis.toml`` names.

Exit 0 when done, 1 when refused (the name is taken, the path is no repository, no such
repository), 2 for a usage or I/O error (a malformed name, URL, path or ref — the rules of
`core.contracts.repositories` —, no workspace, a ``jarvis.toml`` that cannot be read, is invalid
or cannot be written).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.text import Text

from core.service.hosting import host_status
from core.service.setup import (
    CONFIG_NAME,
    ConfigError,
    ConfigWriteError,
    RepoConfig,
    RepoRefused,
    add_repo,
    from_validation_error,
    load_config,
    looks_like_url,
    ref_problem,
    remove_repo,
    repo_name_problem,
    repo_path_problem,
    repo_url_problem,
)
from core.service.workspace import Workspace, WorkspaceError
from jarvis_cli.inputs import UsageError
from jarvis_cli.output import console, emit_json, escape, write_error


def _root(args: argparse.Namespace) -> Path:
    try:
        return Workspace.resolve(args.workspace, create=False).root
    except WorkspaceError as exc:
        raise UsageError(exc.code, str(exc)) from None


def _name(args: argparse.Namespace) -> str:
    problem = repo_name_problem(args.name)
    if problem:
        raise UsageError("bad_repo_name", problem)
    return str(args.name)


def _refused(args: argparse.Namespace, exc: RepoRefused, config: Path) -> int:
    if args.json:
        emit_json({"ok": False, "repo": None, "config_path": str(config),
                   "refusal": {"code": exc.code, "message": exc.message}})  # fmt: skip
    else:
        write_error(f"jarvis: {exc.message}")
    return 1


def _config_error(exc: ConfigError) -> UsageError:
    code = "io_error" if isinstance(exc, ConfigWriteError) else "config_unusable"
    return UsageError(code, str(exc))


def _describe(repo: RepoConfig) -> str:
    source = f"path {repo.path}" if repo.path is not None else f"url {repo.url}"
    remote = f", remote {repo.remote}" if repo.remote else ""
    merge = "" if repo.merge == "auto-merge" else f", {repo.merge}"
    return f"{source}, base ref {repo.base_ref}{remote}{merge}"


def add(args: argparse.Namespace) -> int:
    """``jarvis repo add OWNER/NAME PATH|URL``: name a repository in ``jarvis.toml``."""
    name = _name(args)
    for option, value in (("--base-ref", args.base_ref), ("--remote", args.remote)):
        problem = ref_problem(value) if value is not None else None
        if problem:
            raise UsageError("bad_ref", f"{option}: {problem}")
    root = _root(args)
    source: str = args.source
    where: dict[str, Any]
    if looks_like_url(source):
        problem = repo_url_problem(source)
        if problem:
            raise UsageError("bad_repo_url", problem)
        where = {"url": source}
    else:
        problem = repo_path_problem(source)
        if problem:
            raise UsageError("bad_repo_path", problem)
        # A path typed here means where the typist stands: stored absolute, so it still means
        # that folder when the host reads it from the workspace.
        where = {"path": str(Path(source).expanduser().resolve())}
    try:
        repo = RepoConfig(
            **where, base_ref=args.base_ref or "main", remote=args.remote, merge=args.merge
        )
    except ValidationError as exc:  # a control character in the path or URL, say
        problems = "; ".join(e.message for e in from_validation_error(exc))
        raise UsageError("usage", problems) from None
    config = root / CONFIG_NAME
    try:
        replaced = add_repo(root, name, repo, replace=args.replace)
    except RepoRefused as exc:
        return _refused(args, exc, config)
    except ConfigError as exc:
        raise _config_error(exc) from None
    host = host_status(root)
    if args.json:
        emit_json({"ok": True, "repo": repo.to_json(name), "replaced": replaced,
                   "config_path": str(config), "refusal": None, **_restart(host)})  # fmt: skip
    else:
        done = f"Replaced {name} in" if replaced else f"Added {name} to"
        console().print(f"{done} {config}: {_describe(repo)}.", soft_wrap=True)
        _say_restart(host, root)
    return 0


def remove(args: argparse.Namespace) -> int:
    """``jarvis repo remove OWNER/NAME``: take a repository out of ``jarvis.toml``."""
    name = _name(args)
    root = _root(args)
    config = root / CONFIG_NAME
    try:
        repo = remove_repo(root, name)
    except RepoRefused as exc:
        return _refused(args, exc, config)
    except ConfigError as exc:
        raise _config_error(exc) from None
    host = host_status(root)
    if args.json:
        emit_json({"ok": True, "repo": repo.to_json(name), "config_path": str(config),
                   "refusal": None, **_restart(host)})  # fmt: skip
    else:
        console().print(f"Removed {name} from {config} (it was {_describe(repo)}).", soft_wrap=True)
        _say_restart(host, root)
    return 0


# The host reads jarvis.toml once, when it starts: its rooms (checkouts, merges, verifiers)
# share that reading, and a run's repository is chosen when it is launched. Taking a change
# live would mean a host whose runs disagree on where they merge; a restart ends its runs'
# workers cleanly and takes the new file for every run alike.


def _restart(host: int | None) -> dict[str, Any]:
    return {"restart_needed": host is not None, "host_pid": host}


def _say_restart(host: int | None, root: Path) -> None:
    if host is None:
        return
    console().print(
        f"The host running on this workspace (pid {host}) reads jarvis.toml when it starts: "
        f"restart it for this to take effect (jarvis host --stop --workspace {root}, then "
        "jarvis host, or open the console, which starts one).",
        soft_wrap=True,
    )


def list_repos(args: argparse.Namespace) -> int:
    """``jarvis repo list``: every repository, where it comes from, and whether it is here."""
    root = _root(args)
    try:
        repos = load_config(root).repos
    except ConfigError as exc:
        raise _config_error(exc) from None
    rows = []
    for name, repo in sorted(repos.items()):
        reachable = repo.source_dir(root, name).is_dir()
        rows.append({**repo.to_json(name), "reachable": reachable})
    config = root / CONFIG_NAME
    if args.json:
        emit_json({"repos": rows, "config_path": str(config)})
        return 0
    out = console()
    if not rows:
        out.print(f"No repositories in {config}; jarvis repo add names one.", soft_wrap=True)
        return 0
    # One line each, the source last and never wrapped by us: a path or URL copies whole.
    names = [escape(row["name"]) for row in rows]
    refs = [escape(row["base_ref"]) for row in rows]
    states = [_reachability(row) for row in rows]
    head = ("name", "base ref", "reachable")
    columns = (names, refs, [state for state, _ in states])
    widths = [max(map(len, [h, *c])) for h, c in zip(head, columns, strict=True)]
    many = f"{len(rows)} repositories" if len(rows) > 1 else "1 repository"
    out.print(Text(f"{many} in {escape(str(config))}", style="bold"), soft_wrap=True)
    titles = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
    out.print(Text(f"  {titles}  source", style="dim"), soft_wrap=True)
    for row, name, ref, (state, style) in zip(rows, names, refs, states, strict=True):
        source = f"url {row['url']}" if row["url"] is not None else str(row["path"])
        if row["remote"] is not None:
            source += f" (remote {row['remote']})"
        line = Text.assemble(
            "  ", (name.ljust(widths[0]), "bold"), "  ", ref.ljust(widths[1]), "  ",
            (state.ljust(widths[2]), style), "  ", escape(source),
        )  # fmt: skip
        out.print(line, soft_wrap=True)
    return 0


def _reachability(row: dict[str, Any]) -> tuple[str, str]:
    """Whether the repository is on this host, in words, with a style."""
    if row["path"] is not None:
        return ("yes", "") if row["reachable"] else ("missing", "red")
    return ("cloned", "") if row["reachable"] else ("not cloned yet", "dim")
