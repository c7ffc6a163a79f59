"""The ``nanoclaw`` worker profile in jarvis.toml: validated, container or plain process, and
one run at a time on its lane."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from core.host.config import ConfigError, HostConfig, load_config

PROFILES = """\
[workers]
default = "nc"
concurrency = 3

[workers.nc]
agent = "nanoclaw"
command = ["docker", "run", "-i", "--rm", "nanoclaw-agent:latest"]
secrets = ["GITHUB_TOKEN"]
assistant_name = "Jarvis"

[workers.plain]
agent = "nanoclaw"
command = ["node", "/srv/agent-runner/dist/index.js"]

[workers.wrapped]
agent = "nanoclaw"
command = ["sudo", "-n", "docker", "run", "-i", "nanoclaw-agent:latest"]
container = true

[workers.sim]
agent = "command"
command = ["my-worker"]

[lanes."jarvis-worker-2"]
worker = "plain"
[lanes."jarvis-worker-3"]
worker = "sim"
"""


def parse(text: str) -> HostConfig:
    return HostConfig.model_validate(tomllib.loads(text))


def test_a_nanoclaw_profile_runs_its_command_as_given() -> None:
    config = parse(PROFILES)
    assert config.worker_command("jarvis-worker-1") == [
        "docker", "run", "-i", "--rm", "nanoclaw-agent:latest"
    ]  # fmt: skip
    profiles = config.workers.profiles
    assert profiles["nc"].is_container and profiles["wrapped"].is_container
    assert not profiles["plain"].is_container
    assert profiles["nc"].secrets == ["GITHUB_TOKEN"]
    assert profiles["nc"].assistant_name == "Jarvis"


def test_a_nanoclaw_lane_runs_one_at_a_time() -> None:
    config = parse(PROFILES)
    assert config.lane_limit("jarvis-worker-1") == 1
    assert config.lane_limit("jarvis-worker-2") == 1
    assert config.lane_limit("jarvis-worker-3") == 3


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[workers.x]\nagent = 'nanoclaw'\n", "agent = 'nanoclaw' must set command"),
        ("[workers.x]\nagent = 'nanoclaw'\ncommand = ['n']\nmodel = 'm'\n", "no model or args"),
        ("[workers.x]\nagent = 'nanoclaw'\ncommand = ['n']\nargs = ['-v']\n", "no model or args"),
        ("[workers.x]\nagent = 'aider'\ncontainer = true\n", "container belong to agent"),
        ("[workers.x]\nagent = 'codex'\nsecrets = ['A']\n", "secrets belong to agent"),
        (
            "[workers.x]\nagent = 'nanoclaw'\ncommand = ['docker', 'start']\ncontainer = true\n",
            "needs a command with a 'run' word",
        ),
        (
            "[workers.x]\nagent = 'nanoclaw'\ncommand = ['n']\nsecrets = ['JARVIS_X']\n",
            "not a variable name",
        ),
    ],
)
def test_bad_nanoclaw_profiles_are_refused_with_a_sentence(
    tmp_path: Path, text: str, says: str
) -> None:
    (tmp_path / "jarvis.toml").write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert says in str(refused.value)
