"""What the command line gives the engine, which names no program of its own: the worker of
the lanes ``jarvis.toml`` gives none (the simulated worker) and the command that starts a host
in the background (``jarvis host``).

Light on purpose: `jarvis tui` takes the host command from here before its first paint, so the
configuration's models (pydantic) are imported only by `load_host_config`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from jarvis_sim import worker_command

if TYPE_CHECKING:
    from core.service.setup import HostConfig


def load_host_config(workspace_root: Path, *, force_poll: bool = False) -> HostConfig:
    """``jarvis.toml`` as a host this command line starts reads it: the simulated worker works
    the lanes it gives no program.

    Raises:
        ConfigError: the file is not TOML or breaks the schema.
    """
    from core.service.setup import DefaultWorker, load_config

    default = DefaultWorker(worker_command.command(), worker_command.FORMER_MODULES)
    return load_config(workspace_root, force_poll=force_poll, default_worker=default)


def host_command(workspace_root: Path) -> list[str]:
    """The command line of a background host for the workspace: this Python, ``jarvis host``."""
    return [sys.executable, "-m", "jarvis_cli", "host", "--workspace", str(workspace_root)]
