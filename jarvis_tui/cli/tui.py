"""``jarvis tui`` (and ``jarvis`` alone): the operator console over a workspace's store.

Unless ``--no-host`` is given, a workspace with no host gets one first (`ensure_host`): a
detached service that keeps running after the console quits, so closing the console or losing
the SSH session never stops runs in flight. The console says where its log is and how to stop it.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys

from core.host.launcher import HostLaunchError, LaunchedHost, ensure_host
from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace, WorkspaceError
from jarvis_tui.cli.inputs import UsageError
from jarvis_tui.safe_text import inert


def check_theme(theme: str) -> None:
    # Textual loads only for the command that needs it, not for every `jarvis` invocation.
    from jarvis_tui.theme import THEMES

    if theme not in THEMES:
        raise UsageError(
            "unknown_theme",
            f"--theme {theme!r} is not a console theme; use one of {', '.join(THEMES)}.",
        )


def open_workspace(path: str | None) -> Workspace:
    """The workspace, with its store created or migrated; a usage error when unusable."""
    try:
        workspace = Workspace.resolve(path)
        # Opening once here creates or migrates the store, and reports a broken one as a usage
        # error before the screen is taken over.
        SqliteStore(workspace.db_path).close()
    except WorkspaceError as exc:
        raise UsageError("workspace_unusable", str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise UsageError(
            "store_unusable", f"The workspace's store cannot be opened: {exc}."
        ) from None
    return workspace


def run(args: argparse.Namespace) -> int:
    check_theme(args.theme)
    workspace = open_workspace(args.workspace)
    launched: LaunchedHost | None = None
    if not args.no_host:
        try:
            launched = ensure_host(workspace)
        except HostLaunchError as exc:
            raise UsageError("host_start_failed", str(exc)) from None
    from jarvis_tui.app import JarvisApp

    try:
        JarvisApp(workspace.db_path, theme=args.theme, own_process=True).run()
    finally:
        if launched is not None:
            sys.stderr.write(
                inert(
                    f"jarvis: the host started for this console (pid {launched.pid}) keeps "
                    f"running; its log is {launched.log_path}. Stop it with: jarvis host --stop "
                    f"--workspace {workspace.root}"
                )
                + "\n"
            )
    return 0
