"""Branches of the main repository that moved while a run ran, on real git: told at gating, and
one moved to the run's own commits fails the gate."""

from __future__ import annotations

from pathlib import Path

from core.repos.ref_moves import REF_GATE, branches, ref_gate
from tests.gitrepo import make_repo, run_git
from tests.repos.test_merge import on_branch


def test_nothing_moved_passes(tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "app.git", bare=True)
    before = branches(bare)
    head = on_branch(bare, "jarvis-r1", {"x.py": "x = 1\n"}, tmp_path)
    gate = ref_gate(bare, before, own="refs/heads/jarvis-r1", head=head,
                    base_commit=before["refs/heads/main"], run_id="r1")  # fmt: skip
    assert (gate.name, gate.status) == (REF_GATE, "passed")
    assert gate.detail == "no other branch moved while the run ran"


def test_a_base_moved_by_others_is_told_and_passes(tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "app.git", bare=True)
    before = branches(bare)
    head = on_branch(bare, "jarvis-r1", {"x.py": "x = 1\n"}, tmp_path)
    moved = on_branch(bare, "main", {"y.py": "y = 1\n"}, tmp_path)
    on_branch(bare, "release", {"z.py": "z = 1\n"}, tmp_path)
    gate = ref_gate(bare, before, own="refs/heads/jarvis-r1", head=head,
                    base_commit=before["refs/heads/main"], run_id="r1")  # fmt: skip
    assert gate.status == "passed"
    main = before["refs/heads/main"]
    assert f"main moved {main[:12]} → {moved[:12]}" in gate.detail
    assert "release appeared at" in gate.detail and "none holds its commits" in gate.detail


def test_a_branch_moved_to_the_runs_commits_fails(tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "app.git", bare=True)
    before = branches(bare)
    first = on_branch(bare, "jarvis-r1", {"x.py": "x = 1\n"}, tmp_path)
    head = on_branch(bare, "jarvis-r1", {"x.py": "x = 2\n"}, tmp_path)
    run_git(bare, "update-ref", "refs/heads/main", first)  # what `git update-ref` by a worker did
    run_git(bare, "update-ref", "refs/jarvis/r1/attempt-1", head)  # the host's pin of its work
    gate = ref_gate(bare, before, own="refs/heads/jarvis-r1", head=head,
                    base_commit=before["refs/heads/main"], run_id="r1")  # fmt: skip
    assert gate.status == "failed"
    assert gate.detail.startswith("main holds this run's commits, put there outside Jarvis")


def test_a_branch_moved_to_commits_another_run_made_too_passes(tmp_path: Path) -> None:
    # Two runs made the very same commit; the host pinned it for r0, then moved r0's branch.
    bare = make_repo(tmp_path / "app.git", bare=True)
    before = branches(bare)
    head = on_branch(bare, "jarvis-r1", {"x.py": "x = 1\n"}, tmp_path)
    run_git(bare, "update-ref", "refs/jarvis/r1/attempt-1", head)
    run_git(bare, "update-ref", "refs/jarvis/r0/attempt-1", head)
    run_git(bare, "update-ref", "refs/heads/jarvis-r0", head)
    gate = ref_gate(bare, before, own="refs/heads/jarvis-r1", head=head,
                    base_commit=before["refs/heads/main"], run_id="r1")  # fmt: skip
    assert gate.status == "passed", gate.detail
    assert "jarvis-r0 appeared at" in gate.detail and "none holds its commits" in gate.detail
