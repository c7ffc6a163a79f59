"""The store's record of each attempt's worktree and of what git showed (table ``run_git``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.lifecycle import RunState
from core.repos.claims import ClaimCheck
from core.repos.worktrees import Worktree
from core.store.api import RunStore, RunTransaction, iso


def record_worktree(
    store: RunStore,
    run_id: str,
    attempt: int,
    repo: str,
    worktree: Worktree,
    *,
    merge_mode: str = "auto-merge",
    push_remote: str | None = None,
) -> None:
    """Note the attempt's worktree as made (or made again, after a host restart), with what
    approving it will do (its repository's merge mode and remote)."""
    with store.transaction() as tx:
        tx.put_worktree(
            run_id,
            attempt,
            {
                "repo": repo,
                "repo_dir": str(worktree.repo_dir),
                "checkout": str(worktree.path),
                "branch": worktree.branch,
                "base_ref": worktree.base_ref,
                "base_commit": worktree.base_commit,
                "start_commit": worktree.start_commit,
                "merge_mode": merge_mode,
                "push_remote": push_remote,
                "refs_at_start": json.dumps(dict(worktree.refs_at_start), sort_keys=True),
            },
        )
        tx.touch_run(
            run_id,
            changes={},
            kind="worktree",
            payload={
                "attempt": attempt,
                "branch": worktree.branch,
                "base": worktree.base_ref,
                "start_commit": worktree.start_commit,
                "continued": worktree.continued,
            },
            actor="host",
        )


def attempt_git(store: RunStore | RunTransaction, run_id: str, attempt: int) -> dict[str, Any]:
    """The attempt's ``run_git`` row, or an empty dict."""
    return store.attempt_git(run_id, attempt)


def latest_git(store: RunStore | RunTransaction, run_id: str) -> dict[str, Any]:
    """The ``run_git`` row of the run's latest attempt that has one, or an empty dict."""
    return store.latest_git(run_id)


def latest_checked(store: RunStore | RunTransaction, run_id: str) -> dict[str, Any]:
    """The ``run_git`` row of the run's latest attempt whose completion was checked against a
    commit and a merge base (the attempt with a diff to show), or an empty dict."""
    return store.latest_checked(run_id)


def record_check(
    tx: RunTransaction, run_id: str, attempt: int, checkout: str, check: ClaimCheck
) -> None:
    """Keep what git showed of the attempt's completion with its worktree record."""
    stat = check.stat() if check.merge_base else {}
    tx.put_git_check(
        run_id,
        attempt,
        {
            "checkout": checkout,
            "head_commit": check.head,
            "merge_base": check.merge_base,
            "diff_files": stat.get("files"),
            "diff_additions": stat.get("additions"),
            "diff_deletions": stat.get("deletions"),
        },
    )


def refs_at_start(row: dict[str, Any]) -> dict[str, str] | None:
    """The main repository's branches when the attempt of ``row`` started; None when they were
    not recorded (an attempt from before, or no repository)."""
    try:
        value = json.loads(row.get("refs_at_start") or "null")
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items()}


@dataclass(frozen=True)
class Removable:
    run_id: str
    attempt: int
    repo_dir: str
    checkout: str
    branch: str = ""


def removable(store: RunStore, grace_s: float, host: str | None = None) -> list[Removable]:
    """Worktrees still on disk whose run is over (done, or cancelled) for longer than the grace
    (of the runs ``host`` holds, when given: their worktrees are on its machine).

    A run that failed otherwise keeps its worktree: it may be retried, and an operator may want
    to look inside. Its next attempt replaces the worktree anyway.
    """
    cutoff = iso(datetime.fromisoformat(store.now()) - timedelta(seconds=grace_s))
    # The run's last audit row is the operator's last word on it: an approval (done) or a
    # cancel (failed), and when it was said.
    rows = store.worktrees_to_remove(
        cutoff, done=RunState.DONE.value, failed=RunState.FAILED.value, host=host
    )
    return [Removable(r["run_id"], r["attempt"], r["repo_dir"], r["checkout"], r["branch"] or "")
            for r in rows]  # fmt: skip


def mark_removed(store: RunStore, run_id: str, attempt: int, stash: str | None) -> None:
    with store.transaction() as tx:
        tx.mark_worktree_removed(run_id, attempt)
        payload: dict[str, Any] = {"attempt": attempt, "removed": True}
        if stash:
            payload["stash"] = stash
        tx.touch_run(run_id, changes={}, kind="worktree", payload=payload, actor="host")


def record_diff(
    tx: RunTransaction,
    run_id: str,
    attempt: int,
    repo_dir: str,
    *,
    branch: str,
    base_ref: str,
    merge_base: str,
    head: str,
    stat: tuple[int, int, int],
    merge_mode: str,
    push_remote: str | None,
) -> None:
    """Keep where an attempt's change is in a repository (an OpenClaw run's branch), so its
    diff can be shown and approving it can carry out its merge mode, like any run's."""
    files, additions, deletions = stat
    tx.put_git_diff(
        run_id,
        attempt,
        {
            "repo_dir": repo_dir,
            "branch": branch,
            "base_ref": base_ref,
            "head_commit": head,
            "merge_base": merge_base,
            "diff_files": files,
            "diff_additions": additions,
            "diff_deletions": deletions,
            "merge_mode": merge_mode,
            "push_remote": push_remote,
        },
    )
