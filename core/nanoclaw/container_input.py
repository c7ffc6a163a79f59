"""The task a NanoClaw runner reads: one compact JSON object on its stdin, then end of file.

Keys in NanoClaw's order (``ContainerInput`` in ``src/container-runner.ts``; a key whose value
is undefined there is left out here): ``prompt``, ``sessionId``, ``runId``, ``groupFolder``,
``chatJid``, ``isMain``, ``assistantName``, ``opsExtended``, ``schedulerEnabled``,
``workerSteeringEnabled``, ``dynamicGroupRegistrationEnabled``, then ``secrets`` only when at
least one secret has a value.

Jarvis always sets ``workerSteeringEnabled`` (the runner then writes progress and reads steers)
and ``runId`` (the run id, which names the progress folder and the steer file); the scheduler,
dynamic group registration and the ops profile are NanoClaw host features Jarvis does not run,
so they are false.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: NanoClaw's default ``ASSISTANT_NAME``.
DEFAULT_ASSISTANT = "Andy"
#: NanoClaw's main group folder: the lane whose runner is told ``isMain``.
MAIN_LANE = "main"


def chat_jid(lane: str) -> str:
    """The synthetic chat JID NanoClaw gives a lane's chat: ``<lane>@nanoclaw``."""
    return f"{lane}@nanoclaw"


def container_input(
    *,
    prompt: str,
    run_id: str,
    lane: str,
    session_id: str | None = None,
    assistant_name: str = DEFAULT_ASSISTANT,
    secrets: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The stdin object, keys in NanoClaw's order."""
    doc: dict[str, Any] = {"prompt": prompt}
    if session_id:
        doc["sessionId"] = session_id
    doc.update(
        runId=run_id,
        groupFolder=lane,
        chatJid=chat_jid(lane),
        isMain=lane == MAIN_LANE,
        assistantName=assistant_name,
        opsExtended=False,
        schedulerEnabled=False,
        workerSteeringEnabled=True,
        dynamicGroupRegistrationEnabled=False,
    )
    if secrets:
        doc["secrets"] = dict(secrets)
    return doc


def encode(doc: Mapping[str, Any]) -> bytes:
    """``JSON.stringify(doc)``: compact, no trailing newline, non-ASCII as itself (a lone
    surrogate, which UTF-8 cannot hold, makes the whole text ASCII with escapes instead)."""
    try:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(doc, separators=(",", ":")).encode("ascii")


def resolve_secrets(names: Sequence[str], *envs: Mapping[str, str]) -> dict[str, str]:
    """The named secrets that have a value, in the order named: the first environment of
    ``envs`` that sets one (non-empty) wins."""
    found: dict[str, str] = {}
    for name in names:
        for env in envs:
            value = env.get(name)
            if value:
                found[name] = value
                break
    return found
