"""What a chat message asks of the host (core/ipc/chat.py): a dispatch to the lane its chat id
names, found in the text as NanoClaw's host finds it; or nothing; or a refusal."""

from __future__ import annotations

import json

import pytest

from core.ipc.chat import dispatch_text, lane_of_jid, read_message

DISPATCH = {"run_id": "task-1", "input": "fix {the} bug"}


@pytest.mark.parametrize(
    ("jid", "lane"),
    [
        ("jarvis-worker-2@nanoclaw", "jarvis-worker-2"),
        ("andy-developer@nanoclaw", "andy-developer"),
        ("120363000000000000@g.us", None),
        ("@nanoclaw", None),
        ("../etc@nanoclaw", None),
        ("jarvis-worker-2@nanoclaw.evil", None),
    ],
)
def test_a_lane_is_named_only_by_a_valid_lane_at_nanoclaw(jid: str, lane: str | None) -> None:
    assert lane_of_jid(jid) == lane


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(DISPATCH),
        "  " + json.dumps(DISPATCH, indent=2) + "\n",
        "```json\n" + json.dumps(DISPATCH, indent=2) + "\n```",
        "Dispatching now: " + json.dumps(DISPATCH) + " — thanks",
        "[" + json.dumps(DISPATCH) + "]",
    ],
)
def test_a_dispatch_is_found_alone_fenced_or_in_a_sentence(text: str) -> None:
    assert dispatch_text(text) == DISPATCH


@pytest.mark.parametrize(
    "text",
    [
        "please fix the login bug",
        '{"input": "no run id here"}',
        json.dumps(DISPATCH) + " and " + json.dumps(DISPATCH),  # two objects: no one slice parses
        "} backwards {",
        "",
    ],
)
def test_text_without_one_dispatch_holds_none(text: str) -> None:
    assert dispatch_text(text) is None


def test_a_message_to_a_worker_without_a_dispatch_is_refused_and_other_chat_is_nothing() -> None:
    refused = read_message("jarvis-worker-2@nanoclaw", "please fix the login bug")
    assert refused.target == "jarvis-worker-2" and refused.payload is None
    assert refused.refusal is not None and "jarvis-worker-2" in refused.refusal
    chat = read_message("120363000000000000@g.us", "all green")
    assert chat.target is None and chat.payload is None and chat.refusal is None
    taken = read_message("jarvis-worker-1@nanoclaw", json.dumps(DISPATCH))
    assert taken.target == "jarvis-worker-1" and taken.payload == DISPATCH


def test_only_the_coordinators_dispatch_to_a_chat_no_worker_owns_is_blocked() -> None:
    text = json.dumps(DISPATCH)
    for chat in ("120363000000000000@g.us", "andy-developer@nanoclaw"):
        blocked = read_message(chat, text, "andy-developer")
        assert blocked.payload is None and blocked.code == "dispatch_to_own_chat"
    assert read_message("jarvis-worker-2@nanoclaw", text, "andy-developer").payload == DISPATCH
    # Another lane's dispatch to a chat of no lane keeps going to the default worker (ipc.md).
    assert read_message("120363000000000000@g.us", text, "main").payload == DISPATCH
    # The coordinator's plain chat to its own chat is nothing for the host.
    plain = read_message("120363000000000000@g.us", "on it", "andy-developer")
    assert plain.payload is None and plain.refusal is None
