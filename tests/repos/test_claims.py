"""The git gates, on real repositories: each lie a worker can tell is caught with its evidence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.repos.claims import GIT_GATES, ClaimCheck, find_repository
from core.repos.claims import check_claims as check_through_view
from core.repos.view import RunView
from tests.gitrepo import commit, make_repo, run_git


def check_claims(checkout: Path, completion: object, **given: object) -> ClaimCheck:
    """The claims checked as the host checks them: through a view of its own beside the
    checkout."""
    return check_through_view(checkout, completion, view_path=checkout.parent / "view.git",
                              **given)  # type: ignore[arg-type]  # fmt: skip


def uncommitted(repo: Path) -> list[str]:
    return RunView(repo.parent / "view.git", [repo / ".git" / "objects"]).uncommitted(
        repo, head(repo)
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout on branch ``work``, one commit ahead of ``main``."""
    path = make_repo(tmp_path / "checkout")
    run_git(path, "switch", "--quiet", "-c", "work")
    commit(path, {"src/app.py": "VALUE = 2\n", "tests/test_app.py": "def test(): pass\n"})
    return path


def head(repo: Path) -> str:
    return run_git(repo, "rev-parse", "HEAD")


def gates(check) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    return {g.name: (g.status, g.detail) for g in check.gates}


def claims(repo: Path, **changes: object) -> dict[str, object]:
    return {
        "commit_sha": head(repo),
        "files_changed": ["src/app.py", "tests/test_app.py"],
        **changes,
    }


def test_an_honest_completion_passes_every_git_gate(repo: Path) -> None:
    check = check_claims(repo, claims(repo), branch="work", bases=["main"])
    assert [g.name for g in check.gates] == list(GIT_GATES)
    assert all(g.status == "passed" for g in check.gates), gates(check)
    assert check.head == head(repo)
    assert check.merge_base == run_git(repo, "rev-parse", "main")
    assert check.stat() == {"files": 2, "additions": 2, "deletions": 1}
    assert {f.path: f.status for f in check.files} == {"src/app.py": "M", "tests/test_app.py": "A"}


def test_an_abbreviated_sha_is_resolved(repo: Path) -> None:
    check = check_claims(repo, claims(repo, commit_sha=head(repo)[:8]), branch="work",
                         bases=["main"])  # fmt: skip
    assert check.gates[0].passed and check.head == head(repo)


def test_a_commit_that_does_not_exist_fails_and_stops_the_rest(repo: Path) -> None:
    check = check_claims(repo, claims(repo, commit_sha="0123456789abcdef" * 2 + "01234567"),
                         branch="work", bases=["main"])  # fmt: skip
    found = gates(check)
    assert found["commit_exists"] == (
        "failed",
        "'0123456789abcdef0123456789abcdef01234567' names no commit in the repository",
    )
    assert found["commit_on_branch"][0] == "failed"
    assert "not evaluated" in found["files_match_diff"][1]


def test_a_commit_that_is_not_the_head_of_the_branch(repo: Path) -> None:
    first = head(repo)
    second = commit(repo, {"later.txt": "x\n"})
    check = check_claims(repo, claims(repo, commit_sha=first), branch="work", bases=["main"])
    status, detail = gates(check)["commit_on_branch"]
    assert status == "failed"
    assert detail == f"the head of work is {second[:12]}, not {first[:12]}"


