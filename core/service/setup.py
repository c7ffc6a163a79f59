"""A workspace's configuration through the front door: ``jarvis.toml`` (its repositories, its
worker profiles and their sandbox), read and edited as the engine reads it."""

from __future__ import annotations

from pathlib import Path

from core.contracts.names import ref_problem
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.repositories import (
    looks_like_url,
    repo_name_problem,
    repo_path_problem,
    repo_url_problem,
)
from core.host.config import CONFIG_NAME, ConfigError, HostConfig, RepoConfig, load_config
from core.host.repo_config import ConfigWriteError, RepoRefused, add_repo, remove_repo
from core.host.sandbox import Probe, SandboxUnavailable, choose, probe
from core.host.worker_check import check_program
from core.host.worker_profiles import DefaultWorker
from core.service.errors import ServiceError

__all__ = [
    "CONFIG_NAME",
    "ConfigError",
    "ConfigWriteError",
    "DefaultWorker",
    "HostConfig",
    "Probe",
    "RepoConfig",
    "RepoRefused",
    "SandboxUnavailable",
    "add_repo",
    "check_program",
    "choose",
    "from_validation_error",
    "load_config",
    "looks_like_url",
    "probe",
    "ref_problem",
    "remove_repo",
    "repo_name_problem",
    "repo_path_problem",
    "repo_url_problem",
    "universal_default",
]


def universal_default(root: Path) -> bool:
    """Whether the workspace gives the universal checklist to every dispatch.

    Raises:
        ServiceError: ``config_unusable``: its ``jarvis.toml`` cannot be used.
    """
    try:
        return load_config(root).criteria.universal
    except ConfigError as exc:
        raise ServiceError("config_unusable", str(exc)) from None
