"""Delegation authorization: which lane may dispatch work to which.

From the architecture: ``main`` may target any lane; ``andy-developer`` only ``jarvis-worker-*``
lanes; ``andy-bot`` observes and never dispatches; every other lane only itself; and worker lanes
never dispatch to worker lanes (so a worker cannot even re-dispatch to itself). The lane is the
writer's identity — the IPC folder it writes in — never a field inside a file.
"""

from __future__ import annotations

MAIN = "main"
LEAD = "andy-developer"
OBSERVER = "andy-bot"
WORKER_PREFIX = "jarvis-worker"


def is_worker_lane(lane: str) -> bool:
    return lane.startswith(WORKER_PREFIX)


def dispatch_refusal(source: str, target: str) -> str | None:
    """Why ``source`` may not dispatch to ``target``, as a sentence; None when it may."""
    if source == MAIN:
        return None
    if source == OBSERVER:
        return f"{OBSERVER} observes only and never dispatches work."
    if is_worker_lane(source):
        if is_worker_lane(target):
            return "A worker lane never dispatches to a worker lane."
        return f"{source} may dispatch only to itself."
    if source == LEAD:
        if is_worker_lane(target):
            return None
        return f"{LEAD} may dispatch only to {WORKER_PREFIX}-* lanes, not to {target}."
    if source == target:
        return None
    return f"{source} may dispatch only to itself, not to {target}."
