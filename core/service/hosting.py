"""Hosts through the front door, as the console and the command line start, ask and stop one:
the background host (`core.host.launcher`) and the lock that says which process holds a
workspace (`core.host.lock`). Running the engine itself is `core.service.host_run`."""

from __future__ import annotations

from core.host.launcher import (
    START_TIMEOUT_S,
    HostLaunchError,
    HostStopError,
    LaunchedHost,
    child_env,
    ensure_host,
    host_status,
    log_tail,
    parent_death_signal,
    processes_with_env,
    stop_host,
)
from core.host.lock import HostLock, HostLockHeld

__all__ = [
    "START_TIMEOUT_S",
    "HostLaunchError",
    "HostLock",
    "HostLockHeld",
    "HostStopError",
    "LaunchedHost",
    "child_env",
    "ensure_host",
    "host_status",
    "log_tail",
    "parent_death_signal",
    "processes_with_env",
    "stop_host",
]
