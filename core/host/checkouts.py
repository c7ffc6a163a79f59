"""The host's side of real repositories: a checkout before a worker starts, the claims of its
completion checked against git after it ends, and checkouts tidied once their runs are over.

A run whose repository is configured (``[repos."owner/name"]`` in jarvis.toml) gets a
repository of its own at its checkout, borrowing the configured one's objects
(`core.repos.worktrees`), and its work reaches the configured repository only through the host,
after the gates (`core.repos.run_check`); any other run gets an empty folder, as before, where
its worker fetches the code itself, and its claims are checked against whatever repository it
left there. Either way the host reads the run's repository through a view of its own
(`core.repos.view`), never by running git in it.
"""

from __future__ import annotations

import logging
import queue
import shutil
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.contracts.risk_tables import PATCH_CAP
from core.criteria.run_criteria import checkout_dir
from core.host.config import HostConfig, RepoConfig
from core.host.sandbox import remove_run_dirs
from core.lifecycle import RunState
from core.repos import records, run_repo
from core.repos.completion_check import base_branch_of
from core.repos.git import GitError, git, resolve_commit
from core.repos.patches import read_patch
from core.repos.view import RunView, objects_dir, view_dir
from core.repos.worktrees import Worktree, move_aside, prepare, refresh, remove, repository
from core.store.api import Row, RunStore

log = logging.getLogger("jarvis.host")

#: Runs whose worktree is in use: a branch checked out for one of them is not taken away.
LIVE = (RunState.QUEUED.value, RunState.RUNNING.value, RunState.REVIEW_REQUESTED.value)


@dataclass(frozen=True)
class CheckoutJob:
    """A worktree to make for a run's attempt: everything the git work needs, read beforehand,
    so it can run on a thread of its own (a worktree of a large repository takes seconds)."""

    run_id: str
    attempt: int
    name: str
    repo: RepoConfig
    branch: str
    base_ref: str
    fresh: bool
    """A retry asked to start from the base again (``jarvis retry --fresh``)."""
    held_by: str | None
    """Another live run working on the same branch of the same repository, if any."""


def branch_of(run: Row) -> str:
    return str(run.get("dispatch_branch") or f"jarvis-{run['run_id']}")


def checkout_job(store: RunStore, config: HostConfig, run: Row) -> CheckoutJob | None:
    """The checkout the run's attempt needs; None when its repository is not configured."""
    name = str(run.get("dispatch_repo") or "")
    repo = config.repos.get(name)
    if repo is None:
        return None
    run_id = str(run["run_id"])
    branch = branch_of(run)
    held_by = next(
        (
            str(other["run_id"])
            for other in store.list_runs(states=tuple(LIVE))
            if other["run_id"] != run_id
            and other.get("dispatch_repo") == name
            and branch_of(other) == branch
        ),
        None,
    )
    return CheckoutJob(
        run_id=run_id,
        attempt=int(run["retry_count"]) + 1,
        name=name,
        repo=repo,
        branch=branch,
        base_ref=base_branch_of(run) or repo.base_ref,
        fresh=bool(run.get("retry_fresh")),
        held_by=held_by,
    )


def make_worktree(workspace_root: Path, job: CheckoutJob) -> Worktree:
    """Make the job's worktree (git only: no store, safe on any thread).

    Raises:
        WorktreeRefused: the worktree cannot be made (the sentence says why).
    """
    repo = job.repo
    repo_dir = repository(
        job.name,
        repo.resolved_path(workspace_root),
        repo.url,
        repo.source_dir(workspace_root, job.name),
    )
    if repo.url is not None:
        # A clone follows its origin: the run starts from the base as it is there now.
        why = refresh(repo_dir, job.base_ref)
        if why:
            log.warning("repository %s: %s stays where it was: %s", job.name, job.base_ref, why)
    return prepare(
        repo_dir,
        name=job.name,
        run_id=job.run_id,
        attempt=job.attempt,
        checkout=checkout_dir(workspace_root, job.run_id),
        branch=job.branch,
        base_ref=job.base_ref,
        fresh=job.fresh,
        held_by=job.held_by,
        view_path=view_dir(workspace_root, job.run_id),
    )


def record_made(store: RunStore, job: CheckoutJob, worktree: Worktree) -> None:
    records.record_worktree(store, job.run_id, job.attempt, job.name, worktree,
                            merge_mode=job.repo.merge, push_remote=job.repo.remote)  # fmt: skip


