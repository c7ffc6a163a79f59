"""Only an allowlisted tool's bare name, found on the host's own PATH, runs unattended.

Each test leaves a program in the checkout (what a worker can do) that would write a marker
file if it ever ran, and checks both the verdict and that the marker is absent.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from core.criteria.allowlist import DEFAULT_POLICY, command_key, decide
from core.criteria.runner import child_env, search_path
from core.criteria.verify import CriterionOutcome, verify_criterion

TOOL = "jarvis-test-tool"
POLICY = replace(DEFAULT_POLICY, allowlist=DEFAULT_POLICY.allowlist | {TOOL, "json.tool"})


def _program(path: Path, says: str) -> Path:
    """An executable script that prints ``says`` and leaves ``<says>.ran`` in its cwd."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {says}\ntouch {says}.ran\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def host_bin(tmp_path: Path) -> Path:
    """A folder of the host's own PATH, outside the checkout, holding the real tool."""
    folder = tmp_path / "host-bin"
    _program(folder / TOOL, "host")
    return folder


def _criterion(command: list[str]) -> dict[str, object]:
    return {"type": "command_success", "command": command, "description": "check"}


def _verify(
    checkout: Path, command: list[str], path: str, monkeypatch: pytest.MonkeyPatch
) -> CriterionOutcome:
    monkeypatch.setenv("PATH", path)
    return verify_criterion(_criterion(command), checkout, POLICY)


@pytest.mark.parametrize("where", ["/abs", "./", "sub/"])
def test_a_tool_named_by_path_waits_for_approval(
    checkout: Path, tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if where == "/abs":
        program = str(_program(tmp_path / "any" / "dir" / TOOL, "path"))
    else:
        _program(checkout / where / TOOL, "path")
        program = f"{where}{TOOL}"
    outcome = _verify(checkout, [program, "-q"], "/usr/bin:/bin", monkeypatch)
    assert outcome.status == "needs_approval"
    assert "names its program by path" in outcome.output
    assert not list(checkout.rglob("path.ran"))


def test_a_worker_written_make_waits_for_approval(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(checkout / "make", "worker")
    outcome = _verify(checkout, ["./make", "test"], "/usr/bin:/bin", monkeypatch)
    assert outcome.status == "needs_approval"
    assert not (checkout / "worker.ran").exists()


@pytest.mark.parametrize("entry", [".", "", "bin", "./bin"])
def test_a_relative_path_entry_never_finds_the_tool_in_the_checkout(
    checkout: Path, host_bin: Path, entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(checkout / TOOL, "worker")
    _program(checkout / "bin" / TOOL, "worker")
    # The relative entry comes first: a plain exec would pick the checkout's copy.
    path = os.pathsep.join([entry, str(host_bin), "/usr/bin", "/bin"])
    outcome = _verify(checkout, [TOOL], path, monkeypatch)
    assert (outcome.status, outcome.output) == ("passed", "host\n")
    assert not (checkout / "worker.ran").exists()
    assert (checkout / "host.ran").exists()


def test_a_tool_only_in_the_checkout_is_not_found_however_path_reads(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(checkout / TOOL, "worker")
    _program(checkout / "bin" / TOOL, "worker")
    path = os.pathsep.join([".", "bin", str(checkout / "bin"), "/usr/bin"])
    outcome = _verify(checkout, [TOOL], path, monkeypatch)
    assert outcome.status == "error"
    assert outcome.output == f"command not found: {TOOL!r} is not on the host's PATH"
    assert not (checkout / "worker.ran").exists()


def test_a_path_entry_whose_tool_links_into_the_checkout_waits_for_approval(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = _program(checkout / "tools" / "real", "worker")
    linked = tmp_path / "linked-bin"
    linked.mkdir()
    (linked / TOOL).symlink_to(planted)
    outcome = _verify(checkout, [TOOL], str(linked), monkeypatch)
    assert outcome.status == "needs_approval"
    assert "resolves into the checkout" in outcome.output
    assert not (checkout / "worker.ran").exists()


def test_python_dash_m_waits_when_the_working_directory_would_shadow_the_module(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = ["python3", "-m", "json.tool", "data.json"]
    (checkout / "data.json").write_text("{}")
    monkeypatch.setenv("PATH", os.environ["PATH"])
    assert verify_criterion(_criterion(command), checkout, POLICY).status == "passed"
    (checkout / "json").mkdir()
    (checkout / "json" / "__init__.py").write_text("open('worker.ran', 'w')\n")
    outcome = verify_criterion(_criterion(command), checkout, POLICY)
    assert outcome.status == "needs_approval"
    assert "would import 'json' from the working directory" in outcome.output
    assert not (checkout / "worker.ran").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["env", TOOL],
        ["nice", TOOL],
        ["sh", "-c", TOOL],
        ["npx", TOOL],
        ["uv", "run", TOOL],
        ["poetry", "run", TOOL],
        ["/usr/bin/python3", "-m", "json.tool"],
    ],
)
def test_launchers_and_interpreters_by_path_wait_for_approval(
    checkout: Path, host_bin: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = _verify(checkout, command, f"{host_bin}{os.pathsep}/usr/bin:/bin", monkeypatch)
    assert outcome.status == "needs_approval"
    assert not (checkout / "host.ran").exists()


def test_an_approved_path_runs_as_written(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _program(checkout / "make", "worker")
    approved = replace(POLICY, approved=frozenset({command_key(["./make"])}))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    outcome = verify_criterion(_criterion(["./make"]), checkout, approved)
    assert (outcome.status, outcome.output) == ("passed", "worker\n")


def test_decide_names_the_program_it_will_execute(checkout: Path, host_bin: Path) -> None:
    decision = decide([TOOL, "-x"], POLICY, shell=False, search_path=str(host_bin),
                      cwd=checkout, checkout=checkout)  # fmt: skip
    assert decision.verdict == "run"
    assert decision.executable == str(host_bin / TOOL)


def test_commands_get_only_absolute_path_entries_outside_the_checkout(checkout: Path) -> None:
    path = os.pathsep.join(["", ".", "bin", str(checkout / "bin"), "/usr/bin", "/bin"])
    assert search_path(path, checkout) == "/usr/bin:/bin"
    assert child_env({"PATH": path}, checkout=checkout)["PATH"] == "/usr/bin:/bin"


def test_the_workspace_allowlist_takes_tool_names_not_paths(tmp_path: Path) -> None:
    from core.host.config import ConfigError, load_config

    (tmp_path / "jarvis.toml").write_text('[criteria]\nallow = ["hatch", "./make"]\n')
    with pytest.raises(ConfigError, match=r"criteria.allow.1: './make' is not a tool name"):
        load_config(tmp_path)
    (tmp_path / "jarvis.toml").write_text('[criteria]\nallow = ["hatch"]\n')
    assert "hatch" in load_config(tmp_path).criteria.policy().allowlist
