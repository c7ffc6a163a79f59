"""What the runner keeps for an agent across the turns of one attempt, beside its adapter.

- **Where it runs.** Every turn starts in the run's checkout with ``PWD`` saying so: a program
  that takes its directory from ``$PWD`` (OpenCode does) would otherwise work in the folder the
  host was started from, which it inherits.
- **A folder of the attempt's own**, outside the checkout (under ``$TMPDIR``, which a sandboxed
  run has to itself), for the agent's files that must outlive a turn (aider's chat history,
  which its next turn restores) and must not be left in the checkout. Removed at the end.
- **What the agent leaves in the checkout for itself** (`LineAdapter.own_files`, aider's
  repo-map cache) is removed after each turn, unless it was there before the attempt.
- **A usage meter** (`core.agents.meter`) for an agent whose output leaves some of its model
  calls uncounted: aider's commit-message call. When its profile points it at an
  OpenAI-compatible service (``--openai-api-base``, ``OPENAI_API_BASE``…), the agent is given
  the meter as that service instead, and the tokens of the attempt are the meter's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from core.agents.events import Usage
from core.agents.meter import UsageMeter
from core.agents.registry import ADAPTERS

#: Agents given a usage meter: the option that points them at their model service, and the
#: variables they read it from otherwise (first found wins).
METERED: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "aider": ("--openai-api-base", ("AIDER_OPENAI_API_BASE", "OPENAI_API_BASE", "OPENAI_BASE_URL")),
}


def service_base(agent: str, args: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The OpenAI-compatible base URL the agent's profile points it at, or None."""
    if agent not in METERED:
        return None
    option, names = METERED[agent]
    found: str | None = None
    for i, word in enumerate(args):  # the last one given wins, as for the agent
        if word.startswith(f"{option}="):
            found = word.split("=", 1)[1]
        elif word == option and i + 1 < len(args):
            found = args[i + 1]
    found = found or next((env[n] for n in names if env.get(n, "").strip()), None)
    if found is None or not found.strip().startswith(("http://", "https://")):
        return None
    return found.strip()


class Attempt:
    """The state of one attempt of one agent in one checkout; `close` it at the end."""

    def __init__(
        self, agent: str, checkout: Path, args: Sequence[str], env: Mapping[str, str]
    ) -> None:
        self.checkout = Path(os.path.abspath(checkout))
        self.state_dir = tempfile.mkdtemp(prefix=f"jarvis-{agent}-")
        base = service_base(agent, args, env)
        self.meter = UsageMeter(base) if base else None
        self._option = METERED[agent][0] if base else ""
        own = ADAPTERS[agent].own_files if agent in ADAPTERS else ()
        self._absent = [name for name in own if not os.path.lexists(self.checkout / name)]
        self._env = dict(env)

    @property
    def extra_args(self) -> list[str]:
        """Options Jarvis adds after the profile's: the meter as the model service."""
        if self.meter is None:
            return []
        return [f"{self._option}={self.meter.url}"]

    def env(self) -> dict[str, str]:
        """The agent's environment: the runner's, with ``PWD`` the checkout."""
        return {**self._env, "PWD": str(self.checkout)}

    def usage(self, reported: Usage) -> Usage:
        """The attempt's usage: the meter's, once it counted a call, else what the agent
        reported. Metered usage has no cost: the agent's own leaves out the calls it did not
        show, so the cost is computed from the tokens."""
        if self.meter is not None and self.meter.calls:
            return self.meter.usage
        return reported

    def tidy(self) -> list[str]:
        """Remove what the agent left in the checkout for itself; the names removed."""
        removed = []
        for name in self._absent:
            path = self.checkout / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                path.unlink(missing_ok=True)
            else:
                continue
            removed.append(name)
        return removed

    def close(self) -> None:
        if self.meter is not None:
            self.meter.close()
        shutil.rmtree(self.state_dir, ignore_errors=True)
