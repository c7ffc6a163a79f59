"""Adapters by agent name."""

from __future__ import annotations

import pytest

from core.agents.aider import AiderAdapter
from core.agents.base import AgentAdapter
from core.agents.claude_code import ClaudeCodeAdapter
from core.agents.codex import CodexAdapter
from core.agents.opencode import OpenCodeAdapter
from core.agents.registry import ADAPTERS, adapter_for


def test_each_agent_has_its_adapter_under_its_own_name() -> None:
    assert ADAPTERS == {
        "claude-code": ClaudeCodeAdapter,
        "codex": CodexAdapter,
        "opencode": OpenCodeAdapter,
        "aider": AiderAdapter,
    }
    for name, cls in ADAPTERS.items():
        assert cls.name == name


def test_adapter_for_gives_a_fresh_adapter_each_time() -> None:
    first = adapter_for("codex", cwd="/w", extra_args=["--sandbox", "workspace-write"])
    assert isinstance(first, CodexAdapter) and first is not adapter_for("codex")
    assert first.cwd == "/w" and first.extra_args == ("--sandbox", "workspace-write")
    adapter: AgentAdapter = first  # the classes satisfy the protocol
    assert adapter.usage.tokens_in == 0 and adapter.session_id is None


def test_an_unknown_agent_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="aider, claude-code, codex, opencode"):
        adapter_for("cursor")
