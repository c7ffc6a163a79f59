"""The simulated worker as a command line: the default worker of a host the command line
starts (`jarvis_cli.defaults`). Small, so naming it loads nothing of the simulator."""

from __future__ import annotations

import sys

MODULE = "jarvis_sim.simworker"
#: Where the simulated worker lived before it left the engine; a jarvis.toml may still name it.
FORMER_MODULES = {"core.simworker": MODULE}


def command() -> tuple[str, ...]:
    """This Python, running the simulated worker."""
    return (sys.executable, "-m", MODULE)
