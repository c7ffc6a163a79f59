"""Worker profiles in jarvis.toml: validated, chosen per lane, and run by the real host."""

from __future__ import annotations

import sqlite3
import sys
import tomllib
from pathlib import Path

import pytest

from core.host.config import ConfigError, HostConfig, load_config
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import dispatch, running_host, wait_for_states
from tests.processes import HANG_GUARD_S

PROFILES = """\
[workers]
default = "claude"
concurrency = 2

[workers.claude]
agent = "claude-code"
model = "sonnet"
env = { ANTHROPIC_BASE_URL = "http://127.0.0.1:9" }

[workers.own]
agent = "command"
command = ["./bin/my-worker", "--fast"]

[lanes."jarvis-worker-2"]
worker = "own"
"""


def parse(text: str) -> HostConfig:
    return HostConfig.model_validate(tomllib.loads(text))


def test_profiles_are_tables_of_workers_and_lanes_choose_them() -> None:
    config = parse(PROFILES)
    assert sorted(config.workers.profiles) == ["claude", "own"]
    assert config.workers.concurrency == 2  # [workers]'s own keys stay its own
    name, claude = config.profile_for("jarvis-worker-1") or ("", None)
    assert name == "claude" and claude is not None and claude.executable() == ["claude"]
    assert config.worker_command("jarvis-worker-1")[1:] == [
        "-m", "core.agents.runner", "--profile", "claude"
    ]  # fmt: skip
    assert config.worker_command("jarvis-worker-2") == ["./bin/my-worker", "--fast"]
    env = config.worker_env("jarvis-worker-1")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert '"model": "sonnet"' in env["JARVIS_WORKER_PROFILE"]
    assert "ANTHROPIC_BASE_URL" not in env["JARVIS_WORKER_PROFILE"]  # values reach it once


def test_without_profiles_every_lane_runs_the_plain_command() -> None:
    config = parse("[workers]\ncommand = ['my-worker']\n")
    assert config.profile_for("jarvis-worker-1") is None
    assert config.worker_command("jarvis-worker-1") == ["my-worker"]
    assert config.worker_env("jarvis-worker-1") == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "[workers]\ndefault = 'nobody'\n",
            "default names nobody, but there is no [workers.nobody]",
        ),
        ("[workers.x]\nagent = 'gpt'\n", "workers.profiles.x.agent"),
        ("[workers.x]\nagent = 'command'\n", "must set command"),
        ("[workers.Bad]\nagent = 'aider'\n", "is not a profile name"),
        ("[workers.x]\nagent = 'aider'\nenv = { JARVIS_RUN_ID = 'r' }\n", "JARVIS_* belong"),
        ("[workers.x]\nagent = 'aider'\n[lanes.'a/b']\nworker = 'x'\n", "lane 'a/b'"),
        ("[lanes.'jarvis-worker-1']\nworker = 'ghost'\n", "names worker ghost"),
    ],
)
def test_bad_profiles_are_refused_with_a_sentence(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "jarvis.toml").write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert says in str(refused.value)


def test_the_host_runs_a_lanes_command_profile_with_its_environment(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    # The profile's program notes what it was given, then works as the simulated worker.
    (ws / "bin").mkdir()
    worker = ws / "bin" / "noting-worker"
    worker.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        "from pathlib import Path\n"
        "Path(os.environ['JARVIS_CHECKOUT'], 'noted').write_text(os.environ['PROFILE_MARK'])\n"
        "from jarvis_sim.simworker import main\n"
        "sys.exit(main([]))\n"
    )
    worker.chmod(0o755)
    (ws / "jarvis.toml").write_text(
        '[workers.noting]\nagent = "command"\ncommand = ["./bin/noting-worker"]\n'
        'env = { PROFILE_MARK = "from the profile" }\n'
        '[lanes."jarvis-worker-2"]\nworker = "noting"\n'
    )
    dispatch(store, "r1", lane="jarvis-worker-2")
    dispatch(store, "r2", lane="jarvis-worker-1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested", "r2": "review_requested"},
                        HANG_GUARD_S, host=host)  # fmt: skip
    assert (ws / "checkouts" / "r1" / "noted").read_text() == "from the profile"
    assert not (ws / "checkouts" / "r2" / "noted").exists()  # its lane runs the default
