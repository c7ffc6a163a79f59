"""A git worktree per run: made before its worker starts, removed a while after the run ends.

The run's checkout (``<workspace>/checkouts/RUN_ID``) becomes a linked worktree of the configured
repository, on the dispatch's branch. Nothing a worker left is ever deleted: changes left
uncommitted in a worktree that is about to go are stashed in the repository (``git stash list``
names the run and attempt), a branch reset for a ``fresh`` attempt keeps its old tip under
``refs/jarvis/``, and a folder that is not a worktree at all is moved aside, not removed.

Every step can be repeated: a host killed half-way through `prepare` leaves at worst a folder
git half-filled and a registration git can prune, and the next `prepare` of that run (its retry)
clears both before it starts again.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from core.contracts.names import run_ref_part
from core.contracts.repositories import repo_url_problem
from core.repos.git import JARVIS_IDENTITY, GitError, git, repository_problem, resolve_commit

#: Where a folder found in a run's checkout that is not a worktree is moved, under checkouts/.
ASIDE = ".aside"
#: A clone of a large repository takes a while.
CLONE_TIMEOUT_S = 1800.0


class WorktreeRefused(Exception):
    """The worktree cannot be made; ``str()`` is a sentence for the operator.

    Attributes:
        code: ``branch_in_use``, ``no_base``, ``bad_branch``, ``repo_unreachable`` or ``git``.
    """

    def __init__(self, message: str, code: str = "git") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Worktree:
    """A run attempt's worktree as it was made."""

    path: Path
    repo_dir: Path
    branch: str
    base_ref: str
    base_commit: str
    start_commit: str


#: The transports a clone or fetch from a configured URL may use, whatever the host's own git
#: configuration allows: never a remote helper (``ext::``), whose "address" is a command.
TRANSPORTS = {"GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh"}


def refresh(clone: Path, base: str) -> str | None:
    """Bring a clone's ``base`` up to its origin's (fast-forward only); why not, or None.

    A clone made from a URL would otherwise start every run from the commit it was cloned at.
    A base that Jarvis merged into and did not push has moved on from the origin's: it stays.
    """
    result = git(["fetch", "--quiet", "origin", f"refs/heads/{base}:refs/heads/{base}"],
                 cwd=clone, check=False, timeout=CLONE_TIMEOUT_S, env=TRANSPORTS)  # fmt: skip
    return None if result.code == 0 else " ".join(result.err.split())[:300] or "fetch failed"


def repository(name: str, path: Path | None, url: str | None, clone_to: Path) -> Path:
    """The repository for ``name``: its configured path, or its clone at ``clone_to`` (made on
    first use).

    Raises:
        WorktreeRefused: the path is not a repository, or the clone failed.
    """
    if path is not None:
        problem = repository_problem(path)
        if problem:
            raise WorktreeRefused(f"Repository {name}: {problem}", "repo_unreachable")
        return path
    assert url is not None
    problem = repo_url_problem(url)  # jarvis.toml is checked as it loads; this is the last door
    if problem:
        raise WorktreeRefused(f"Repository {name}: {problem}", "repo_unreachable")
    target = clone_to
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Cloned beside its final name and renamed: a host killed mid-clone leaves a temporary
    # folder (removed by the next try), never a half clone under the real name.
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    for stale in target.parent.glob(f".{target.name}.partial-*"):
        shutil.rmtree(stale, ignore_errors=True)
    try:
        git(
            ["clone", "--bare", "--quiet", "--", url, str(partial)],
            cwd=target.parent,
            timeout=CLONE_TIMEOUT_S,
            env=TRANSPORTS,
        )
    except GitError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise WorktreeRefused(
            f"Repository {name}: cloning {url} failed: {exc}", "repo_unreachable"
        ) from None
    partial.rename(target)
    return target


@dataclass(frozen=True)
class ListedWorktree:
    path: Path
    branch: str | None
    """``refs/heads/…`` stripped; None for a detached or bare entry."""
    locked: bool
    prunable: bool


def list_worktrees(repo_dir: Path) -> list[ListedWorktree]:
    """``git worktree list``, read from its porcelain form."""
    out = git(["worktree", "list", "--porcelain", "-z"], cwd=repo_dir).out
    found: list[ListedWorktree] = []
    fields: dict[str, str] = {}
    for line in [*out.split("\0"), ""]:
        if line:
            key, _, value = line.partition(" ")
            fields[key] = value
            continue
        if "worktree" in fields:
            ref = fields.get("branch", "")
            found.append(
                ListedWorktree(
                    Path(fields["worktree"]),
                    ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None,
                    "locked" in fields,
                    "prunable" in fields,
                )
            )
        fields = {}
    return found


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def save_uncommitted(worktree: Path, note: str) -> str | None:
    """Stash what is uncommitted in ``worktree`` (untracked files too); the stash's sha or None.

    The stash lives in the repository, shared by all its worktrees: ``git stash list`` shows it
    with ``note`` after the worktree is gone.
    """
    status = git(
        ["status", "--porcelain", "-z", "--untracked-files=all"], cwd=worktree, check=False
    )
    if status.code != 0 or not status.out:
        return None
    git(
        ["stash", "push", "--include-untracked", "--quiet", "-m", note],
        cwd=worktree,
        env=JARVIS_IDENTITY,
    )
    stashed = git(["rev-parse", "--verify", "--quiet", "refs/stash"], cwd=worktree, check=False)
    return stashed.out.strip() or None


