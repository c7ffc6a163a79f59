"""A repository per run, on real git: made, refused, continued, replaced and removed, losing
nothing a worker left; and the linked worktrees runs had before, still released and removed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.repos.git import git
from core.repos.worktrees import (
    WorktreeRefused,
    list_worktrees,
    prepare,
    refresh,
    remove,
    repository,
)
from tests.gitrepo import commit, make_repo, run_git


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin")


@pytest.fixture
def checkouts(tmp_path: Path) -> Path:
    path = tmp_path / "ws" / "checkouts"
    path.mkdir(parents=True)
    return path


def make(origin: Path, checkouts: Path, run_id: str = "r1", **given: object):  # type: ignore[no-untyped-def]
    options: dict[str, object] = {
        "name": "acme/app",
        "run_id": run_id,
        "attempt": 1,
        "checkout": checkouts / run_id,
        "branch": f"jarvis-{run_id}",
        "base_ref": "main",
    }
    options.update(given)
    return prepare(origin, **options)  # type: ignore[arg-type]


def branch_of(path: Path) -> str:
    return run_git(path, "rev-parse", "--abbrev-ref", "HEAD")


def linked(origin: Path, checkouts: Path, run_id: str, branch: str) -> Path:
    """A linked worktree of ``origin`` at the run's checkout, as runs had before."""
    path = checkouts / run_id
    run_git(origin, "worktree", "add", "--quiet", "-b", branch, str(path), "main")
    return path


def test_a_run_gets_a_repository_of_its_own_on_its_branch_from_the_base(
    origin: Path, checkouts: Path
) -> None:
    main = run_git(origin, "rev-parse", "main")
    made = make(origin, checkouts)
    assert made.path == checkouts / "r1"
    assert (made.path / ".git").is_dir()  # its own, not a pointer into the main repository
    assert branch_of(made.path) == "jarvis-r1"
    assert made.base_commit == made.start_commit == main
    assert (made.path / "src" / "app.py").read_text() == "VALUE = 1\n"
    assert run_git(made.path, "rev-parse", "origin/main") == main
    assert made.refs_at_start == {"refs/heads/main": main}
    # The main repository is as it was: no worktree, no branch, until the host takes the work.
    assert branch_of(origin) == "main"
    assert [w.branch for w in list_worktrees(origin)] == ["main"]
    assert run_git(origin, "branch", "--list", "jarvis-r1") == ""


def test_a_commit_in_the_runs_repository_writes_nothing_of_the_main_one(
    origin: Path, checkouts: Path
) -> None:
    made = make(origin, checkouts)
    sha = commit(made.path, {"src/app.py": "VALUE = 2\n"})
    assert git(["cat-file", "-e", sha], cwd=origin, check=False).code != 0
    assert run_git(made.path, "rev-parse", "HEAD") == sha


def test_a_bare_repository_works_too(tmp_path: Path, checkouts: Path) -> None:
    bare = make_repo(tmp_path / "bare.git", bare=True)
    made = make(bare, checkouts)
    assert (made.path / "README.md").is_file()


def test_a_missing_base_is_refused_with_a_sentence(origin: Path, checkouts: Path) -> None:
    with pytest.raises(WorktreeRefused) as refused:
        make(origin, checkouts, base_ref="release")
    assert refused.value.code == "no_base"
    assert (
        str(refused.value)
        == "Repository acme/app has no 'release' to start branch 'jarvis-r1' from."
    )
    assert not (checkouts / "r1").exists()


def test_a_bad_branch_name_is_refused(origin: Path, checkouts: Path) -> None:
    with pytest.raises(WorktreeRefused) as refused:
        make(origin, checkouts, branch="two..dots")
    assert refused.value.code == "bad_branch"


def test_a_branch_a_live_run_works_on_is_refused(origin: Path, checkouts: Path) -> None:
    make(origin, checkouts, "r1", branch="shared")
    with pytest.raises(WorktreeRefused) as refused:
        make(origin, checkouts, "r2", branch="shared", held_by="r1")
    assert refused.value.code == "branch_in_use"
    assert "worked on by run r1, which is still live" in str(refused.value)
    assert branch_of(checkouts / "r1") == "shared"  # untouched
    assert not (checkouts / "r2").exists()


