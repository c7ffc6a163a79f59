"""What a chat message file asks of the host: a dispatch to a lane, or nothing.

NanoClaw's coordinator dispatches by sending a chat message to a worker's chat: the message's
``chatJid`` names the worker (``jarvis-worker-2@nanoclaw``) and its ``text`` holds the dispatch
as JSON — often exactly, sometimes inside a fenced code block or a sentence, which NanoClaw's
host accepts by reading from the first ``{`` to the last ``}``. Jarvis reads it the same way.
A message to a worker lane that holds no dispatch is refused rather than dropped: a worker's chat
takes nothing else, and a coordinator whose dispatch went nowhere must be told.

A dispatch the coordinator (``andy-developer``) sends to a chat that is no worker's is refused
too, as NanoClaw's host blocks it ("dispatch payload to andy-developer chat blocked; set
target_group_jid to jarvis-worker-*"): its ``send_message`` tool sends to the coordinator's own
chat when no target is set, and the only other chats NanoClaw lets it write to are the workers'.
Without this, such a dispatch would become a run on the default worker. A dispatch it sends to a
worker's chat has its ``required_fields`` back-filled first, as NanoClaw's host does
(`core.nanoclaw.required_fields`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from core.authorization import LEAD, is_worker_lane
from core.nanoclaw.required_fields import backfill_required_fields
from core.workspace import lane_problem

#: The domain of NanoClaw's synthetic chat ids for its own lanes (``<lane>@nanoclaw``).
LANE_JID_DOMAIN: Final = "@nanoclaw"


def lane_of_jid(chat_jid: str) -> str | None:
    """The lane a ``<lane>@nanoclaw`` chat id names, or None for any other chat."""
    if not chat_jid.endswith(LANE_JID_DOMAIN):
        return None
    lane = chat_jid[: -len(LANE_JID_DOMAIN)]
    return lane if lane_problem(lane) is None else None


def dispatch_text(text: str) -> dict[str, Any] | None:
    """The dispatch a message's text holds — an object with a ``run_id`` — or None.

    The whole text first; then, as NanoClaw's host does, the slice from the first ``{`` to the
    last ``}``, which recovers a dispatch inside a fenced block or a sentence.
    """
    for candidate in (text.strip(), _braced(text)):
        if not candidate:
            continue
        try:
            body = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(body, dict) and "run_id" in body:
            return body
    return None


def _braced(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else ""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What one message asks: a dispatch (``payload`` set), a refusal, or nothing."""

    target: str | None
    """The lane its ``chatJid`` names, when it names one."""
    payload: dict[str, Any] | None = None
    refusal: str | None = None
    """Why it is refused: a message to a worker lane that holds no dispatch, or a dispatch
    from the coordinator to its own chat."""
    code: str = "not_a_dispatch"
    """The refusal's code."""


def read_message(chat_jid: str, text: str, source: str | None = None) -> ChatRequest:
    """Read a message that the lane ``source`` sent to ``chat_jid``: see the module
    docstring."""
    target = lane_of_jid(chat_jid)
    payload = dispatch_text(text)
    if payload is None and target is not None and is_worker_lane(target):
        return ChatRequest(
            target,
            refusal=(
                f"A message to {target} must hold a dispatch: a JSON object with a run_id "
                "(alone, or in a fenced block); this one holds none, so no run was made."
            ),
        )
    if payload is not None and source == LEAD and (target is None or target == LEAD):
        return ChatRequest(
            target,
            refusal=(
                f"A dispatch sent to {LEAD}'s own chat is blocked, as NanoClaw blocks it: "
                "set target_group_jid to a worker's chat (jarvis-worker-N@nanoclaw). No run "
                "was made."
            ),
            code="dispatch_to_own_chat",
        )
    if payload is not None and source == LEAD and target is not None and is_worker_lane(target):
        payload = backfill_required_fields(payload)  # NanoClaw's host does, before validating
    return ChatRequest(target, payload)
