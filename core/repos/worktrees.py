"""A run's checkout: its own repository, made before its worker starts; repositories to start
from; and the linked worktrees runs had before, still removed as they were.

The run's checkout (``<workspace>/checkouts/RUN_ID``) holds a repository of the run's own on
the dispatch's branch (`core.repos.run_repo`), borrowing the configured repository's objects.
Nothing a worker left is ever deleted: before a checkout is replaced, its branch head and a
commit of what it left uncommitted are kept in the main repository under ``refs/jarvis/RUN/``,
a branch dropped by a ``--fresh`` retry too; a folder that is not a run's repository at all is
moved aside, not removed. A retry goes on in the checkout as the last attempt left it (its
branch, its uncommitted changes), as a NanoClaw worker's workspace persists; ``--fresh`` starts
from the base again.

Every step can be repeated: a host killed half-way through `prepare` leaves at worst a folder
half made, and the next `prepare` of that run (its retry) clears it before it starts again.
Checkouts made before runs had repositories of their own (linked worktrees) are removed as
before: what they left uncommitted stashed in the repository, the registration pruned.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.contracts.repositories import repo_url_problem
from core.repos import run_repo
from core.repos.git import JARVIS_IDENTITY, GitError, git, repository_problem, resolve_commit
from core.repos.ref_moves import branches
from core.repos.refs_read import RefsUnreadable, git_dir_of, read_refs
from core.repos.view import RunView, objects_dir, pin, view_dir

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
    """A run attempt's checkout as it was made (or found, for an attempt that goes on)."""

    path: Path
    repo_dir: Path
    branch: str
    base_ref: str
    base_commit: str
    start_commit: str
    refs_at_start: Mapping[str, str] = field(default_factory=dict)
    """The main repository's branches when the attempt started (`core.repos.ref_moves`)."""
    continued: bool = False
    """The attempt goes on in the checkout the last one left."""


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
    fresh: bool = False,
    held_by: str | None = None,
    view_path: Path | None = None,
) -> Worktree:
    """Make ``checkout`` the run's repository on ``branch`` for this attempt.

    The first attempt, and a ``fresh`` one, start the branch at ``base_ref``; a later attempt
    goes on in the checkout as the last one left it, or, when that is gone, from the branch head
    last kept of the run. A branch another live run works on (``held_by``), or checked out in
    a working tree outside Jarvis's checkouts, is refused: the host moves the main repository's
    branch when it takes the run's work.

    Raises:
        WorktreeRefused: with a sentence for the operator.
    """
    checkouts = checkout.parent
    checkouts.mkdir(parents=True, exist_ok=True)
    view = RunView(
        view_path or view_dir(checkouts.parent, run_id),
        [checkout / ".git" / "objects"],
    )
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
        if held_by is not None:
            raise WorktreeRefused(
                f"Branch {branch!r} of {name} is worked on by run {held_by}, which is still "
                "live; one branch is worked on by one run at a time.",
                "branch_in_use",
            )
        _release_linked(repo_dir, checkouts, name, run_id, branch)
        view.objects.append(objects_dir(repo_dir))
        made = Worktree(checkout, repo_dir, branch, base_ref, base_commit, base_commit)
        if attempt > 1 and not fresh and run_repo.is_own_repository(checkout):
            head = _keep_head(checkout, view, made, run_id, attempt - 1)
            if head is not None:
                return replace(made, start_commit=head, continued=True,
                               refs_at_start=branches(repo_dir))  # fmt: skip
        start = _clear(checkout, view, made, run_id, attempt, fresh)
        run_repo.make(checkout, main=repo_dir, branch=branch, start=start, base_ref=base_ref,
                      base_commit=base_commit)  # fmt: skip
        return replace(made, start_commit=start, refs_at_start=branches(repo_dir))
    except GitError as exc:
        raise WorktreeRefused(f"Making the checkout for run {run_id} failed: {exc}") from None


def _release_linked(repo_dir: Path, checkouts: Path, name: str, run_id: str, branch: str) -> None:
    """Refuse a branch checked out in someone's working tree; remove a linked worktree that a
    run left holding it (from before runs had repositories of their own)."""
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
        if owner == run_id:
            continue  # the run's own checkout: `_clear` keeps what it holds
        remove(repo_dir, listed.path, f"jarvis: run {owner} left this; released for {run_id}")


def _keep_head(
    checkout: Path, view: RunView, made: Worktree, run_id: str, attempt: int
) -> str | None:
    """The branch head the run's repository holds, kept in the main repository as the head of
    ``attempt``; None when it cannot be read or holds no such branch."""
    try:
        refs = read_refs(git_dir_of(checkout))
    except RefsUnreadable:
        return None
    head = refs.resolve(f"refs/heads/{made.branch}")
    if head is None:
        return None
    view.ensure()
    view.take(refs)
    try:
        view.bring(made.repo_dir, head, pin(run_id, f"attempt-{attempt}"))
    except GitError:
        return None  # not a commit the view can read: the attempt starts anew instead
    return head


def _clear(
    checkout: Path, view: RunView, made: Worktree, run_id: str, attempt: int, fresh: bool
) -> str:
    """Empty the checkout's place, keeping what was in it; where the attempt starts."""
    start = made.base_commit
    if attempt > 1 and not fresh:
        start = _last_kept(made.repo_dir, run_id, attempt) or start
    if not os.path.lexists(checkout):
        return start
    if run_repo.is_own_repository(checkout):
        if attempt > 1:
            note = f"jarvis: run {run_id} left this before attempt {attempt}"
            kept = run_repo.collect(checkout, view, made.repo_dir, run_id=run_id,
                                    branch=made.branch, attempt=attempt - 1, note=note,
                                    fallback=None)  # fmt: skip
            if kept.head is not None and fresh and kept.head != made.base_commit:
                # A fresh start drops the branch's commits from the run: they stay reachable.
                git(["update-ref", pin(run_id, f"before-attempt-{attempt}"), kept.head],
                    cwd=made.repo_dir)  # fmt: skip
            elif kept.head is not None and not fresh:
                start = kept.head
        run_repo.discard(checkout)
    elif run_repo.is_linked_worktree(checkout) or any(
        _same(w.path, checkout) for w in list_worktrees(made.repo_dir)
    ):
        tip = resolve_commit(made.repo_dir, f"refs/heads/{made.branch}")
        remove(made.repo_dir, checkout, f"jarvis: run {run_id} left this before attempt {attempt}")
        if tip is not None and attempt > 1 and not fresh:
            start = tip
        elif tip is not None and tip != made.base_commit:
            git(["update-ref", pin(run_id, f"before-attempt-{attempt}"), tip],
                cwd=made.repo_dir)  # fmt: skip
    else:
        move_aside(checkout)
    return start


def _last_kept(repo_dir: Path, run_id: str, attempt: int) -> str | None:
    """The branch head last kept of the run's attempts before ``attempt``, newest first."""
    for earlier in range(attempt - 1, 0, -1):
        found = resolve_commit(repo_dir, pin(run_id, f"attempt-{earlier}"))
        if found is not None:
            return found
    return None
