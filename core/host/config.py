"""Host configuration: ``<workspace>/jarvis.toml``, validated, with defaults for an empty file.

```toml
[workers]
command = ["python3", "-m", "core.simworker"]   # default: this Python, the simulated worker
concurrency = 1                                 # runs at a time per lane
lane_concurrency = { "jarvis-worker-1" = 2 }     # per-lane overrides

[timeouts]
no_output_s = 120      # no stdout, stderr or progress for this long: the run fails
hard_limit_s = 3600    # wall-clock limit of one attempt
steer_ack_s = 30       # a delivered steer not acknowledged by then expires
shutdown_grace_s = 5   # SIGTERM to SIGKILL on shutdown

[watch]
poll = false           # poll instead of inotify (also --poll or JARVIS_POLL=1)
poll_interval_ms = 100
```
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from core.contracts.patterns import SEARCH_TIMEOUT_S
from core.contracts.pydantic_errors import from_validation_error
from core.criteria.allowlist import DEFAULT_ALLOWLIST, VerifyPolicy

POLL_ENV = "JARVIS_POLL"


def _default_command() -> list[str]:
    return [sys.executable, "-m", "core.simworker"]


class WorkersConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    command: Annotated[list[str], Field(min_length=1)] = Field(default_factory=_default_command)
    """The worker program and its arguments; run without a shell."""
    concurrency: Annotated[int, Field(ge=1, le=64)] = 1
    lane_concurrency: dict[str, Annotated[int, Field(ge=0, le=64)]] = Field(default_factory=dict)
    """Per-lane overrides; 0 pauses a lane."""

    def limit_for(self, lane: str) -> int:
        return self.lane_concurrency.get(lane, self.concurrency)


class TimeoutsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    no_output_s: Annotated[float, Field(gt=0)] = 120.0
    hard_limit_s: Annotated[float, Field(gt=0)] = 3600.0
    steer_ack_s: Annotated[float, Field(gt=0)] = 30.0
    shutdown_grace_s: Annotated[float, Field(ge=0)] = 5.0


class WatchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    poll: bool = False
    poll_interval_ms: Annotated[int, Field(ge=10, le=10_000)] = 100


def _tool_name(value: str) -> str:
    if not value or "/" in value or "\\" in value:
        raise PydanticCustomError(
            "bad_tool_name",
            "{value} is not a tool name: list bare names, looked up on the host's PATH.",
            {"value": repr(value)},
        )
    return value


class CriteriaConfig(BaseModel):
    """``[criteria]``: how acceptance criteria are verified."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 300
    """Per-criterion time limit (a criterion's own ``timeout_s`` wins)."""
    universal: bool = False
    """Give the universal checklist (tests, lint, changelog, backlog) to every dispatch that does
    not set ``universal_criteria`` itself."""
    pattern_timeout_s: Annotated[float, Field(gt=0, le=600)] = SEARCH_TIMEOUT_S
    """Time limit of one regular-expression search (content checks, ``test_pass`` output)."""
    allow: list[Annotated[str, AfterValidator(_tool_name)]] = Field(default_factory=list)
    """More tools that run without an operator's approval (bare names, found on PATH)."""
    env: list[str] = Field(default_factory=list)
    """More environment variables passed to criterion commands (secret-looking names never)."""

    def policy(self) -> VerifyPolicy:
        return VerifyPolicy(
            allowlist=DEFAULT_ALLOWLIST | frozenset(self.allow),
            timeout_s=self.timeout_s,
            pattern_timeout_s=self.pattern_timeout_s,
            env_passthrough=frozenset(self.env),
        )


class HostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    workers: WorkersConfig = Field(default_factory=WorkersConfig)
    criteria: CriteriaConfig = Field(default_factory=CriteriaConfig)
    timeouts: TimeoutsConfig = Field(default_factory=TimeoutsConfig)
    watch: WatchConfig = Field(default_factory=WatchConfig)


class ConfigError(Exception):
    """The configuration file is unusable; ``str()`` lists every problem."""


def load_config(workspace_root: Path, *, force_poll: bool = False) -> HostConfig:
    """Read ``jarvis.toml`` (absent means all defaults).

    Raises:
        ConfigError: the file is not TOML or breaks the schema; the message names each field.
    """
    path = workspace_root / "jarvis.toml"
    data: dict[str, object] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}.") from None
    try:
        config = HostConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(e.message for e in from_validation_error(exc, data))
        raise ConfigError(f"{path}: {problems}") from None
    if force_poll or os.environ.get(POLL_ENV, "") not in ("", "0"):
        config = config.model_copy(update={"watch": config.watch.model_copy(update={"poll": True})})
    return config
