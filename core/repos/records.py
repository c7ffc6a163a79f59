"""The store's record of each attempt's worktree and of what git showed (table ``run_git``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.lifecycle import RunState
from core.repos.claims import ClaimCheck
from core.repos.worktrees import Worktree
from core.store.sqlite_store import SqliteStore, Transaction, iso


def record_worktree(
    store: SqliteStore,
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
        tx.execute(
            "INSERT INTO run_git (run_id, attempt, repo, repo_dir, checkout, branch, base_ref, "
            "base_commit, start_commit, made_at, merge_mode, push_remote) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, attempt) DO UPDATE SET repo = excluded.repo, "
            "repo_dir = excluded.repo_dir, checkout = excluded.checkout, "
            "branch = excluded.branch, base_ref = excluded.base_ref, "
            "base_commit = excluded.base_commit, start_commit = excluded.start_commit, "
            "made_at = excluded.made_at, removed_at = NULL, merge_mode = excluded.merge_mode, "
            "push_remote = excluded.push_remote",
            [run_id, attempt, repo, str(worktree.repo_dir), str(worktree.path), worktree.branch,
             worktree.base_ref, worktree.base_commit, worktree.start_commit, tx.now, merge_mode,
             push_remote],
        )  # fmt: skip
        tx.touch_run(
            run_id,
            changes={},
            kind="worktree",
            payload={
                "attempt": attempt,
                "branch": worktree.branch,
                "base": worktree.base_ref,
                "start_commit": worktree.start_commit,
            },
            actor="host",
        )


def attempt_git(store: SqliteStore | Transaction, run_id: str, attempt: int) -> dict[str, Any]:
    """The attempt's ``run_git`` row, or an empty dict."""
    rows = store.rows("SELECT * FROM run_git WHERE run_id = ? AND attempt = ?", [run_id, attempt])
    return dict(rows[0]) if rows else {}


def latest_git(store: SqliteStore | Transaction, run_id: str) -> dict[str, Any]:
    """The ``run_git`` row of the run's latest attempt that has one, or an empty dict."""
    rows = store.rows(
        "SELECT * FROM run_git WHERE run_id = ? ORDER BY attempt DESC LIMIT 1", [run_id]
    )
    return dict(rows[0]) if rows else {}


def latest_checked(store: SqliteStore | Transaction, run_id: str) -> dict[str, Any]:
    """The ``run_git`` row of the run's latest attempt whose completion was checked against a
    commit and a merge base (the attempt with a diff to show), or an empty dict."""
    rows = store.rows(
        "SELECT * FROM run_git WHERE run_id = ? AND checked_at IS NOT NULL "
        "AND head_commit IS NOT NULL AND merge_base IS NOT NULL ORDER BY attempt DESC LIMIT 1",
        [run_id],
    )
    return dict(rows[0]) if rows else {}


def record_check(
    tx: Transaction, run_id: str, attempt: int, checkout: str, check: ClaimCheck
) -> None:
    """Keep what git showed of the attempt's completion with its worktree record."""
    stat = check.stat() if check.merge_base else {}
    tx.execute(
        "INSERT INTO run_git (run_id, attempt, checkout, head_commit, merge_base, diff_files, "
        "diff_additions, diff_deletions, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run_id, attempt) DO UPDATE SET head_commit = excluded.head_commit, "
        "merge_base = excluded.merge_base, diff_files = excluded.diff_files, "
        "diff_additions = excluded.diff_additions, diff_deletions = excluded.diff_deletions, "
        "checked_at = excluded.checked_at",
        [
            run_id,
            attempt,
            checkout,
            check.head,
            check.merge_base,
            stat.get("files"),
            stat.get("additions"),
            stat.get("deletions"),
            tx.now,
        ],
    )


@dataclass(frozen=True)
class Removable:
    run_id: str
    attempt: int
    repo_dir: str
    checkout: str


def removable(store: SqliteStore, grace_s: float) -> list[Removable]:
    """Worktrees still on disk whose run is over (done, or cancelled) for longer than the grace.

    A run that failed otherwise keeps its worktree: it may be retried, and an operator may want
    to look inside. Its next attempt replaces the worktree anyway.
    """
    cutoff = iso(datetime.fromisoformat(store.now()) - timedelta(seconds=grace_s))
    # The run's last audit row is the operator's last word on it: an approval (done) or a
    # cancel (failed), and when it was said.
    rows = store.rows(
        "SELECT g.run_id, g.attempt, g.repo_dir, g.checkout FROM run_git g "
        "JOIN runs r ON r.run_id = g.run_id "
        "JOIN audit a ON a.id = (SELECT MAX(id) FROM audit WHERE run_id = r.run_id) "
        "WHERE g.removed_at IS NULL AND g.repo_dir IS NOT NULL "
        "AND g.attempt = r.retry_count + 1 "
        "AND ((r.state = ? AND a.action = 'approve') OR (r.state = ? AND a.action = 'cancel') "
        "     OR (r.state = ? AND a.action = 'override')) "
        "AND a.at <= ? ORDER BY a.at LIMIT 20",
        [RunState.DONE.value, RunState.FAILED.value, RunState.DONE.value, cutoff],
    )
    return [Removable(r["run_id"], r["attempt"], r["repo_dir"], r["checkout"]) for r in rows]


def mark_removed(store: SqliteStore, run_id: str, attempt: int, stash: str | None) -> None:
    with store.transaction() as tx:
        tx.execute(
            "UPDATE run_git SET removed_at = ? WHERE run_id = ? AND attempt = ?",
            [tx.now, run_id, attempt],
        )
        payload: dict[str, Any] = {"attempt": attempt, "removed": True}
        if stash:
            payload["stash"] = stash
        tx.touch_run(run_id, changes={}, kind="worktree", payload=payload, actor="host")


def record_diff(
    tx: Transaction,
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
    tx.execute(
        "INSERT INTO run_git (run_id, attempt, repo_dir, checkout, branch, base_ref, "
        "head_commit, merge_base, diff_files, diff_additions, diff_deletions, checked_at, "
        "merge_mode, push_remote) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run_id, attempt) DO UPDATE SET repo_dir = excluded.repo_dir, "
        "branch = excluded.branch, base_ref = excluded.base_ref, "
        "head_commit = excluded.head_commit, merge_base = excluded.merge_base, "
        "diff_files = excluded.diff_files, diff_additions = excluded.diff_additions, "
        "diff_deletions = excluded.diff_deletions, checked_at = excluded.checked_at, "
        "merge_mode = excluded.merge_mode, push_remote = excluded.push_remote",
        [run_id, attempt, repo_dir, repo_dir, branch, base_ref, head, merge_base, files,
         additions, deletions, tx.now, merge_mode, push_remote],
    )  # fmt: skip
