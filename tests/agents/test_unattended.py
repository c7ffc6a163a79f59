"""The flags Jarvis gives Codex so it can commit in a run's checkout, whatever the layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agents.unattended import codex_args, git_metadata, sandbox_mode, unattended_args
from tests.gitrepo import make_repo, run_git


@pytest.mark.parametrize(
    ("env", "mode"),
    [({}, "none"), ({"JARVIS_SANDBOX": "none"}, "none"), ({"JARVIS_SANDBOX": "bwrap"}, "bwrap"),
     ({"JARVIS_SANDBOX": "firejail"}, "none")],
)  # fmt: skip
def test_an_absent_or_unknown_sandbox_is_none(env: dict[str, str], mode: str) -> None:
    assert sandbox_mode(env) == mode


def test_a_checkout_with_its_own_git_directory_gets_it_writable(tmp_path: Path) -> None:
    checkout = make_repo(tmp_path / "run")
    assert codex_args(checkout, [], "none") == [
        "--sandbox=workspace-write",
        f"--add-dir={checkout / '.git'}",
    ]


def test_a_linked_worktree_gets_its_git_dir_and_the_shared_objects_and_refs(
    tmp_path: Path,
) -> None:
    origin = make_repo(tmp_path / "origin.git", bare=True)
    checkout = tmp_path / "worktrees" / "r1"
    run_git(origin, "worktree", "add", "-q", "-b", "jarvis-r1", str(checkout), "main")
    # A bare repository keeps no reflogs: its logs folder is not there, and not named.
    assert git_metadata(checkout) == [
        origin / "worktrees" / "r1",
        origin / "objects",
        origin / "refs",
    ]


def test_a_folder_without_a_repository_gets_the_sandbox_only(tmp_path: Path) -> None:
    assert codex_args(tmp_path, [], "none") == ["--sandbox=workspace-write"]


def test_under_jarvis_s_own_sandbox_codex_s_is_relaxed(tmp_path: Path) -> None:
    checkout = make_repo(tmp_path / "run")
    env = {"JARVIS_SANDBOX": "bwrap"}
    assert unattended_args("codex", checkout, [], env) == ["--sandbox=danger-full-access"]


@pytest.mark.parametrize(
    "given",
    [["--sandbox", "read-only"], ["--sandbox=workspace-write"], ["-s", "danger-full-access"],
     ["-sread-only"], ["--dangerously-bypass-approvals-and-sandbox"],
     ["-c", "sandbox_mode=workspace-write"], ["--config=sandbox_mode='read-only'"]],
)  # fmt: skip
def test_a_profile_that_chooses_a_sandbox_keeps_it(tmp_path: Path, given: list[str]) -> None:
    checkout = make_repo(tmp_path / "run")
    for mode in ("none", "bwrap"):
        assert codex_args(checkout, given, mode) == [f"--add-dir={checkout / '.git'}"]


def test_other_agents_get_nothing_here(tmp_path: Path) -> None:
    for agent in ("claude-code", "opencode", "aider"):
        assert unattended_args(agent, tmp_path, [], {}) == []
