"""`jarvis workers`: each profile, the lanes it works, whether its program is here and which
version — never the values of its environment."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import jarvis


def test_profiles_with_programs_found_and_not(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    agent = ws / "bin" / "fake-agent"
    agent.write_text("#!/bin/sh\necho 'fake-agent 1.2.3 (\x1b[31mred\x1b[0m)'\n")
    agent.chmod(0o755)
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "mine"\n'
        '[workers.mine]\nagent = "claude-code"\ncommand = ["./bin/fake-agent"]\n'
        'env = { ANTHROPIC_API_KEY = "sk-ant-not-for-listing" }\n'
        '[workers.gone]\nagent = "aider"\ncommand = ["no-such-agent-here"]\n'
        '[lanes."jarvis-worker-3"]\nworker = "gone"\n'
    )
    listed = jarvis("workers", "--workspace", ws, "--json")
    assert listed.code == 0, listed.stderr
    rows = {row["name"]: row for row in listed.json()["workers"]}
    assert set(rows) == {"mine", "gone"}
    mine, gone = rows["mine"], rows["gone"]
    assert (mine["found"], mine["default"], mine["env"]) == (True, True, ["ANTHROPIC_API_KEY"])
    assert mine["version"] == "fake-agent 1.2.3 (\\x1b[31mred\\x1b[0m)"  # inert
    assert (gone["found"], gone["lanes"]) == (False, ["jarvis-worker-3"])
    assert gone["problem"] == "no-such-agent-here is not found"
    assert "sk-ant-not-for-listing" not in listed.stdout
    readable = jarvis("workers", "--workspace", ws)
    assert readable.code == 0
    assert "\x1b" not in readable.stdout and "sk-ant-not-for-listing" not in readable.stdout
    assert "not found" in readable.stdout and "lanes: jarvis-worker-3" in readable.stdout


def test_without_profiles_the_plain_command_is_listed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    listed = jarvis("workers", "--workspace", ws, "--json")
    (row,) = listed.json()["workers"]
    assert (row["name"], row["agent"], row["found"]) == ("(command)", "command", True)
    # A command is any program: it is not run to ask its version (see below).
    assert (row["version"], row["version_asked"], row["problem"]) == (None, False, None)


def test_a_command_profiles_program_is_never_run_to_ask_its_version(tmp_path: Path) -> None:
    # A real worker did its work when `jarvis workers` ran it with --version.
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    worker = ws / "bin" / "worker"
    worker.write_text(f"#!/bin/sh\necho ran \"$@\" >> '{tmp_path}/ran'\necho worker 9\n")
    worker.chmod(0o755)
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "plain"\n'
        '[workers.plain]\nagent = "command"\ncommand = ["./bin/worker", "--go"]\n'
        '[workers.known]\nagent = "codex"\ncommand = ["./bin/worker"]\n'
    )
    listed = jarvis("workers", "--workspace", ws, "--json")
    assert listed.code == 0, listed.stderr
    rows = {row["name"]: row for row in listed.json()["workers"]}
    assert (rows["plain"]["found"], rows["plain"]["version"]) == (True, None)
    assert rows["plain"]["version_asked"] is False
    assert (rows["known"]["version"], rows["known"]["version_asked"]) == ("worker 9", True)
    assert (tmp_path / "ran").read_text() == "ran --version\n"  # the codex profile's only
    readable = jarvis("workers", "--workspace", ws)
    assert "version not asked" in readable.stdout


def test_a_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "jarvis.toml").write_text("[workers]\ndefault = 'ghost'\n")
    result = jarvis("workers", "--workspace", ws)
    assert result.code == 2 and "ghost" in result.stderr


def test_each_profile_says_how_its_workers_are_confined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "loose"\n'
        '[workers.loose]\nagent = "command"\ncommand = ["true"]\n'
        '[workers.strict]\nagent = "command"\ncommand = ["true"]\nsandbox = "bwrap"\n'
        '[workers.free]\nagent = "command"\ncommand = ["true"]\nsandbox = "none"\n'
    )
    # A PATH without bwrap: the machine has no sandbox to give.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "true").symlink_to(shutil.which("true") or "/bin/true")
    monkeypatch.setenv("PATH", str(bin_dir))
    listed = jarvis("workers", "--workspace", ws, "--json")
    assert listed.code == 0, listed.stderr
    out = listed.json()
    missing = "bubblewrap is not installed (no bwrap on PATH)"
    assert out["sandbox"] == {"bwrap": None, "problem": missing}
    rows = {row["name"]: row for row in out["workers"]}
    assert rows["loose"]["sandbox"] == "none"
    assert rows["loose"]["sandbox_problem"] == "bubblewrap is not installed (no bwrap on PATH)"
    assert rows["strict"]["sandbox_problem"].startswith("runs cannot start: the profile asks")
    assert rows["free"]["sandbox_problem"] == 'the profile says sandbox = "none"'
    readable = jarvis("workers", "--workspace", ws).stdout
    assert "sandbox none — bubblewrap is not installed" in readable
    assert "workers run unconfined" in readable


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_where_bubblewrap_works_workers_are_confined_by_default(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    listed = jarvis("workers", "--workspace", ws, "--json").json()
    if listed["sandbox"]["bwrap"] is None:
        pytest.skip(f"bubblewrap cannot run here: {listed['sandbox']['problem']}")
    (row,) = listed["workers"]
    assert (row["sandbox"], row["sandbox_problem"]) == ("bwrap", None)
