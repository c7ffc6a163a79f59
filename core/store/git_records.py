"""Each attempt's worktree and what git showed of it (table ``run_git``): the SQLite backend's
statements, as methods the store (`GitReads`) and its transactions (`GitReads`, `GitWrites`)
take on. `core.repos.records` is what the engine calls."""

from __future__ import annotations

from typing import Any

from core.store.hosts import held_by
from core.store.statements import Statements, Writes


class GitReads(Statements):
    """``run_git`` rows, read."""

    def _one(self, sql: str, params: list[Any]) -> dict[str, Any]:
        found = self.rows(sql, params)
        return dict(found[0]) if found else {}

    def attempt_git(self, run_id: str, attempt: int) -> dict[str, Any]:
        """The attempt's row, or an empty dict."""
        return self._one(
            "SELECT * FROM run_git WHERE run_id = ? AND attempt = ?", [run_id, attempt]
        )

    def latest_git(self, run_id: str) -> dict[str, Any]:
        """The row of the run's latest attempt that has one, or an empty dict."""
        return self._one(
            "SELECT * FROM run_git WHERE run_id = ? ORDER BY attempt DESC LIMIT 1", [run_id]
        )

    def latest_checked(self, run_id: str) -> dict[str, Any]:
        """The row of the run's latest attempt whose completion was checked against a commit
        and a merge base, or an empty dict."""
        return self._one(
            "SELECT * FROM run_git WHERE run_id = ? AND checked_at IS NOT NULL "
            "AND head_commit IS NOT NULL AND merge_base IS NOT NULL "
            "ORDER BY attempt DESC LIMIT 1",
            [run_id],
        )

    def merges_due(self, state: str, merging: str, host: str | None = None) -> list[dict[str, Any]]:
        """Approved runs whose branch waits to be merged (``state`` and ``merge_state`` given by
        the lifecycle), longest waiting first, of the runs ``host`` holds when given
        (`core.store.hosts.held_by`): ``run_id``, ``attempt``, ``repo_dir``."""
        return self.rows(
            "SELECT r.run_id, g.attempt, g.repo_dir FROM runs r JOIN run_git g "
            "ON g.run_id = r.run_id AND g.attempt = r.retry_count + 1 "
            f"WHERE r.state = ? AND r.merge_state = ?{held_by(host)} "
            "ORDER BY r.updated_at, r.run_id",
            [state, merging, *([host] if host else [])],
        )

    def last_merge(self, run_id: str) -> dict[str, Any] | None:
        """The run's latest ``merge`` journal row (what a merge, or an approval that merged
        nothing, came to): ``payload`` (JSON text), ``actor``, ``at``."""
        found = self.rows(
            "SELECT payload, actor, at FROM journal WHERE run_id = ? AND kind = 'merge' "
            "ORDER BY seq DESC LIMIT 1",
            [run_id],
        )
        return dict(found[0]) if found else None

    def worktrees_to_remove(
        self, cutoff: str, *, done: str, failed: str, limit: int = 20, host: str | None = None
    ) -> list[dict[str, Any]]:
        """Worktrees still on disk of runs whose operator's last word — an approval (or the
        merge it asked for) or an override (``done``), or a cancel (``failed``) — was said at
        or before ``cutoff``:
        ``run_id``, ``attempt``, ``repo_dir``, ``checkout``, oldest first (of the runs ``host``
        holds when given: `core.store.hosts.held_by`), with its ``branch``."""
        return self.rows(
            "SELECT g.run_id, g.attempt, g.repo_dir, g.checkout, g.branch FROM run_git g "
            "JOIN runs r ON r.run_id = g.run_id "
            "JOIN audit a ON a.id = (SELECT MAX(id) FROM audit WHERE run_id = r.run_id) "
            "WHERE g.removed_at IS NULL AND g.repo_dir IS NOT NULL "
            "AND g.attempt = r.retry_count + 1 "
            "AND ((r.state = ? AND a.action IN ('approve', 'merge')) "
            "     OR (r.state = ? AND a.action = 'cancel') "
            "     OR (r.state = ? AND a.action = 'override')) "
            f"AND a.at <= ?{held_by(host)} ORDER BY a.at LIMIT ?",
            [done, failed, done, cutoff, *([host] if host else []), limit],
        )


