"""Host configuration: ``<workspace>/jarvis.toml``, validated, with defaults for an empty file.

Every key, its default and a full example: ``docs/configuration.md``. `load_config` reads the
file; `config_from_text` validates text the same way before anyone writes it (``jarvis repo``).
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from core.contracts.names import ref_problem
from core.contracts.patterns import SEARCH_TIMEOUT_S
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.repositories import (
    looks_like_url,
    repo_name_problem,
    repo_path_problem,
    repo_url_problem,
)
from core.criteria.allowlist import DEFAULT_ALLOWLIST, VerifyPolicy
from core.host.notify_config import NotifyConfig
from core.host.store_config import StoreConfig
from core.host.worker_profiles import (
    RESERVED,
    DefaultWorker,
    LaneConfig,
    Sandbox,
    WorkerProfile,
    profile_name_problem,
)
from core.ipc.inplace import WRITE_GRACE_S
from core.prices import PRICE_ENV, Price, price_env, price_of

POLL_ENV = "JARVIS_POLL"
CONFIG_NAME = "jarvis.toml"
#: Where repositories configured by ``url`` are cloned, under the workspace.
REPOS_DIR = "repos"


def _lane_name(value: str) -> str:
    from core.workspace import lane_problem

    problem = lane_problem(value)
    if problem:
        raise PydanticCustomError("bad_lane_name", problem)
    return value


def _profile_name(value: str) -> str:
    problem = profile_name_problem(value)
    if problem:
        raise PydanticCustomError("bad_profile_name", problem)
    return value


class WorkersConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    command: Annotated[list[str], Field(min_length=1)] | None = None
    """The worker program and its arguments; run without a shell. Unset: the default worker
    the configuration was read with (`DefaultWorker`), else none (a run fails to start)."""
    concurrency: Annotated[int, Field(ge=1, le=64)] = 1
    lane_concurrency: dict[str, Annotated[int, Field(ge=0, le=64)]] = Field(default_factory=dict)
    """Per-lane overrides; 0 pauses a lane."""
    default: str | None = None
    """The profile of every lane that names none; absent: ``command``."""
    sandbox: Sandbox | None = None
    """How workers are confined, the plain ``command``'s too (a profile's own ``sandbox``
    wins): ``bwrap`` or ``none``; unset, bwrap where it works here (core/host/sandbox.py)."""
    writable: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """More folders every worker may write in the sandbox (a profile adds its own)."""
    profiles: dict[Annotated[str, AfterValidator(_profile_name)], WorkerProfile] = Field(
        default_factory=dict
    )
    """``[workers.NAME]`` tables (written as sub-tables of ``[workers]``)."""

    @model_validator(mode="before")
    @classmethod
    def _gather_profiles(cls, data: Any) -> Any:
        # `[workers.claude]` arrives as a key of [workers]: every table that is not one of its
        # own keys is a profile.
        if not isinstance(data, dict):
            return data
        own = {k: v for k, v in data.items() if k in RESERVED or not isinstance(v, dict)}
        tables = {k: v for k, v in data.items() if k not in own}
        if tables:
            own["profiles"] = {**(own.get("profiles") or {}), **tables}
        return own

    @model_validator(mode="after")
    def _default_exists(self) -> WorkersConfig:
        if self.default is not None and self.default not in self.profiles:
            raise PydanticCustomError(
                "unknown_profile",
                "default names {name}, but there is no [workers.{name}].",
                {"name": self.default},
            )
        return self

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
    write_grace_s: Annotated[float, Field(gt=0, le=60)] = WRITE_GRACE_S
    """How long a file that is empty or not yet a whole JSON object is left for its writer to
    finish, from its last change, before it is quarantined."""


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
    verify_workers: Annotated[int, Field(ge=1, le=16)] = 2
    """Runs the host verifies at once: one run's slow criteria never hold another's checks."""
    run_verify_s: Annotated[float, Field(gt=0, le=86400)] = 3600
    """A run's whole verification; criteria not checked by then are reported not verified."""

    def policy(self) -> VerifyPolicy:
        return VerifyPolicy(
            allowlist=DEFAULT_ALLOWLIST | frozenset(self.allow),
            timeout_s=self.timeout_s,
            pattern_timeout_s=self.pattern_timeout_s,
            env_passthrough=frozenset(self.env),
        )