def test_a_branch_checked_out_in_someones_working_tree_is_not_taken(
    origin: Path, checkouts: Path
) -> None:
    with pytest.raises(WorktreeRefused) as refused:
        make(origin, checkouts, branch="main")
    assert refused.value.code == "branch_in_use"
    assert f"checked out at {origin}" in str(refused.value)


def test_a_linked_worktree_a_run_left_from_before_is_released_keeping_its_changes(
    origin: Path, checkouts: Path
) -> None:
    linked(origin, checkouts, "r1", "shared")
    (checkouts / "r1" / "draft.txt").write_text("unfinished\n")
    made = make(origin, checkouts, "r2", branch="shared")
    assert branch_of(made.path) == "shared"
    assert not (checkouts / "r1").exists()
    stashes = run_git(origin, "stash", "list")
    assert "jarvis: run r1 left this; released for r2" in stashes
    assert run_git(origin, "show", "--name-only", "--format=", "stash@{0}^3") == "draft.txt"


def test_a_retry_goes_on_in_the_checkout_as_the_last_attempt_left_it(
    origin: Path, checkouts: Path
) -> None:
    first = make(origin, checkouts)
    tip = commit(first.path, {"src/app.py": "VALUE = 2\n"})
    (first.path / "scratch.txt").write_text("left uncommitted\n")
    again = make(origin, checkouts, attempt=2)
    assert (again.start_commit, again.continued) == (tip, True)
    assert (again.path / "src" / "app.py").read_text() == "VALUE = 2\n"
    assert (again.path / "scratch.txt").read_text() == "left uncommitted\n"
    # The head it goes on from is kept in the main repository, whatever happens next.
    assert run_git(origin, "rev-parse", "refs/jarvis/r1/attempt-1") == tip


def test_a_retry_whose_checkout_is_gone_starts_from_the_head_last_kept(
    origin: Path, checkouts: Path
) -> None:
    first = make(origin, checkouts)
    tip = commit(first.path, {"src/app.py": "VALUE = 2\n"})
    make(origin, checkouts, attempt=2)  # keeps attempt 1's head
    shutil.rmtree(first.path)
    third = make(origin, checkouts, attempt=3)
    assert (third.start_commit, third.continued) == (tip, False)
    assert (third.path / "src" / "app.py").read_text() == "VALUE = 2\n"


def test_a_fresh_retry_starts_from_the_base_and_keeps_the_old_tip_and_leftovers(
    origin: Path, checkouts: Path
) -> None:
    first = make(origin, checkouts)
    tip = commit(first.path, {"src/app.py": "VALUE = 2\n"})
    (first.path / "scratch.txt").write_text("left uncommitted\n")
    again = make(origin, checkouts, attempt=2, fresh=True)
    assert again.start_commit == run_git(origin, "rev-parse", "main")
    assert not (again.path / "scratch.txt").exists()
    assert run_git(origin, "rev-parse", "refs/jarvis/r1/before-attempt-2") == tip
    left = run_git(origin, "rev-parse", "refs/jarvis/r1/uncommitted-attempt-1")
    assert run_git(origin, "show", f"{left}:scratch.txt") == "left uncommitted"
    assert "jarvis: run r1 left this before attempt 2" in run_git(origin, "log", "-1", left)


def test_a_folder_that_is_not_a_repository_is_moved_aside_not_deleted(
    origin: Path, checkouts: Path
) -> None:
    (checkouts / "r1").mkdir()
    (checkouts / "r1" / "notes.txt").write_text("the old way\n")
    made = make(origin, checkouts)
    assert (made.path / ".git").is_dir()
    (aside,) = (checkouts / ".aside").iterdir()
    assert aside.name.startswith("r1-")
    assert (aside / "notes.txt").read_text() == "the old way\n"


