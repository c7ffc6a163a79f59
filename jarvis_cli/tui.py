"""``jarvis tui`` (and ``jarvis`` alone): the operator console over a workspace's store.

Unless ``--no-host`` is given, a workspace with no host gets one first (`ensure_host`): a
detached service that keeps running after the console quits, so closing the console or losing
the SSH session never stops runs in flight. The console says where its log is and how to stop it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from core.service.errors import StoreError
from core.service.fleet import open_fleet
from core.service.hosting import START_TIMEOUT_S, HostLaunchError, LaunchedHost, ensure_host
from core.service.workspace import (
    STORE_ENV_VAR,
    Workspace,
    WorkspaceError,
    is_postgres,
    store_location,
)
from jarvis_cli.defaults import host_command
from jarvis_cli.inputs import UsageError
from jarvis_cli.output import write_error


def check_theme(theme: str | None) -> None:
    # Textual loads only for the command that needs it, not for every `jarvis` invocation.
    from jarvis_tui.theme import theme_names

    names = theme_names()
    if theme is not None and theme not in names:
        raise UsageError(
            "unknown_theme",
            f"--theme {theme!r} is not a console theme; use one of {', '.join(names)}.",
        )


def open_workspace(path: str | None, db: str | None = None) -> tuple[Workspace, str | Path]:
    """The workspace and its store, created (and said so) or migrated; a usage error when
    unusable.

    Opening the store here reports a broken one (empty, damaged, from a newer jarvis) as a
    sentence before the screen is taken over. Damage only a full read finds is the host's to
    find: it checks every page before it takes the workspace, so `ensure_host` reports it.
    """
    try:
        workspace = Workspace.resolve(path)
        location = store_location(workspace.root, db)
        store = open_fleet(location, workspace.root, access="create")
    except WorkspaceError as exc:
        raise UsageError(exc.code, str(exc)) from None
    except StoreError as exc:
        raise UsageError(exc.code, exc.message) from None
    store.close()
    if store.created:
        write_error(f"jarvis: created a new workspace store at {store.location}.")
    return workspace, location


#: The slowest disk a host's start allows for: it reads every page of the store before it takes
#: the workspace (a 117 MB store took 6 s with a cold cache on a small virtual machine).
SLOW_DISK_BYTES_PER_S = 10 * 1024 * 1024


def host_start_timeout(db_path: Path) -> float:
    """How long to wait for a started host to take the workspace: longer for a larger store.

    A host that fails exits at once and is reported at once; this only bounds the wait for one
    that neither exits nor takes the workspace.
    """
    try:
        size = db_path.stat().st_size
    except OSError:
        size = 0
    return START_TIMEOUT_S + size / SLOW_DISK_BYTES_PER_S


def start_host(
    workspace: Workspace,
    location: str | Path,
    db: str | None,
    *,
    no_host: bool,
    patience_s: float = 0.0,
) -> LaunchedHost | None:
    """Start the workspace's host for a console unless one runs, ``no_host`` is given or the
    store is a shared database (said so); the started host, if any. ``patience_s`` is added to
    the wait for it to take the workspace (`host_start_timeout`).

    Raises:
        UsageError: ``host_start_failed``, with the end of the host's log.
    """
    if no_host:
        return None
    if is_postgres(location):
        # A shared store's hosts are started on purpose, each with its lanes: a console opened
        # on a laptop to watch the fleet must not start one that claims every lane's runs.
        write_error(
            "jarvis: the store is a shared database: this console starts no host (start one "
            "with jarvis host --db URL --lanes ...; jarvis hosts lists those serving it)."
        )
        return None
    # The host finds the store as this command did; one named by --db is passed on.
    env = {**os.environ, STORE_ENV_VAR: db} if db else None
    try:
        return ensure_host(
            workspace,
            command=host_command(workspace.root),
            timeout_s=host_start_timeout(workspace.db_path) + patience_s,
            env=env,
        )
    except HostLaunchError as exc:
        # Its first line is the sentence; the rest is the end of the host's log.
        sentence, *tail = str(exc).split("\n")
        raise UsageError("host_start_failed", sentence, tail) from None


def say_host_keeps_running(launched: LaunchedHost, workspace: Workspace, by: str) -> None:
    write_error(
        f"jarvis: the host started for this {by} (pid {launched.pid}) keeps running; its log "
        f"is {launched.log_path}. Stop it with: jarvis host --stop --workspace {workspace.root}"
    )


def run(args: argparse.Namespace) -> int:
    check_theme(args.theme)
    workspace, location = open_workspace(args.workspace, args.db)
    launched = start_host(workspace, location, args.db, no_host=args.no_host)
    from jarvis_tui.app import JarvisApp
    from jarvis_tui.personal import load_personal

    app = JarvisApp(workspace.db_path, store_at=location, theme=args.theme, own_process=True,
                    personal=load_personal())  # fmt: skip
    try:
        app.run()
    finally:
        if launched is not None:
            say_host_keeps_running(launched, workspace, "console")
    # 2 when the console left because the store became unusable (it said why on the way out).
    return app.return_code or 0