def clone_dir(workspace_root: Path, name: str) -> Path:
    """Where the repository ``name`` (``owner/name``), configured by ``url``, is cloned."""
    owner, _, repo = name.partition("/")
    return workspace_root / REPOS_DIR / owner / repo


def _repo_name(value: str) -> str:
    problem = repo_name_problem(value)
    if problem:
        raise PydanticCustomError("bad_repo_name", problem)
    return value


def _ref_name(value: str) -> str:
    problem = ref_problem(value)
    if problem:
        raise PydanticCustomError("bad_ref", problem)
    return value


def _repo_path(value: str) -> str:
    if not value:
        raise PydanticCustomError("empty", "must not be empty.")
    problem = repo_path_problem(value)
    if problem:
        raise PydanticCustomError("bad_repo_path", problem)
    return value


def _repo_url(value: str) -> str:
    if not value:
        raise PydanticCustomError("empty", "must not be empty.")
    problem = repo_url_problem(value)
    if problem:
        raise PydanticCustomError("bad_repo_url" if looks_like_url(value) else "not_a_url", problem)
    return value


class RepoConfig(BaseModel):
    """``[repos."owner/name"]``: a repository runs may work on; exactly one of ``path``, ``url``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Annotated[str, AfterValidator(_repo_path)] | None = None
    """A clone or a bare repository on this host; a relative path is relative to the workspace."""
    url: Annotated[str, AfterValidator(_repo_url)] | None = None
    """Cloned into ``<workspace>/repos/owner/name`` on first use (``file://`` URLs too)."""
    base_ref: Annotated[str, AfterValidator(_ref_name)] = "main"
    """The branch, tag or commit a run's worktree starts from."""
    remote: Annotated[str, AfterValidator(_ref_name)] | None = None
    """The remote the base branch is pushed to after a merge on approval."""
    merge: Literal["auto-merge", "recommend-only"] = "auto-merge"
    """What approving a run does with its branch: merge it into ``base_ref``, or record the
    recommendation and leave the branch for a person (an OpenClaw run's risk level may lower
    ``auto-merge`` to ``recommend-only``, never raise it)."""

    @model_validator(mode="after")
    def _path_or_url(self) -> RepoConfig:
        if (self.path is None) == (self.url is None):
            raise PydanticCustomError(
                "path_or_url",
                "must set path (a repository on this host) or url (cloned on first use){both}.",
                {"both": ", not both" if self.path is not None else ""},
            )
        return self

    def resolved_path(self, workspace_root: Path) -> Path | None:
        """``path`` made absolute (``~`` is the home folder, a relative path the workspace's),
        or None for a ``url``."""
        if self.path is None:
            return None
        return (workspace_root / Path(self.path).expanduser()).resolve()

    def source_dir(self, workspace_root: Path, name: str) -> Path:
        """Where the repository is on this host: its ``path``, or where its ``url`` is cloned."""
        return self.resolved_path(workspace_root) or clone_dir(workspace_root, name)

    def to_json(self, name: str) -> dict[str, Any]:
        return {"name": name, **self.model_dump()}


class BudgetsConfig(BaseModel):
    """``[budgets]``: what one run, or the whole workspace, may spend (as agents report it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_tokens: Annotated[int, Field(ge=1)] | None = None
    """Tokens in and out of one attempt."""
    run_cost_usd: Annotated[float, Field(gt=0)] | None = None
    """Cost of one attempt, in US dollars."""
    run_wall_s: Annotated[float, Field(gt=0)] | None = None
    """Wall time of one attempt, in seconds: stopped gracefully, unlike ``hard_limit_s``."""
    workspace_tokens: Annotated[int, Field(ge=1)] | None = None
    """Tokens of every run of the workspace together; once crossed, running runs are stopped
    and no new run starts until the cap is raised."""
    workspace_cost_usd: Annotated[float, Field(gt=0)] | None = None
    """Cost of every run of the workspace together, the same way."""
    workspace_wall_s: Annotated[float, Field(gt=0)] | None = None
    """Seconds every run's workers have worked together (each attempt from its start to its
    end, running attempts up to now), the same way."""
    interrupt_grace_s: Annotated[float, Field(ge=0)] = 10.0
    """SIGINT first (an agent may wrap up), then SIGTERM after this."""


class GitConfig(BaseModel):
    """``[git]``: worktrees of runs in configured repositories."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    worktree_grace_s: Annotated[float, Field(ge=0)] = 300
    """How long a run's worktree is kept after the run is done or cancelled."""
    unverified_may_review: bool = True
    """Whether a run whose checkout holds no repository may still reach ``review_requested``,
    marked unverified."""


