"""Worker profiles: which program works a lane's runs — a coding agent, or any command.

```toml
[workers]
default = "claude"                 # the profile of every lane that names none (else: command)

[workers.claude]
agent = "claude-code"              # claude-code | codex | opencode | aider | command
command = ["claude"]               # optional: the executable and fixed arguments
model = "sonnet"
env = { ANTHROPIC_BASE_URL = "http://127.0.0.1:8080" }

[lanes."jarvis-worker-2"]
worker = "claude"
```

An agent profile runs the agent through Jarvis's adapter (`python -m core.agents.runner`), which
speaks the worker protocol (docs/ipc.md) on the agent's behalf; a ``command`` profile runs its
command as a worker itself, as ``[workers] command`` does; a ``nanoclaw`` profile runs NanoClaw's
container runner as NanoClaw's host would (`core.nanoclaw.launch`, docs/nanoclaw.md):

```toml
[workers.nanoclaw]
agent = "nanoclaw"
command = ["docker", "run", "-i", "--rm", "nanoclaw-agent:latest"]
container = true                   # default: true for docker/podman/container/nerdctl … run
secrets = ["GITHUB_TOKEN"]         # host variables passed in the runner's stdin `secrets`
```
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from core.agents.programs import DEFAULT_EXECUTABLES
from core.nanoclaw.launch import looks_like_container, run_word

Agent = Literal["claude-code", "codex", "opencode", "aider", "command", "nanoclaw"]
#: Agents whose ``command`` is the whole program: run as given, not through the adapter.
RUN_AS_GIVEN = frozenset({"command", "nanoclaw"})

_PROFILE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Keys of ``[workers]`` itself; a profile cannot take one of these names.
RESERVED = frozenset(
    {"command", "concurrency", "lane_concurrency", "default", "profiles", "sandbox", "writable"}
)
#: How a worker is confined: Jarvis's bubblewrap sandbox, or not at all (core/host/sandbox.py).
Sandbox = Literal["bwrap", "none"]


def profile_name_problem(name: str) -> str | None:
    if name in RESERVED:
        return f"{name!r} is a key of [workers], not a profile name."
    if not _PROFILE.fullmatch(name):
        return (
            f"{name!r} is not a profile name: 1-64 lowercase letters, digits, '-' or '_', "
            "starting with a letter or digit."
        )
    return None


def _secret_name(name: str) -> str:
    if not _ENV_NAME.fullmatch(name) or name.startswith("JARVIS_"):
        raise PydanticCustomError(
            "bad_secret_name",
            "{name} is not a variable name: letters, digits and '_', and not JARVIS_*.",
            {"name": repr(name)},
        )
    return name


def _env_names(env: dict[str, str]) -> dict[str, str]:
    for name in env:
        if not _ENV_NAME.fullmatch(name) or name.startswith("JARVIS_"):
            raise PydanticCustomError(
                "bad_env_name",
                "{name} cannot be set by a profile: names are letters, digits and '_', and "
                "JARVIS_* belong to the host.",
                {"name": repr(name)},
            )
    return env


class WorkerProfile(BaseModel):
    """``[workers.NAME]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: Agent
    command: Annotated[list[str], Field(min_length=1)] | None = None
    """The executable and fixed arguments (default: the agent's own name, found on PATH)."""
    model: str | None = None
    args: list[str] = Field(default_factory=list)
    """Options the agent is run with, before the prompt: the site's policy, such as
    ``--permission-mode=acceptEdits`` for Claude Code or ``--sandbox=workspace-write`` for
    Codex (docs/agents.md); none are chosen for you."""
    env: Annotated[dict[str, str], AfterValidator(_env_names)] = Field(default_factory=dict)
    """More environment variables for the agent (its API endpoint, say)."""
    container: bool | None = None
    """``nanoclaw``: whether ``command`` starts a container, which the host then gives its
    mounts (default: a ``docker``, ``podman``, ``container`` or ``nerdctl`` command with a
    ``run`` word is one)."""
    assistant_name: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    """``nanoclaw``: the runner's ``assistantName`` (default NanoClaw's, ``Andy``)."""
    secrets: list[Annotated[str, AfterValidator(_secret_name)]] = Field(default_factory=list)
    """``nanoclaw``: variables (from ``env``, else the host's environment) whose values go in
    the runner's stdin ``secrets``, in this order; unset ones are left out."""
    sandbox: Sandbox | None = None
    """``bwrap``: run in Jarvis's bubblewrap sandbox (a start fails where it cannot run);
    ``none``: unconfined; unset: ``[workers] sandbox``, else bwrap where it works here."""
    writable: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """More folders its workers may write in the sandbox (an agent's login or cache folder);
    ``~`` is the host's home, a relative path the workspace's. Each must exist."""

    @model_validator(mode="after")
    def _command_needs_one(self) -> WorkerProfile:
        if self.agent in RUN_AS_GIVEN and self.command is None:
            raise PydanticCustomError(
                "command_required",
                "a profile with agent = {agent} must set command.",
                {"agent": repr(self.agent)},
            )
        nanoclaw_only = [
            key for key in ("container", "assistant_name") if getattr(self, key) is not None
        ] + (["secrets"] if self.secrets else [])
        if self.agent != "nanoclaw" and nanoclaw_only:
            raise PydanticCustomError(
                "nanoclaw_only",
                "{keys} belong to agent = 'nanoclaw' profiles.",
                {"keys": ", ".join(nanoclaw_only)},
            )
        if self.agent == "nanoclaw" and (self.model is not None or self.args):
            raise PydanticCustomError(
                "nanoclaw_takes_no_model",
                "a nanoclaw profile takes no model or args: the runner chooses its model, and "
                "fixed arguments belong in command.",
            )
        if self.agent == "nanoclaw" and self.container and self.command:
            if run_word(self.command) is None:
                raise PydanticCustomError(
                    "container_needs_run",
                    "container = true needs a command with a 'run' word (such as docker run "
                    "-i --rm IMAGE): the host adds the container's mounts after it.",
                )
        return self

    @property
    def is_container(self) -> bool:
        """Whether a ``nanoclaw`` profile's command starts a container."""
        if self.container is not None:
            return self.container
        return looks_like_container(self.executable())

    def executable(self) -> list[str]:
        """The agent's program and fixed arguments, as it is looked up."""
        return list(self.command or DEFAULT_EXECUTABLES[self.agent])

    @property
    def steers_at_turn_end(self) -> bool:
        """Whether a steer waits for the agent's turn to end (the runner resumes the session
        with it): true of every agent Jarvis runs through its adapter. Such a steer is not
        expired for want of an ack while the turn goes on; the run's end still expires it."""
        return self.agent not in RUN_AS_GIVEN

    def worker_command(self, name: str) -> list[str]:
        """What the host runs for a run of this profile: the command itself, or the adapter
        that runs the agent on the worker protocol's behalf."""
        if self.agent in RUN_AS_GIVEN:
            return self.executable()
        return [sys.executable, "-m", "core.agents.runner", "--profile", name]


@dataclass(frozen=True)
class DefaultWorker:
    """The worker a front end supplies for the lanes ``jarvis.toml`` gives no program: its
    command, and the modules it was once known by. The engine names no program of its own:
    ``jarvis host`` passes the simulated worker."""

    command: tuple[str, ...]
    moved: Mapping[str, str] = field(default_factory=dict)
    """Old module names, by the name each has now: a ``-m OLD`` in a configured command runs
    ``-m NEW``, so a ``jarvis.toml`` written before a module moved keeps working."""

    def renamed(self, command: list[str]) -> list[str]:
        """``command`` with a ``-m MODULE`` that moved naming the module where it is now."""
        return [
            self.moved.get(word, word) if i and command[i - 1] == "-m" else word
            for i, word in enumerate(command)
        ]


class LaneConfig(BaseModel):
    """``[lanes."NAME"]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    worker: str
    """The profile that works this lane's runs."""
