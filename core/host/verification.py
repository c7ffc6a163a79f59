"""The criterion commands a host runs, marked so that a restarted host can find and end them.

A verification command runs in its own process group; the host records the group in the store
before the command starts (`core.criteria.runner.Supervision`). After a ``kill -9`` of the host
the command runs on, orphaned. The next host kills the recorded group in `recover`, but only
after checking that a process in it still carries this workspace's and this run's markers in its
environment: process-group ids are reused, and a stranger's group must never be killed.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

RUN_MARK = "JARVIS_VERIFY_RUN_ID"
"""Names the run a verification command belongs to."""
WORKSPACE_MARK = "JARVIS_VERIFY_WORKSPACE"
"""Names the workspace (its resolved root): run ids repeat across workspaces."""


def markers(workspace_root: Path, run_id: str) -> dict[str, str]:
    """The environment variables that mark a verification command as this host's."""
    return {RUN_MARK: run_id, WORKSPACE_MARK: str(workspace_root.resolve())}


def _group_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[2])
    except (IndexError, ValueError):
        return None


def _environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def members_marked(pgid: int, workspace_root: Path, run_id: str) -> list[int]:
    """Live processes of group ``pgid`` that carry this workspace's markers for ``run_id``."""
    wanted = {f"{k}={v}".encode() for k, v in markers(workspace_root, run_id).items()}
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _group_of(int(entry)) == pgid:
            if wanted <= set(_environ(int(entry))):
                found.append(int(entry))
    return found


def kill_leftover(pgid: int, workspace_root: Path, run_id: str) -> bool:
    """Kill group ``pgid`` if it is a verification command of this workspace's ``run_id``.

    Returns:
        True when it was ours and was sent SIGKILL; False when nothing of it was left (or it
        is someone else's, which is left alone).
    """
    if not members_marked(pgid, workspace_root, run_id):
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True