class HostSection(BaseModel):
    """``[host]``: this host among the hosts serving one store (docs/many-hosts.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    """Its name among the store's hosts; default ``<machine>:<workspace>``."""
    lanes: list[Annotated[str, AfterValidator(_lane_name)]] | None = None
    """The lanes whose queued runs it claims; None: every lane."""
    heartbeat_s: Annotated[float, Field(gt=0, le=60)] = 5.0
    """How often it renews its lease."""
    lease_s: Annotated[float, Field(gt=0, le=3600)] = 30.0
    """How long a lease lasts unrenewed: past it, the host is lost and another recovers its
    running runs."""

    @model_validator(mode="after")
    def _lease_outlives_heartbeats(self) -> HostSection:
        if self.lease_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"lease_s ({self.lease_s:g}) must be at least twice heartbeat_s "
                f"({self.heartbeat_s:g}): one late heartbeat must not lose the lease"
            )
        return self


class HostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    workers: WorkersConfig = Field(default_factory=WorkersConfig)
    criteria: CriteriaConfig = Field(default_factory=CriteriaConfig)
    timeouts: TimeoutsConfig = Field(default_factory=TimeoutsConfig)
    watch: WatchConfig = Field(default_factory=WatchConfig)
    repos: dict[Annotated[str, AfterValidator(_repo_name)], RepoConfig] = Field(
        default_factory=dict
    )
    """Repositories by ``owner/name``."""
    git: GitConfig = Field(default_factory=GitConfig)
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    host: HostSection = Field(default_factory=HostSection)
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    lanes: dict[Annotated[str, AfterValidator(_lane_name)], LaneConfig] = Field(
        default_factory=dict
    )
    """``[lanes."NAME"]``: which worker profile works each lane."""
    prices: dict[Annotated[str, Field(min_length=1, max_length=200)], Price] = Field(
        default_factory=dict
    )
    """``[prices."MODEL"]``: what a model's tokens cost, over `core.prices.DEFAULT_PRICES`."""

    @model_validator(mode="after")
    def _lanes_name_profiles(self) -> HostConfig:
        for lane, chosen in self.lanes.items():
            if chosen.worker not in self.workers.profiles:
                raise PydanticCustomError(
                    "unknown_profile",
                    "lane {lane} names worker {name}, but there is no [workers.{name}].",
                    {"lane": lane, "name": chosen.worker},
                )
        return self

    def profile_for(self, lane: str) -> tuple[str, WorkerProfile] | None:
        """The profile that works ``lane``'s runs: its own, else the default; None: the plain
        ``[workers] command``."""
        chosen = self.lanes.get(lane)
        name = chosen.worker if chosen is not None else self.workers.default
        if name is None:
            return None
        return name, self.workers.profiles[name]

    def steers_at_turn_end(self, lane: str) -> bool:
        """Whether ``lane``'s worker takes a steer only when its agent's turn ends."""
        found = self.profile_for(lane)
        return found is not None and found[1].steers_at_turn_end

    def lane_limit(self, lane: str) -> int:
        """Runs at a time on ``lane``: its concurrency, and one at most on a ``nanoclaw``
        profile's lane, whose runners share the lane's IPC folder (``input/_close`` ends
        whichever runner is there), as NanoClaw runs one container per group."""
        limit = self.workers.limit_for(lane)
        found = self.profile_for(lane)
        return min(limit, 1) if found is not None and found[1].agent == "nanoclaw" else limit

    def sandbox_for(self, lane: str) -> Sandbox | None:
        """The sandbox ``lane``'s workers are configured with (None: bwrap where it works)."""
        found = self.profile_for(lane)
        if found is not None and found[1].sandbox is not None:
            return found[1].sandbox
        return self.workers.sandbox

    def writable_for(self, lane: str, workspace_root: Path) -> list[Path]:
        """The folders ``lane``'s workers may write besides their run's own, as configured
        (``[workers] writable`` and their profile's), made absolute."""
        found = self.profile_for(lane)
        named = [*self.workers.writable, *(found[1].writable if found is not None else [])]
        return [(workspace_root / Path(p).expanduser()).resolve() for p in named]

    def worker_command(self, lane: str) -> list[str] | None:
        """What the host runs for a run on ``lane`` (None: no program is configured for it)."""
        found = self.profile_for(lane)
        return self.workers.command if found is None else found[1].worker_command(found[0])

    def worker_env(self, lane: str) -> dict[str, str]:
        """What a run on ``lane`` adds to the worker's environment: its profile (for the
        adapter, ``JARVIS_WORKER_PROFILE``) and the profile's own variables."""
        found = self.profile_for(lane)
        if found is None:
            return {}
        name, profile = found
        # Not its env: those values (an API key, say) reach the agent as themselves, once.
        doc = {"name": name, **profile.model_dump(exclude={"env"})}
        env = {**profile.env, "JARVIS_WORKER_PROFILE": json.dumps(doc, sort_keys=True)}
        price = price_of(profile.model, self.prices)
        if profile.model and price is not None:
            env[PRICE_ENV] = price_env(profile.model, price)
        return env

    def verify_policy(self) -> VerifyPolicy:
        """How acceptance criteria are verified: ``[criteria]``, and whether a command not
        run for want of a repository lets a run through (``[git] unverified_may_review``)."""
        return replace(self.criteria.policy(), unchecked_may_pass=self.git.unverified_may_review)


