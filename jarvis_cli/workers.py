"""``jarvis workers``: the worker profiles a workspace's ``jarvis.toml`` names, which lanes use
each, and whether each program is here (and its version)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.text import Text

from core.service.setup import (
    CONFIG_NAME,
    ConfigError,
    HostConfig,
    Probe,
    SandboxUnavailable,
    check_program,
    choose,
    probe,
)
from core.service.workspace import Workspace, WorkspaceError
from jarvis_cli.defaults import load_host_config
from jarvis_cli.inputs import UsageError
from jarvis_cli.output import console, emit_json, escape

#: The name shown for the plain ``[workers] command`` when no profile is the default.
PLAIN = "(command)"


def run(args: argparse.Namespace) -> int:
    try:
        root = Workspace.resolve(args.workspace, create=False).root
    except WorkspaceError as exc:
        raise UsageError(exc.code, str(exc)) from None
    try:
        config = load_host_config(root)
    except ConfigError as exc:
        raise UsageError("config_unusable", str(exc)) from None
    lanes_of: dict[str, list[str]] = {}
    for lane, chosen in sorted(config.lanes.items()):
        lanes_of.setdefault(chosen.worker, []).append(lane)
    rows: list[dict[str, Any]] = []
    default = config.workers.default
    found = probe()
    command = config.workers.command
    if default is None and command is not None:  # the command line gives a default: never None
        check = check_program(command, cwd=root, agent="command")
        row = _row(PLAIN, "command", command, None, [], True, check)
        rows.append({**row, **_sandbox(config.workers.sandbox, found)})
    for name, profile in sorted(config.workers.profiles.items()):
        check = check_program(profile.executable(), cwd=root, agent=profile.agent)
        row = _row(name, profile.agent, profile.executable(), profile.model,
                   lanes_of.get(name, []), name == default, check)  # fmt: skip
        # The names only: values (an API key, say) are not for a listing.
        row["env"] = sorted(profile.env)
        rows.append({**row, **_sandbox(_configured(config, name), found)})
    sandbox = {"bwrap": found.program, "problem": found.problem}
    if args.json:
        emit_json({"workers": rows, "sandbox": sandbox, "config_path": str(root / CONFIG_NAME)})
        return 0
    out = console()
    if found.program is not None:
        out.print(Text.assemble(("sandbox ", "dim"), "bubblewrap ",
                                (escape(found.program), "dim")), soft_wrap=True)  # fmt: skip
    else:
        out.print(Text.assemble(("sandbox ", "dim"), ("none", "bold yellow"),
                                f" — {escape(str(found.problem))}; workers run unconfined"),
                  soft_wrap=True)  # fmt: skip
    for row in rows:
        state = ("found", "green") if row["found"] else ("not found", "bold red")
        line = Text.assemble(
            ("  " + escape(row["name"]).ljust(14), "bold"), " ", escape(row["agent"]).ljust(12),
            " ", state, "  ", escape(row["version"] or row["problem"] or ""),
        )  # fmt: skip
        if row["found"] and not row["version_asked"]:
            line.append(
                "version not asked: a command profile's program only runs for work", style="dim"
            )
        out.print(line, soft_wrap=True)
        where = ["default"] if row["default"] else []
        where += [escape(lane) for lane in row["lanes"]]
        detail = f"    {' '.join(escape(a) for a in row['command'])}"
        if row["model"]:
            detail += f" · model {escape(row['model'])}"
        if where:
            detail += f" · lanes: {', '.join(where)}"
        detail += f" · sandbox {row['sandbox']}"
        if row["sandbox_problem"]:
            detail += f" ({escape(row['sandbox_problem'])})"
        out.print(Text(detail, style="dim"), soft_wrap=True)
    return 0


def _configured(config: HostConfig, name: str) -> Any:
    profile = config.workers.profiles[name]
    return profile.sandbox if profile.sandbox is not None else config.workers.sandbox


def _sandbox(configured: Any, found: Probe) -> dict[str, Any]:
    """The sandbox a profile's runs get here, and why they run unconfined (or cannot start)."""
    try:
        mode, why = choose(configured, found)
    except SandboxUnavailable as exc:
        return {"sandbox": "bwrap", "sandbox_problem": f"runs cannot start: {exc}"}
    return {"sandbox": mode, "sandbox_problem": why}


def _row(
    name: str,
    agent: str,
    command: list[str],
    model: str | None,
    lanes: list[str],
    default: bool,
    check: Any,
) -> dict[str, Any]:
    return {
        "name": name,
        "agent": agent,
        "command": command,
        "model": model,
        "lanes": lanes,
        "default": default,
        "found": check.path is not None,
        "path": check.path,
        "version": check.version,
        "problem": check.problem,
        "version_asked": check.version_asked,
    }
