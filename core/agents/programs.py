"""The program each agent is found as, when its profile names no ``command``.

The agents' own knowledge, kept apart from their adapters so the host's configuration can name
it without loading them, and the runner without reaching up into the host.
"""

from __future__ import annotations

from typing import Final

DEFAULT_EXECUTABLES: Final[dict[str, list[str]]] = {
    "claude-code": ["claude"],
    "codex": ["codex"],
    "opencode": ["opencode"],
    "aider": ["aider"],
}