class ConfigError(Exception):
    """The configuration file is unusable; ``str()`` lists every problem."""


def with_default_worker(config: HostConfig, default: DefaultWorker) -> HostConfig:
    """``config`` with ``default``'s command where ``[workers] command`` is unset, and every
    configured command's moved modules renamed."""
    workers = config.workers
    profiles = {
        name: profile.model_copy(update={"command": default.renamed(profile.command)})
        if profile.command is not None
        else profile
        for name, profile in workers.profiles.items()
    }
    command = list(default.command) if workers.command is None else workers.command
    update = {"command": default.renamed(command), "profiles": profiles}
    return config.model_copy(update={"workers": workers.model_copy(update=update)})


def config_from_text(
    text: str, path: Path, *, default_worker: DefaultWorker | None = None
) -> HostConfig:
    """Validate ``text`` as the configuration file at ``path`` (named in the messages), with
    ``default_worker`` (when given) for the lanes it gives no program.

    Raises:
        ConfigError: the text is not TOML or breaks the schema; the message names each field.
    """
    try:
        data: dict[str, object] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}.") from None
    try:
        config = HostConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(e.message for e in from_validation_error(exc, data))
        raise ConfigError(f"{path}: {problems}") from None
    return config if default_worker is None else with_default_worker(config, default_worker)


def load_config(
    workspace_root: Path, *, force_poll: bool = False, default_worker: DefaultWorker | None = None
) -> HostConfig:
    """Read ``jarvis.toml`` (absent means all defaults; ``default_worker``, when given, works
    the lanes it gives no program).

    Raises:
        ConfigError: the file is not TOML or breaks the schema; the message names each field.
    """
    path = workspace_root / CONFIG_NAME
    text = ""
    if path.exists():
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}.") from None
    config = config_from_text(text, path, default_worker=default_worker)
    if force_poll or os.environ.get(POLL_ENV, "") not in ("", "0"):
        config = config.model_copy(update={"watch": config.watch.model_copy(update={"poll": True})})
    return config
