"""Merge on approve, on real git: fast-forward, merge commit, conflict, a moved branch, a base in
someone's working tree, a merge already done, and the push that follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.repos.git import git
from core.repos.merge import merge_branch
from tests.gitrepo import commit, make_repo, run_git


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "app.git", {"app.py": "a = 1\nb = 1\n"}, bare=True)


def on_branch(repo: Path, branch: str, files: dict[str, str | None], tmp: Path) -> str:
    """Commit ``files`` on ``branch`` of ``repo`` through a scratch worktree (then removed)."""
    scratch = tmp / f"scratch-{branch.replace('/', '-')}"
    exists = run_git(repo, "branch", "--list", branch)
    if exists:
        run_git(repo, "worktree", "add", "--quiet", str(scratch), branch)
    else:
        run_git(repo, "worktree", "add", "--quiet", "-b", branch, str(scratch), "main")
    sha = commit(scratch, files, f"change on {branch}")
    run_git(repo, "worktree", "remove", "--force", str(scratch))
    return sha


def merge(repo: Path, head: str, **given: object):  # type: ignore[no-untyped-def]
    options: dict[str, object] = {"branch": "jarvis-r1", "base": "main", "head": head,
                                  "run_id": "r1", "operator": "ops"}  # fmt: skip
    options.update(given)
    return merge_branch(repo, **options)  # type: ignore[arg-type]


def test_a_branch_ahead_of_its_base_fast_forwards(bare: Path, tmp_path: Path) -> None:
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    outcome = merge(bare, head)
    assert (outcome.done, outcome.refused) == ("fast_forward", None)
    assert run_git(bare, "rev-parse", "main") == head == outcome.merged_commit


def test_a_base_that_moved_on_gets_a_merge_commit_naming_run_and_approver(
    bare: Path, tmp_path: Path
) -> None:
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    base = on_branch(bare, "main", {"other.py": "x = 1\n"}, tmp_path)
    outcome = merge(bare, head, operator="dana")
    assert outcome.done == "merge_commit"
    merged = run_git(bare, "rev-parse", "main")
    assert merged == outcome.merged_commit
    assert run_git(bare, "rev-list", "--parents", "-n", "1", merged).split()[1:] == [base, head]
    message = run_git(bare, "log", "-1", "--format=%B", merged)
    assert message.startswith("Merge branch 'jarvis-r1' into main")
    assert "Run r1, approved by dana." in message
    assert run_git(bare, "show", "main:app.py") == "a = 2\nb = 1"
    assert run_git(bare, "show", "main:other.py") == "x = 1"


def test_a_conflict_is_refused_and_nothing_changes(bare: Path, tmp_path: Path) -> None:
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    base = on_branch(bare, "main", {"app.py": "a = 3\nb = 1\n"}, tmp_path)
    outcome = merge(bare, head)
    assert outcome.refused == "merge_conflict" and outcome.done is None
    assert outcome.conflicts == ["app.py"]
    assert "1 file(s) conflict (app.py); nothing was merged" in outcome.note
    assert run_git(bare, "rev-parse", "main") == base
    assert run_git(bare, "rev-parse", "jarvis-r1") == head


def test_a_branch_that_moved_since_its_check_is_refused(bare: Path, tmp_path: Path) -> None:
    checked = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    on_branch(bare, "jarvis-r1", {"sneaky.py": "x = 1\n"}, tmp_path)
    outcome = merge(bare, checked)
    assert outcome.refused == "branch_moved"
    assert f"the gates checked {checked[:12]}" in outcome.note
    assert run_git(bare, "rev-parse", "main") != checked


def test_a_base_checked_out_in_a_working_tree_is_not_moved(tmp_path: Path) -> None:
    clone = make_repo(tmp_path / "clone")  # main is checked out here: someone works in it
    head = on_branch(clone, "jarvis-r1", {"new.py": "x = 1\n"}, tmp_path)
    before = run_git(clone, "rev-parse", "main")
    outcome = merge(clone, head)
    assert outcome.done == "recommended" and outcome.refused is None
    assert f"main is checked out at {clone}" in outcome.note
    assert run_git(clone, "rev-parse", "main") == before
    assert run_git(clone, "status", "--porcelain") == ""


def test_approving_again_after_an_interrupted_merge_finds_it_done(
    bare: Path, tmp_path: Path
) -> None:
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    assert merge(bare, head).done == "fast_forward"
    again = merge(bare, head)
    assert (again.done, again.refused) == ("already_merged", None)


def test_a_base_moved_to_the_runs_commit_outside_jarvis_is_never_already_merged(
    bare: Path, tmp_path: Path
) -> None:
    # A worker running unconfined moved main to its own commit while it ran.
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    run_git(bare, "update-ref", "refs/heads/main", head)
    run_git(bare, "update-ref", "refs/jarvis/r1/attempt-1", head)  # its own pin: not a pass
    outcome = merge(bare, head)
    assert (outcome.done, outcome.refused) == (None, "moved_outside")
    assert "no approval of the run merged it" in outcome.note
    assert git(["rev-parse", "--verify", "--quiet", "refs/jarvis/r1/merged"], cwd=bare,
               check=False).code != 0  # fmt: skip


def test_a_base_holding_the_same_commits_another_run_brought_in_is_already_merged(
    bare: Path, tmp_path: Path
) -> None:
    # Two runs made the very same commit (deterministic workers can); r0's was approved first.
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    run_git(bare, "update-ref", "refs/jarvis/r0/attempt-1", head)
    assert merge(bare, head, run_id="r0", branch="jarvis-r1").done == "fast_forward"
    outcome = merge(bare, head)
    assert (outcome.done, outcome.refused) == ("already_merged", None)
    assert "another run's work holds the same commits" in outcome.note


def test_a_merge_commit_is_marked_too_so_approving_again_finds_it(
    bare: Path, tmp_path: Path
) -> None:
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    on_branch(bare, "main", {"other.py": "x = 1\n"}, tmp_path)
    assert merge(bare, head).done == "merge_commit"
    assert run_git(bare, "rev-parse", "refs/jarvis/r1/merged") == head
    assert merge(bare, head).done == "already_merged"


def test_the_base_is_pushed_after_the_merge(bare: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "clone", "--quiet", "--bare", str(bare), str(remote))
    run_git(bare, "remote", "add", "upstream", str(remote))
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    outcome = merge(bare, head, remote="upstream")
    assert outcome.pushed is True and "Pushed main to upstream." in outcome.note
    assert run_git(remote, "rev-parse", "main") == head


def test_a_rejected_push_refuses_the_merge_keeps_it_and_approving_again_pushes(
    bare: Path, tmp_path: Path
) -> None:
    run_git(bare, "remote", "add", "upstream", str(tmp_path / "nowhere.git"))
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    outcome = merge(bare, head, remote="upstream")
    assert outcome.refused == "push_rejected" and outcome.pushed is False
    assert outcome.done == "fast_forward" and outcome.merged_commit == head
    assert "Pushing main to upstream was rejected" in outcome.note
    assert outcome.note.endswith("Approve again to push again.")
    assert run_git(bare, "rev-parse", "main") == head  # merged here all the same
    # The remote is there now: approving again finds the merge done and pushes it.
    run_git(tmp_path, "init", "--quiet", "--bare", str(tmp_path / "nowhere.git"))
    again = merge(bare, head, remote="upstream")
    assert (again.done, again.refused, again.pushed) == ("already_merged", None, True)
    assert run_git(tmp_path / "nowhere.git", "rev-parse", "main") == head


def test_a_base_moved_while_the_merge_was_made_is_refused_and_left_alone(
    bare: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = on_branch(bare, "jarvis-r1", {"app.py": "a = 2\nb = 1\n"}, tmp_path)
    other = on_branch(bare, "other", {"notes.txt": "x\n"}, tmp_path)
    on_branch(bare, "main", {"README": "moved on\n"}, tmp_path)  # a merge commit is needed
    import core.repos.merge as merging

    real = merging.git

    def git_racing(args: list[str], **kwargs: object):  # type: ignore[no-untyped-def]
        if args[0] == "commit-tree":  # someone pushes to main while the merge is made
            run_git(bare, "update-ref", "refs/heads/main", other)
        return real(args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(merging, "git", git_racing)
    outcome = merge(bare, head)
    assert outcome.refused == "base_moved" and outcome.merged_commit is None
    assert f"to {other[:12]}" in outcome.note and "Approve again" in outcome.note
    assert run_git(bare, "rev-parse", "main") == other  # theirs stands, nothing dropped
    # The mark is taken back: the run's work is not in main, and is never taken as merged.
    assert run_git(bare, "for-each-ref", "refs/jarvis/r1/merged") == ""