class Preparer:
    """Makes worktrees one at a time on a thread of its own, so the host's loop keeps ingesting
    and supervising meanwhile. One at a time: git serialises work on one repository anyway,
    and runs start in the order they were scheduled."""

    def __init__(self, workspace_root: Path) -> None:
        self.workspace_root = workspace_root
        self._jobs: queue.SimpleQueue[CheckoutJob] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[tuple[CheckoutJob, Worktree | Exception]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    def submit(self, job: CheckoutJob) -> None:
        if self._thread is None:
            # A daemon: a host stopping does not wait for a checkout of a large repository;
            # whatever git leaves half made, the run's next attempt clears.
            self._thread = threading.Thread(target=self._work, name="worktrees", daemon=True)
            self._thread.start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                result: Worktree | Exception = make_worktree(self.workspace_root, job)
            except Exception as exc:  # reported to the loop, which fails the run with it
                result = exc
            self._done.put((job, result))

    def finished(self) -> list[tuple[CheckoutJob, Worktree | Exception]]:
        out = []
        while True:
            try:
                out.append(self._done.get_nowait())
            except queue.Empty:
                return out


def tidy(
    store: RunStore, config: HostConfig, workspace_root: Path, host: str | None = None
) -> None:
    """Remove the checkouts of runs over for longer than the grace (their work kept in the
    repository); of the runs ``host`` holds, when given (another host's are on its machine)."""
    for gone in records.removable(store, config.git.worktree_grace_s, host):
        checkout = Path(gone.checkout)
        if checkout != checkout_dir(workspace_root, gone.run_id):
            continue  # not where this workspace puts checkouts: never remove what is not ours
        try:
            stash = _remove_checkout(workspace_root, gone)
        except GitError as exc:
            log.warning("run %s: its checkout stays: %s", gone.run_id, exc)
            stash = None
        records.mark_removed(store, gone.run_id, gone.attempt, stash)
        log.info("run %s: checkout removed (its work stays in the repository)", gone.run_id)


def _remove_checkout(workspace_root: Path, gone: records.Removable) -> str | None:
    """Keep what the run's checkout holds in the repository, then remove the checkout, its
    view and its private home; a commit of what it left uncommitted, or None."""
    checkout, main = Path(gone.checkout), Path(gone.repo_dir)
    note = f"jarvis: run {gone.run_id} left this uncommitted"
    if not run_repo.is_own_repository(checkout):
        return remove(main, checkout, note)  # a linked worktree, from before
    view = RunView(view_dir(workspace_root, gone.run_id),
                   [checkout / ".git" / "objects", objects_dir(main)])  # fmt: skip
    kept = run_repo.collect(checkout, view, main, run_id=gone.run_id, branch=gone.branch,
                            attempt=gone.attempt, note=note)  # fmt: skip
    if kept.problem:
        log.warning("run %s: its repository could not be read (%s); it is moved aside",
                    gone.run_id, kept.problem)  # fmt: skip
        move_aside(checkout)
    else:
        run_repo.discard(checkout)
    shutil.rmtree(view.path, ignore_errors=True)
    remove_run_dirs(workspace_root, gone.run_id)  # its private home and temporary folder
    return kept.uncommitted


def prune(config: HostConfig, workspace_root: Path) -> None:
    """Forget worktrees whose folders are gone, in every configured repository that exists.

    At start: a host killed while making or removing a worktree may have left a registration.
    """
    for name, repo in config.repos.items():
        folder = repo.source_dir(workspace_root, name)
        if folder.is_dir():
            try:
                git(["worktree", "prune"], cwd=folder)
            except GitError as exc:
                log.warning("repository %s: %s", name, exc)


@dataclass(frozen=True)
class OpenClawChange:
    """What git shows of an OpenClaw run's branch, for the scope and risk gate."""

    repo_dir: Path | None
    """The configured repository the request's ``repo.path`` names; None when none does."""
    patch: str | None = None
    too_large: bool = False
    merge_base: str | None = None
    head: str | None = None
    problem: str = ""
    """Why git's diff could not be read (no such branch, no base), for the gate's detail."""
    branch: str = ""
    base_ref: str = ""
    merge: str = "auto-merge"
    """The repository's configured merge mode (the risk level may lower it)."""
    remote: str | None = None


def openclaw_change(config: HostConfig, workspace_root: Path, request: Any) -> OpenClawChange:
    """The diff git shows for an OpenClaw request whose ``repo.path`` is a configured repository.

    The path comes from the request, so it is only ever compared with the repositories the
    operator configured, never opened on its own.
    """
    spec = request.get("repo") if isinstance(request, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("path"), str):
        return OpenClawChange(None)
    named = Path(spec["path"])
    if not named.is_absolute():
        return OpenClawChange(None)
    found = next(
        (
            (folder, repo)
            for name, repo in config.repos.items()
            if (folder := repo.source_dir(workspace_root, name)).resolve() == named.resolve()
        ),
        None,
    )
    if found is None or not found[0].is_dir():
        return OpenClawChange(None)
    repo_dir, repo = found
    base_ref, branch = str(spec.get("base_ref") or ""), str(spec.get("target_branch") or "")
    head = resolve_commit(repo_dir, f"refs/heads/{branch}")
    base = resolve_commit(repo_dir, f"refs/heads/{base_ref}") or resolve_commit(repo_dir, base_ref)
    if head is None or base is None:
        missing = f"branch {branch!r}" if head is None else f"base {base_ref!r}"
        return OpenClawChange(repo_dir, problem=f"the repository has no {missing}")
    where = OpenClawChange(repo_dir, branch=branch, base_ref=base_ref, merge=repo.merge,
                           remote=repo.remote)  # fmt: skip
    try:
        merge_base = git(["merge-base", base, head], cwd=repo_dir).out.strip()
        patch, too_large = read_patch(repo_dir, merge_base, head, PATCH_CAP)
    except GitError as exc:
        return replace(where, problem=str(exc))
    return replace(where, patch=patch, too_large=too_large, merge_base=merge_base, head=head)