def test_uncommitted_changes_are_listed(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("VALUE = 3\n")
    (repo / "notes.txt").write_text("draft\n")
    check = check_claims(repo, claims(repo), branch="work", bases=["main"])
    status, detail = gates(check)["commit_on_branch"]
    assert status == "failed"
    assert "2 path(s) are uncommitted: notes.txt, src/app.py" in detail
    assert sorted(uncommitted(repo)) == ["notes.txt", "src/app.py"]


def test_files_claimed_but_unchanged_and_changed_but_unclaimed(repo: Path) -> None:
    check = check_claims(repo, claims(repo, files_changed=["src/app.py", "docs/ghost.md"]),
                         branch="work", bases=["main"])  # fmt: skip
    status, detail = gates(check)["files_match_diff"]
    assert status == "failed"
    assert (
        detail == "claimed but unchanged: docs/ghost.md; changed but unclaimed: tests/test_app.py"
    )
    # The other gates still pass: each gate says one thing.
    assert gates(check)["commit_exists"][0] == gates(check)["commit_on_branch"][0] == "passed"


def test_a_rename_must_claim_both_paths(repo: Path) -> None:
    run_git(repo, "mv", "README.md", "READ_ME.md")
    sha = commit(repo, {})
    files = ["src/app.py", "tests/test_app.py", "READ_ME.md"]
    check = check_claims(repo, claims(repo, commit_sha=sha, files_changed=files), branch="work",
                         bases=["main"])  # fmt: skip
    assert gates(check)["files_match_diff"] == ("failed", "changed but unclaimed: README.md")
    check = check_claims(repo, claims(repo, commit_sha=sha, files_changed=[*files, "README.md"]),
                         branch="work", bases=["main"])  # fmt: skip
    assert gates(check)["files_match_diff"][0] == "passed"


def test_the_recorded_base_commit_wins_over_branch_names(repo: Path) -> None:
    base = run_git(repo, "rev-parse", "main")
    commit(repo, {"more.txt": "x\n"})  # the branch moves on; the claim covers all of it
    files = ["src/app.py", "tests/test_app.py", "more.txt"]
    check = check_claims(repo, claims(repo, files_changed=files), branch="work", base_commit=base)
    assert all(g.passed for g in check.gates), gates(check)


def test_no_base_to_compare_with_is_not_checked(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "checkout", branch="trunk")
    check = check_claims(path, {"commit_sha": head(path), "files_changed": []}, branch="trunk")
    assert gates(check)["files_match_diff"] == (
        "not_checked",
        "not checked: no base branch to compare with",
    )


def test_no_repository_is_not_checked_never_passed(tmp_path: Path) -> None:
    (tmp_path / "checkout").mkdir()
    check = check_claims(tmp_path / "checkout", {"commit_sha": "abc1234"}, branch="x")
    assert [g.status for g in check.gates] == ["not_checked"] * len(GIT_GATES)
    assert not any(g.passed for g in check.gates)
    assert check.unchecked
    assert check.gates[0].detail == "not checked: no repository in the run's checkout"


def test_a_repository_around_the_checkout_is_not_the_runs(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "project")
    checkout = outer / ".jarvis" / "checkouts" / "r1"
    checkout.mkdir(parents=True)
    assert find_repository(checkout) is None


def test_the_one_repository_a_worker_cloned_inside_its_checkout_is_found(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    inner = make_repo(checkout / "app")
    assert find_repository(checkout) == inner
    make_repo(checkout / "second")
    assert find_repository(checkout) is None  # two: which one the claims are about is unknown


def test_no_parseable_completion_is_not_evaluated(repo: Path) -> None:
    check = check_claims(repo, None, branch="work")
    assert [g.status for g in check.gates] == ["failed"] * len(GIT_GATES)
    assert all("not evaluated" in g.detail for g in check.gates)


def test_an_option_looking_sha_is_not_read_as_an_option(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "written"
    check = check_claims(repo, claims(repo, commit_sha=f"--output={target}"), branch="work")
    assert gates(check)["commit_exists"][0] == "failed"
    assert not target.exists()


@pytest.mark.parametrize("name", ["HEAD", "main", "work", "HEAD~1", "work^{commit}"])
def test_a_name_that_resolves_is_still_no_commit_sha(repo: Path, name: str) -> None:
    check = check_claims(repo, claims(repo, commit_sha=name), branch="work", bases=["main"])
    assert gates(check)["commit_exists"] == ("failed", f"{name!r} is not a commit sha")


def test_a_secret_the_change_adds_fails_and_is_never_quoted(repo: Path) -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    sha = commit(repo, {"config/settings.py": f'AWS_ACCESS_KEY_ID = "{key}"\n'})
    files = ["src/app.py", "tests/test_app.py", "config/settings.py"]
    check = check_claims(repo, claims(repo, commit_sha=sha, files_changed=files), branch="work",
                         bases=["main"])  # fmt: skip
    status, detail = gates(check)["secrets_in_diff"]
    assert status == "failed"
    assert detail.startswith("AWS access key id in config/settings.py line 1")
    assert key not in detail
    assert gates(check)["files_match_diff"][0] == "passed"


def test_a_secret_the_change_removes_is_not_a_finding(repo: Path) -> None:
    run_git(repo, "switch", "--quiet", "main")
    commit(repo, {"old.py": 'KEY = "AKIAIOSFODNN7EXAMPLE"\n'})
    run_git(repo, "switch", "--quiet", "work")
    run_git(repo, "merge", "--quiet", "--no-edit", "main")
    sha = commit(repo, {"old.py": None})
    files = ["src/app.py", "tests/test_app.py"]
    check = check_claims(repo, claims(repo, commit_sha=sha, files_changed=files), branch="work",
                         bases=["main"])  # fmt: skip
    assert gates(check)["secrets_in_diff"][0] == "passed"


def test_programs_the_workers_repository_names_never_run_while_it_is_checked(
    repo: Path, tmp_path: Path
) -> None:
    # The worker writes its own repository's configuration: an fsmonitor, a clean filter its
    # attributes select, hooks, and an include of a file it also wrote.
    (repo / ".gitattributes").write_text("* filter=x diff=x\n")
    sha = commit(repo, {"src/app.py": "VALUE = 3\n"})
    markers = tmp_path / "markers"
    markers.mkdir()
    for name in ("fsmonitor", "clean", "smudge", "textconv", "post-checkout"):
        script = tmp_path / name
        script.write_text(f'#!/bin/sh\ntouch "{markers}/{name}"\ncat\n')
        script.chmod(0o755)
    (repo / ".git" / "included").write_text(f'[diff "x"]\n\ttextconv = {tmp_path / "textconv"}\n')
    with (repo / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {tmp_path / 'fsmonitor'}\n"
            f'[filter "x"]\n\tclean = {tmp_path / "clean"}\n\tsmudge = {tmp_path / "smudge"}\n'
            f"[include]\n\tpath = included\n"
        )
    (repo / ".git" / "hooks").mkdir(exist_ok=True)
    (repo / ".git" / "hooks" / "post-checkout").symlink_to(tmp_path / "post-checkout")
    (repo / "src" / "app.py").write_text("VALUE = 4\n")  # uncommitted: the check looks at it
    files = ["src/app.py", "tests/test_app.py", ".gitattributes"]
    check = check_claims(repo, claims(repo, commit_sha=sha, files_changed=files), branch="work",
                         bases=["main"])  # fmt: skip
    assert gates(check)["commit_on_branch"][0] == "failed"  # it was asked, and answered
    assert sorted(p.name for p in markers.iterdir()) == []


def test_what_the_runs_own_exclude_file_keeps_out_is_not_uncommitted(repo: Path) -> None:
    (repo / ".aider.chat.history.md").write_text("the agent's own notes\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text(".aider*\n")
    check = check_claims(repo, claims(repo), branch="work", bases=["main"])
    assert gates(check)["commit_on_branch"][0] == "passed", gates(check)


def test_a_git_folder_that_is_a_link_is_not_followed(repo: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "elsewhere"
    checkout.mkdir()
    (checkout / ".git").symlink_to(repo / ".git")
    assert find_repository(checkout) is None


def test_a_ref_file_that_is_a_fifo_is_not_waited_on(repo: Path) -> None:
    completion = claims(repo)
    os.mkfifo(repo / ".git" / "refs" / "heads" / "stuck")  # git itself would wait on it
    check = check_claims(repo, completion, branch="work", bases=["main"])
    assert gates(check)["commit_on_branch"][0] == "passed", gates(check)
