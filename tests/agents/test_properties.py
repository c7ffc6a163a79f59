"""Property tests: no bytes and no JSON make an adapter raise, and usage always adds up."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.events import total_usage
from core.agents.registry import ADAPTERS, adapter_for
from tests.agents.helpers import assert_sane
from tests.strategies import json_values

NAMES = sorted(ADAPTERS)
#: Every event type the JSON adapters know, so generated objects reach their handlers.
TYPES = [
    "system",
    "assistant",
    "user",
    "result",
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "error",
    "request_user_input",
    "step_start",
    "step_finish",
    "tool_use",
    "text",
    "reasoning",
    "done",
]
ITEM_TYPES = [
    "agent_message",
    "reasoning",
    "plan",
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "todo_list",
    "collab_tool_call",
    "error",
]
KEYS = ["message", "item", "part", "usage", "error", "content", "state", "tokens", "changes"]

#: Objects shaped roughly like the agents' events, with anything at any level.
events_like = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES)},
    optional={
        key: json_values
        | st.fixed_dictionaries(
            {"type": st.sampled_from(ITEM_TYPES + ["text", "tool_use", "tool_result"])},
            optional={
                "content": st.lists(json_values, max_size=3),
                "text": json_values,
                "input": json_values,
                "status": st.sampled_from(["completed", "failed", "error", "declined"]),
                "command": st.text(max_size=40),
                "items": json_values,
                "state": json_values,
            },
        )
        for key in KEYS
    }
    | {
        "subtype": st.sampled_from(["init", "success", "error_max_turns"]) | st.text(max_size=5),
        "is_error": st.booleans(),
        "session_id": json_values,
        "sessionID": json_values,
        "total_cost_usd": json_values,
        "result": json_values,
    },
)


def _check(name: str, lines: list[bytes]) -> None:
    adapter = adapter_for(name)
    events = []
    for line in lines:
        events += adapter.parse_line(line)
    events += adapter.finish()
    for event in events:
        assert_sane(event)
    total = total_usage(events)
    assert (total.tokens_in, total.tokens_out) == (
        adapter.usage.tokens_in,
        adapter.usage.tokens_out,
    )
    if adapter.usage.cost_usd is None:
        assert total.cost_usd is None
    else:
        assert total.cost_usd is not None
        assert math.isclose(total.cost_usd, adapter.usage.cost_usd, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("name", NAMES)
@given(lines=st.lists(st.binary(max_size=300), max_size=8))
def test_arbitrary_bytes_never_raise(name: str, lines: list[bytes]) -> None:
    _check(name, lines)


@pytest.mark.parametrize("name", NAMES)
@given(lines=st.lists(st.text(max_size=200), max_size=8))
def test_arbitrary_text_never_raises(name: str, lines: list[str]) -> None:
    _check(name, [line.encode("utf-8", "surrogatepass") for line in lines])


@pytest.mark.parametrize("name", ["claude-code", "codex", "opencode"])
# Each example is a deep, wide document: two fifths of the profile's count keeps this test to a
# few seconds a backend (`--hypothesis-profile thorough` still scales it up).
@settings(max_examples=max(1, settings().max_examples * 2 // 5))
@given(docs=st.lists(events_like | json_values, max_size=6))
def test_arbitrary_json_never_raises_and_usage_adds_up(name: str, docs: list[object]) -> None:
    _check(name, [json.dumps(doc).encode() for doc in docs])


@given(
    lines=st.lists(
        st.sampled_from(
            [
                "Tokens: {a} sent, {b} received. Cost: ${c} message, ${d} session.",
                "Tokens: {a} sent, {b} cache write, {a} cache hit, {b} received.",
                "Cost: ${c} message, ${d} session.",
                "Applied edit to {a}",
                "Commit abcdef{b} {a}",
                "reply text {a}",
            ]
        ),
        max_size=10,
    ),
    a=st.from_regex(r"\A\d{1,4}(\.\d)?k?\Z"),
    b=st.from_regex(r"\A\d{1,4}\Z"),
    c=st.from_regex(r"\A\d{1,3}\.\d{1,4}\Z"),
    d=st.from_regex(r"\A\d{1,3}\.\d{1,4}\Z"),
)
def test_aider_usage_adds_up(lines: list[str], a: str, b: str, c: str, d: str) -> None:
    _check("aider", [line.format(a=a, b=b, c=c, d=d).encode() for line in lines])
