"""``jarvis host``: run the engine for one workspace until interrupted, or stop the one running."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from core.service.errors import StoreError
from core.service.host_run import Host, HostFailed, HostNameHeld, HostNameTaken, serve
from core.service.hosting import HostLockHeld, HostStopError, stop_host
from core.service.setup import ConfigError, load_config
from core.service.workspace import (
    DEFAULT_DIR,
    ENV_VAR,
    Workspace,
    WorkspaceError,
    lane_problem,
    store_location,
)
from jarvis_cli.defaults import load_host_config
from jarvis_cli.inputs import UsageError
from jarvis_cli.output import InertLogFormatter, emit_json, escape, write_error

#: Beyond the host's own shutdown grace, how long `--stop` waits for it to let go.
STOP_MARGIN_S = 10.0


def run(args: argparse.Namespace) -> int:
    if args.stop:
        return stop(args)
    try:
        workspace = Workspace.resolve(args.workspace)
        config = load_host_config(workspace.root, force_poll=args.poll)
    except (WorkspaceError, ConfigError) as exc:
        raise UsageError("host_unusable", str(exc)) from None
    log = logging.StreamHandler(sys.stderr)
    log.setFormatter(InertLogFormatter("%(asctime)s %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, handlers=[log])
    # watchfiles logs every batch of changes at INFO: noise in a long-running service's log.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    lanes = None
    if args.lanes is not None:
        lanes = [lane.strip() for lane in args.lanes.split(",") if lane.strip()]
        for lane in lanes:
            if (problem := lane_problem(lane)) is not None:
                raise UsageError("usage", f"--lanes: {problem}")
    try:
        host = Host(
            workspace,
            config,
            store_at=store_location(workspace.root, args.db),
            name=args.name,
            lanes=lanes,
        )
    except StoreError as exc:
        raise UsageError(exc.code, exc.message) from None
    host.install_signal_handlers()
    try:
        serve(host)
    except StoreError as exc:
        # A fault that escaped the loop too: the host cannot go on, and says why in a sentence.
        raise UsageError("host_unusable", exc.message) from None
    except HostLockHeld as exc:
        if args.json:
            emit_json({"error": {"code": "host_running", "message": str(exc), "pid": exc.pid}})
        else:
            write_error(f"jarvis: {exc}")
        return 1
    except HostNameHeld as exc:
        return _stopped(args, "host_name_held", str(exc), 1)
    except HostNameTaken as exc:
        return _stopped(args, "host_name_taken", str(exc), 1)
    except HostFailed as exc:
        # Its log (stderr) holds the traceback; this is the sentence at the end of it.
        return _stopped(args, "host_failed", f"The host stopped: {exc}; its log says where.", 2)
    return 0


def _stopped(args: argparse.Namespace, code: str, message: str, status: int) -> int:
    if args.json:
        emit_json({"error": {"code": code, "message": message}})
    else:
        write_error(f"jarvis: {escape(message)}")
    return status


def stop(args: argparse.Namespace) -> int:
    """SIGTERM the workspace's host and wait for it to let go: 0 stopped, 1 none was running."""
    # Not Workspace.resolve: stopping must not create a workspace that was never there.
    root = Path(args.workspace or os.environ.get(ENV_VAR) or DEFAULT_DIR).expanduser().resolve()
    grace = 5.0
    if root.is_dir():
        try:
            grace = load_config(root).timeouts.shutdown_grace_s
        except ConfigError:
            pass  # the host that runs read it once; the default margin will do
    try:
        pid = stop_host(root, timeout_s=grace + STOP_MARGIN_S) if root.is_dir() else None
    except HostStopError as exc:
        if args.json:
            emit_json({"stopped": False, "pid": None, "message": str(exc)})
        else:
            write_error(f"jarvis: {exc}")
        return 1
    if pid is None:
        message = f"No host is running on {root}."
    else:
        message = f"Stopped the host on {root} (pid {pid})."
    if args.json:
        emit_json({"stopped": pid is not None, "pid": pid, "message": message})
    else:
        (sys.stdout if pid is not None else sys.stderr).write(escape(message) + "\n")
    return 0 if pid is not None else 1