class GitWrites(Writes):
    """``run_git`` rows, written (inside a transaction)."""

    def put_worktree(self, run_id: str, attempt: int, fields: dict[str, Any]) -> None:
        """The attempt's worktree as made (again): ``repo``, ``repo_dir``, ``checkout``,
        ``branch``, ``base_ref``, ``base_commit``, ``start_commit``, ``merge_mode``,
        ``push_remote``, ``refs_at_start`` (JSON); not removed."""
        self.execute(
            "INSERT INTO run_git (run_id, attempt, repo, repo_dir, checkout, branch, base_ref, "
            "base_commit, start_commit, made_at, merge_mode, push_remote, refs_at_start) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, attempt) DO UPDATE SET repo = excluded.repo, "
            "repo_dir = excluded.repo_dir, checkout = excluded.checkout, "
            "branch = excluded.branch, base_ref = excluded.base_ref, "
            "base_commit = excluded.base_commit, start_commit = excluded.start_commit, "
            "made_at = excluded.made_at, removed_at = NULL, merge_mode = excluded.merge_mode, "
            "push_remote = excluded.push_remote, refs_at_start = excluded.refs_at_start",
            [run_id, attempt, fields["repo"], fields["repo_dir"], fields["checkout"],
             fields["branch"], fields["base_ref"], fields["base_commit"], fields["start_commit"],
             self.now, fields["merge_mode"], fields["push_remote"],
             fields.get("refs_at_start")],
        )  # fmt: skip

    def put_git_check(self, run_id: str, attempt: int, fields: dict[str, Any]) -> None:
        """What git showed of the attempt's completion: ``checkout``, ``head_commit``,
        ``merge_base``, ``diff_files``, ``diff_additions``, ``diff_deletions``."""
        self.execute(
            "INSERT INTO run_git (run_id, attempt, checkout, head_commit, merge_base, "
            "diff_files, diff_additions, diff_deletions, checked_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, attempt) DO UPDATE SET head_commit = excluded.head_commit, "
            "merge_base = excluded.merge_base, diff_files = excluded.diff_files, "
            "diff_additions = excluded.diff_additions, diff_deletions = excluded.diff_deletions, "
            "checked_at = excluded.checked_at",
            [run_id, attempt, fields["checkout"], fields["head_commit"], fields["merge_base"],
             fields["diff_files"], fields["diff_additions"], fields["diff_deletions"], self.now],
        )  # fmt: skip

    def put_git_diff(self, run_id: str, attempt: int, fields: dict[str, Any]) -> None:
        """Where an attempt's change is in a repository (an OpenClaw run's branch):
        ``repo_dir``, ``branch``, ``base_ref``, ``head_commit``, ``merge_base``, ``diff_files``,
        ``diff_additions``, ``diff_deletions``, ``merge_mode``, ``push_remote``."""
        self.execute(
            "INSERT INTO run_git (run_id, attempt, repo_dir, checkout, branch, base_ref, "
            "head_commit, merge_base, diff_files, diff_additions, diff_deletions, checked_at, "
            "merge_mode, push_remote) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, attempt) DO UPDATE SET repo_dir = excluded.repo_dir, "
            "branch = excluded.branch, base_ref = excluded.base_ref, "
            "head_commit = excluded.head_commit, merge_base = excluded.merge_base, "
            "diff_files = excluded.diff_files, diff_additions = excluded.diff_additions, "
            "diff_deletions = excluded.diff_deletions, checked_at = excluded.checked_at, "
            "merge_mode = excluded.merge_mode, push_remote = excluded.push_remote",
            [run_id, attempt, fields["repo_dir"], fields["repo_dir"], fields["branch"],
             fields["base_ref"], fields["head_commit"], fields["merge_base"],
             fields["diff_files"], fields["diff_additions"], fields["diff_deletions"], self.now,
             fields["merge_mode"], fields["push_remote"]],
        )  # fmt: skip

    def mark_worktree_removed(self, run_id: str, attempt: int) -> None:
        self.execute(
            "UPDATE run_git SET removed_at = ? WHERE run_id = ? AND attempt = ?",
            [self.now, run_id, attempt],
        )

    def request_merge(self, run_id: str, attempt: int, operator: str) -> None:
        """The operator approved the attempt's branch to be merged, now: the last merge's note
        and refusal are cleared (its commit stays, should a push be all that is left)."""
        self.execute(
            "UPDATE run_git SET merge_requested_by = ?, merge_requested_at = ?, "
            "merge_note = NULL, merge_refused = NULL WHERE run_id = ? AND attempt = ?",
            [operator, self.now, run_id, attempt],
        )

    def record_merge(
        self,
        run_id: str,
        attempt: int,
        merged_commit: str | None,
        note: str,
        refused: str | None = None,
    ) -> None:
        """What the merge did (its commit, or None), its note, and its refusal's code if it
        was refused; a refused merge keeps a commit an earlier try made."""
        self.execute(
            "UPDATE run_git SET merged_commit = COALESCE(?, merged_commit), merge_note = ?, "
            "merge_refused = ? WHERE run_id = ? AND attempt = ?",
            [merged_commit, note, refused, run_id, attempt],
        )
