"""``jarvis tui``: the operator console over a workspace's store (read-only; starts no host)."""

from __future__ import annotations

import argparse
import sqlite3

from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace, WorkspaceError
from jarvis_tui.cli.inputs import UsageError


def run(args: argparse.Namespace) -> int:
    # Textual loads only for the command that needs it, not for every `jarvis` invocation.
    from jarvis_tui.theme import THEMES

    if args.theme not in THEMES:
        raise UsageError(
            "unknown_theme",
            f"--theme {args.theme!r} is not a console theme; use one of {', '.join(THEMES)}.",
        )
    try:
        workspace = Workspace.resolve(args.workspace)
        # Opening once here creates or migrates the store, and reports a broken one as a usage
        # error before the screen is taken over.
        SqliteStore(workspace.db_path).close()
    except WorkspaceError as exc:
        raise UsageError("workspace_unusable", str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise UsageError(
            "store_unusable", f"The workspace's store cannot be opened: {exc}."
        ) from None
    from jarvis_tui.app import JarvisApp

    JarvisApp(workspace.db_path, theme=args.theme).run()
    return 0
