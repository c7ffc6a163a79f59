"""The agents Jarvis can run as workers, by name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from core.agents.aider import AiderAdapter
from core.agents.base import LineAdapter
from core.agents.claude_code import ClaudeCodeAdapter
from core.agents.codex import CodexAdapter
from core.agents.opencode import OpenCodeAdapter

#: Each agent's adapter class, by the name a configuration uses for it.
ADAPTERS: Final[dict[str, type[LineAdapter]]] = {
    "claude-code": ClaudeCodeAdapter,
    "codex": CodexAdapter,
    "opencode": OpenCodeAdapter,
    "aider": AiderAdapter,
}


def adapter_for(
    name: str,
    *,
    cwd: str | None = None,
    extra_args: Sequence[str] = (),
    state_dir: str | None = None,
) -> LineAdapter:
    """A fresh adapter for the agent ``name`` (one per turn: adapters keep a turn's state);
    ``state_dir`` is the attempt's folder for the agent's own files (`LineAdapter.state_dir`).

    Raises:
        KeyError: ``name`` is not in `ADAPTERS`; the message lists the names that are.
    """
    try:
        adapter = ADAPTERS[name]
    except KeyError:
        raise KeyError(f"unknown agent {name!r}; known: {', '.join(sorted(ADAPTERS))}") from None
    made = adapter(cwd=cwd, extra_args=extra_args)
    made.state_dir = state_dir
    return made
