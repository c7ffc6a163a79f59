"""``jarvis host``: run the engine for one workspace until interrupted."""

from __future__ import annotations

import argparse
import logging
import sys

from core.host.config import ConfigError, load_config
from core.host.host import Host
from core.host.lock import HostLockHeld
from core.workspace import Workspace, WorkspaceError
from jarvis_tui.cli.inputs import UsageError
from jarvis_tui.cli.output import emit_json
from jarvis_tui.safe_text import inert


def run(args: argparse.Namespace) -> int:
    try:
        workspace = Workspace.resolve(args.workspace)
        config = load_config(workspace.root, force_poll=args.poll)
    except (WorkspaceError, ConfigError) as exc:
        raise UsageError("host_unusable", str(exc)) from None
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    # watchfiles logs every batch of changes at INFO: noise in a long-running service's log.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    host = Host(workspace, config)
    host.install_signal_handlers()
    try:
        host.run()
    except HostLockHeld as exc:
        if args.json:
            emit_json({"error": {"code": "host_running", "message": str(exc), "pid": exc.pid}})
        else:
            sys.stderr.write(f"jarvis: {inert(str(exc))}\n")
        return 1
    return 0