def remove(repo_dir: Path, path: Path, note: str) -> str | None:
    """Remove the worktree at ``path`` (its branch stays); returns the stash of what it left.

    A folder git half-made (killed during ``worktree add``) is removed with its registration.
    """
    stash = None
    if (path / ".git").exists():
        try:
            stash = save_uncommitted(path, note)
        except GitError:
            stash = None  # a worktree too broken to stash is moved aside below instead
    listed = any(_same(w.path, path) for w in list_worktrees(repo_dir))
    if listed:
        # Twice forced: a worktree locked by a `worktree add` that was killed is removed too.
        result = git(
            ["worktree", "remove", "--force", "--force", "--", str(path)], cwd=repo_dir, check=False
        )
        if result.code != 0 and path.exists():
            move_aside(path)
    elif path.exists():
        move_aside(path)
    git(["worktree", "prune"], cwd=repo_dir, check=False)
    return stash


def move_aside(path: Path) -> Path:
    """Move ``path`` into ``checkouts/.aside/`` under a unique name, keeping what it holds."""
    aside = path.parent / ASIDE
    aside.mkdir(exist_ok=True)
    target = aside / f"{path.name}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    n = 0
    while target.exists():
        n += 1
        target = target.with_name(f"{target.name}-{n}")
    path.rename(target)
    return target


def _checkouts_run(path: Path, checkouts: Path) -> str | None:
    """The run id whose checkout ``path`` is, or None when it is not one of ours."""
    try:
        rel = path.resolve().relative_to(checkouts.resolve())
    except (ValueError, OSError):
        return None
    return rel.parts[0] if len(rel.parts) == 1 else None


def prepare(
    repo_dir: Path,
    *,
    name: str,
    run_id: str,
    attempt: int,
    checkout: Path,
    branch: str,
    base_ref: str,
    intent: str,
    live_runs: Collection[str],
) -> Worktree:
    """Make ``checkout`` a worktree of ``repo_dir`` on ``branch`` for this attempt.

    The branch starts at ``base_ref`` unless it exists and this is a ``continue`` attempt, when
    it starts where it is. A branch checked out in another live run's worktree, or anywhere
    outside Jarvis's checkouts, is refused; one left checked out by a run that is over is
    released (its uncommitted changes stashed).

    Raises:
        WorktreeRefused: with a sentence for the operator.
    """
    checkouts = checkout.parent
    checkouts.mkdir(parents=True, exist_ok=True)
    try:
        git(["worktree", "prune"], cwd=repo_dir)
        if git(["check-ref-format", "--branch", branch], cwd=repo_dir, check=False).code != 0:
            raise WorktreeRefused(f"{branch!r} is not a valid branch name.", "bad_branch")
        base_commit = resolve_commit(repo_dir, f"refs/heads/{base_ref}") or resolve_commit(
            repo_dir, base_ref
        )
        if base_commit is None:
            raise WorktreeRefused(
                f"Repository {name} has no {base_ref!r} to start branch {branch!r} from.",
                "no_base",
            )
        # This run's own leftover (an earlier attempt's worktree, or a half-made one) goes first.
        if checkout.exists() or any(_same(w.path, checkout) for w in list_worktrees(repo_dir)):
            remove(repo_dir, checkout, f"jarvis: run {run_id} left this before attempt {attempt}")
        for listed in list_worktrees(repo_dir):
            if listed.branch != branch:
                continue
            owner = _checkouts_run(listed.path, checkouts)
            if owner is None:
                raise WorktreeRefused(
                    f"Branch {branch!r} of {name} is checked out at {listed.path}, outside "
                    "Jarvis's checkouts; it is not moved under its owner.",
                    "branch_in_use",
                )
            if owner in live_runs:
                raise WorktreeRefused(
                    f"Branch {branch!r} of {name} is checked out by run {owner}, which is "
                    "still live; one branch is worked on by one run at a time.",
                    "branch_in_use",
                )
            remove(repo_dir, listed.path, f"jarvis: run {owner} left this; released for {run_id}")
        tip = resolve_commit(repo_dir, f"refs/heads/{branch}")
        if tip is not None and intent == "continue" and attempt > 1:
            git(["worktree", "add", "--quiet", "--", str(checkout), branch], cwd=repo_dir)
        else:
            if tip is not None and tip != base_commit:
                # A fresh start resets the branch; its old tip stays reachable.
                keep = f"refs/jarvis/{run_ref_part(run_id)}/before-attempt-{attempt}"
                git(["update-ref", keep, tip], cwd=repo_dir)
            git(
                ["worktree", "add", "--quiet", "-B", branch, "--", str(checkout), base_commit],
                cwd=repo_dir,
            )
        start = resolve_commit(checkout, "HEAD")
        if start is None:  # pragma: no cover - git just made it
            raise WorktreeRefused(f"The worktree for run {run_id} has no HEAD.")
    except GitError as exc:
        raise WorktreeRefused(f"Making the worktree for run {run_id} failed: {exc}") from None
    return Worktree(checkout, repo_dir, branch, base_ref, base_commit, start)
