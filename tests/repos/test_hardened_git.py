"""The host's git calls run no program a repository's configuration names: hooks (the bare
repository's ``reference-transaction`` hook at an approval's fast-forward among them) and
``core.fsmonitor`` planted in the main repository, as a worker running unconfined could plant
them, never run, whatever git command the host uses on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.repos.git import git
from core.repos.merge import merge_branch
from core.repos.patches import read_patch
from tests.gitrepo import IDENTITY, commit, make_repo, run_git

HOOKS = ("reference-transaction", "post-checkout", "pre-push", "post-merge", "pre-commit",
         "post-commit", "post-rewrite", "pre-auto-gc")  # fmt: skip


def plant(git_dir: Path, markers: Path) -> None:
    """Every hook and an fsmonitor that would leave a marker file named for itself."""
    markers.mkdir(exist_ok=True)
    (git_dir / "hooks").mkdir(exist_ok=True)
    for name in HOOKS:
        hook = git_dir / "hooks" / name
        hook.write_text(f'#!/bin/sh\ntouch "{markers}/{name}"\ncat >/dev/null\n')
        hook.chmod(0o755)
    monitor = git_dir / "fsmonitor"
    monitor.write_text(f'#!/bin/sh\ntouch "{markers}/fsmonitor"\n')
    monitor.chmod(0o755)
    with (git_dir / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {monitor}\n")


def test_a_bare_repositorys_planted_hooks_never_run_at_a_fast_forward(tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "app.git", bare=True)
    scratch = tmp_path / "scratch"
    run_git(bare, "worktree", "add", "--quiet", "-b", "jarvis-r1", str(scratch), "main")
    head = commit(scratch, {"x.py": "x = 1\n"})
    run_git(bare, "worktree", "remove", "--force", str(scratch))
    markers = tmp_path / "markers"
    plant(bare, markers)
    outcome = merge_branch(bare, branch="jarvis-r1", base="main", head=head, run_id="r1",
                           operator="ops", remote=str(tmp_path / "nowhere"))  # fmt: skip
    assert outcome.done == "fast_forward", outcome
    assert run_git(bare, "rev-parse", "main") == head
    assert sorted(p.name for p in markers.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        ["status", "--porcelain"],
        ["diff", "HEAD"],
        ["update-ref", "refs/heads/other", "HEAD"],
        ["checkout", "--quiet", "-b", "again"],
        ["commit", "--quiet", "--allow-empty", "-m", "x"],
    ],
    ids=lambda c: c[0],
)
def test_no_git_command_the_host_runs_starts_a_planted_program(
    tmp_path: Path, command: list[str]
) -> None:
    repo = make_repo(tmp_path / "app")
    markers = tmp_path / "markers"
    plant(repo / ".git", markers)
    (repo / "src" / "app.py").write_text("VALUE = 2\n")
    git(command, cwd=repo, env=IDENTITY)
    assert sorted(p.name for p in markers.iterdir()) == []


def test_reading_a_patch_runs_no_planted_program(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    base = run_git(repo, "rev-parse", "HEAD")
    head = commit(repo, {"src/app.py": "VALUE = 2\n"})
    markers = tmp_path / "markers"
    plant(repo / ".git", markers)
    patch, _ = read_patch(repo, base, head, 1 << 20)
    assert "+VALUE = 2" in patch
    assert sorted(p.name for p in markers.iterdir()) == []