def test_a_half_made_repository_is_cleared_before_the_next_attempt(
    origin: Path, checkouts: Path
) -> None:
    # What a kill -9 while the host makes the checkout leaves: a repository with no branch yet,
    # and part of the files.
    made = make(origin, checkouts)
    (made.path / ".git" / "refs" / "heads" / "jarvis-r1").unlink()
    (made.path / "src" / "app.py").unlink()
    again = make(origin, checkouts, attempt=2)
    assert (again.path / "src" / "app.py").is_file()
    assert again.start_commit == run_git(origin, "rev-parse", "main")


def test_remove_keeps_a_linked_worktrees_branch_and_stashes_what_was_uncommitted(
    origin: Path, checkouts: Path
) -> None:
    path = linked(origin, checkouts, "r1", "jarvis-r1")
    tip = commit(path, {"new.py": "x = 1\n"})
    (path / "new.py").write_text("x = 2\n")
    stash = remove(origin, path, "jarvis: run r1 left this uncommitted")
    assert stash is not None
    assert not path.exists()
    assert run_git(origin, "rev-parse", "jarvis-r1") == tip
    assert [w.branch for w in list_worktrees(origin)] == ["main"]
    assert "x = 2" in run_git(origin, "show", f"{stash}:new.py")


def test_a_repository_by_url_is_cloned_once(tmp_path: Path, origin: Path) -> None:
    clone = tmp_path / "ws" / "repos" / "acme" / "app"
    url = f"file://{origin}"
    first = repository("acme/app", None, url, clone)
    assert first == clone
    assert run_git(first, "rev-parse", "--is-bare-repository") == "true"
    commit(origin, {"later.txt": "x\n"})
    marker = first / "jarvis-test-marker"
    marker.write_text("same clone\n")
    assert repository("acme/app", None, url, clone) == first and marker.exists()


def test_a_clone_that_fails_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    clone = tmp_path / "ws" / "repos" / "acme" / "app"
    with pytest.raises(WorktreeRefused) as refused:
        repository("acme/app", None, f"file://{tmp_path}/missing", clone)
    assert refused.value.code == "repo_unreachable"
    assert "cloning file://" in str(refused.value)
    assert list(clone.parent.iterdir()) == []


def test_a_path_that_is_not_a_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(WorktreeRefused, match="is not a git repository"):
        repository("acme/app", tmp_path / "plain", None, tmp_path / "clone")


def test_a_folder_inside_a_repository_is_not_that_repository(origin: Path) -> None:
    with pytest.raises(WorktreeRefused, match="is a folder inside .*, not the top of a repository"):
        repository("acme/app", origin / "src", None, origin.parent / "clone")


def test_a_clone_follows_its_origin_base_fast_forward_only(tmp_path: Path, origin: Path) -> None:
    clone = repository("acme/app", None, f"file://{origin}", tmp_path / "clone")
    later = commit(origin, {"later.txt": "x\n"})
    assert refresh(clone, "main") is None
    assert run_git(clone, "rev-parse", "main") == later
    # A base moved on here (merged, not pushed) is not thrown away by a fetch.
    scratch = tmp_path / "scratch"
    run_git(clone, "worktree", "add", "--quiet", str(scratch), "main")
    mine = commit(scratch, {"mine.txt": "x\n"})
    run_git(clone, "worktree", "remove", str(scratch))
    commit(origin, {"theirs.txt": "x\n"})
    assert refresh(clone, "main") is not None
    assert run_git(clone, "rev-parse", "main") == mine


@pytest.mark.parametrize(
    ("run_id", "part"),
    [("nc:run:a8", "nc%3Arun%3Aa8"), ("a..b", "a%2E%2Eb"), ("x.lock", "x%2Elock")],
)
def test_a_run_id_git_refuses_in_a_ref_keeps_the_old_tip_under_its_encoded_name(
    origin: Path, checkouts: Path, run_id: str, part: str
) -> None:
    # NanoClaw's run ids may hold ':' (and '..'), which git refuses in a ref name.
    first = make(origin, checkouts, run_id, branch="jarvis-nc")
    tip = commit(first.path, {"src/app.py": "VALUE = 2\n"})
    make(origin, checkouts, run_id, branch="jarvis-nc", attempt=2, fresh=True)
    assert run_git(origin, "rev-parse", f"refs/jarvis/{part}/before-attempt-2") == tip
