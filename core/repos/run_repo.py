"""A run's own repository: made by the host in the run's checkout before its worker starts, its
work brought into the main repository only by the host, and taken away once the run is over.

The checkout holds a repository of its own (``<checkout>/.git``), not a linked worktree of the
main repository: a linked worktree's git directory lives inside the main repository
(``.git/worktrees/RUN``), beside the hooks, configuration and refs a worker must not write, so
a worker in one could not be confined to its checkout. The run's repository borrows the main
repository's objects (``objects/info/alternates``: read, never written, by the run), starts the
run's branch where the run starts, knows the main repository as ``origin`` (a worker may fetch
from it; the sandbox refuses a push), and commits as the main repository's configured user.

Once the worker has started, the host runs no git in the run's repository: its refs are read
as files (`core.repos.refs_read`) and its commits through the run's view (`core.repos.view`).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.repos.git import git, resolve_commit
from core.repos.refs_read import RefsUnreadable, git_dir_of, read_refs
from core.repos.view import RunView, objects_dir, pin

#: Who a run's commits are by when the main repository's configuration names nobody.
WORKER_IDENTITY = ("Jarvis worker", "jarvis-worker@localhost")


def is_own_repository(checkout: Path) -> bool:
    """Whether ``checkout`` holds a repository of its own (``.git`` a real folder)."""
    try:
        return stat.S_ISDIR(os.lstat(checkout / ".git").st_mode)
    except OSError:
        return False


def is_linked_worktree(checkout: Path) -> bool:
    """Whether ``checkout`` is a linked worktree, as runs' checkouts were before they had
    repositories of their own (``.git`` a file pointing into the main repository)."""
    try:
        return stat.S_ISREG(os.lstat(checkout / ".git").st_mode)
    except OSError:
        return False


def identity_of(main: Path) -> tuple[str, str]:
    """The user the main repository's configuration names (its own, the user's or the
    system's), else `WORKER_IDENTITY`: who the run's commits are by."""
    name = git(["config", "--get", "user.name"], cwd=main, check=False).out.strip()
    email = git(["config", "--get", "user.email"], cwd=main, check=False).out.strip()
    return (name or WORKER_IDENTITY[0], email or WORKER_IDENTITY[1])


def make(
    checkout: Path,
    *,
    main: Path,
    branch: str,
    start: str,
    base_ref: str,
    base_commit: str,
) -> None:
    """Make ``checkout`` (which must not exist) a repository on ``branch`` at ``start``.

    Raises:
        GitError: git failed (the checkout may be left half made: the next attempt clears it).
    """
    identity = identity_of(main)
    checkout.mkdir(parents=True)
    # No template: no sample hooks, nothing but what git needs. Isolated: the host's user
    # configuration (a template folder, a default branch) has no say in the run's repository.
    git(["init", "--quiet", "--template=", "--", str(checkout)], cwd=checkout.parent,
        isolated=True)  # fmt: skip
    info = checkout / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{objects_dir(main).resolve()}\n", "utf-8")

    def run(*args: str) -> None:
        git(list(args), cwd=checkout, isolated=True)

    run("config", "user.name", identity[0])
    run("config", "user.email", identity[1])
    run("config", "remote.origin.url", str(main))
    run("config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    if resolve_commit(main, f"refs/heads/{base_ref}") == base_commit:
        run("update-ref", f"refs/remotes/origin/{base_ref}", base_commit)
    run("checkout", "--quiet", "-B", branch, start)


@dataclass(frozen=True)
class Collected:
    """What the host kept of a run's repository in the main repository."""

    head: str | None
    """The run's branch head, kept as ``refs/jarvis/RUN/attempt-N`` (None: no such branch)."""
    uncommitted: str | None = None
    """A commit of what was left uncommitted, ``refs/jarvis/RUN/uncommitted-attempt-N``."""
    problem: str | None = None
    """Why nothing could be read (the repository's refs unreadable), or None."""


def collect(
    checkout: Path,
    view: RunView,
    main: Path,
    *,
    run_id: str,
    branch: str,
    attempt: int,
    note: str,
    fallback: str | None = None,
) -> Collected:
    """Keep in the main repository what the run's repository holds: its branch head and what
    it left uncommitted (on top of the head, else of ``fallback``), so that removing the
    checkout loses nothing a worker did.

    Raises:
        GitError: git failed reading or fetching.
    """
    try:
        refs = read_refs(git_dir_of(checkout))
    except RefsUnreadable as exc:
        return Collected(None, problem=str(exc))
    view.ensure()
    view.take(refs)
    head = refs.resolve(f"refs/heads/{branch}")
    if head is not None and _commit_in(view, head):
        view.bring(main, head, pin(run_id, f"attempt-{attempt}"))
    else:
        head = None
    base = head or fallback
    left = None
    if base is not None and _commit_in(view, base):
        left = view.snapshot(checkout, base, note)
        if left is not None:
            view.bring(main, left, pin(run_id, f"uncommitted-attempt-{attempt}"))
    return Collected(head, left)


def _commit_in(view: RunView, sha: str) -> bool:
    found = view.git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{sha}^{{commit}}"],
                     check=False)  # fmt: skip
    return found.code == 0


def discard(checkout: Path) -> None:
    """Remove ``checkout`` and all it holds, links never followed, read-only folders made
    writable first (a worker may leave any)."""

    def again(func: Callable[..., Any], path: str, _: Any) -> None:
        try:
            os.chmod(os.path.dirname(path), 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, 0o700)
            func(path)
        except OSError:
            pass

    if checkout.is_symlink():
        checkout.unlink()
    elif checkout.exists():
        shutil.rmtree(checkout, onerror=again)
