"""The criterion commands a host runs, marked so that a restarted host can find and end them.

A verification command runs in its own process group; the host records the group in the store
before the command starts (`core.criteria.runner.Supervision`). After a ``kill -9`` of the host
the command runs on, orphaned. The next host kills the recorded group in `recover`, but only
after checking that a process in it still carries this workspace's and this run's markers in its
environment: process-group ids are reused, and a stranger's group must never be killed. It
kills the whole process tree under each marked member too: a child that left the group
(``setsid``) is still in the tree (`core.criteria.contain`: in its namespace, or adopted by its
subreaper).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from core.criteria.contain import kill_tree

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
    members = members_marked(pgid, workspace_root, run_id)
    if not members:
        return False
    for pid in members:
        kill_tree(pid)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the trees held the whole group: already gone
    return True
