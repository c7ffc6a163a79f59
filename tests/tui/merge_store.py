"""The console's test store plus approved runs with branches: one waiting for its host to merge
it, one whose merge the host refused (a conflict), with a hostile branch name in both."""

from __future__ import annotations

from pathlib import Path

from core import operator_actions
from core.lifecycle import RunState
from core.repos.approval import give_up
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run
from tests.tui.conftest import HOSTILE, build_store, fixed_clock

#: A branch as a worker may name it: escapes and markup must stay text on screen.
BRANCH = "jarvis-fix\x1b[31m[bold]x[/bold]"


def reviewed_with_branch(store: SqliteStore, run_id: str) -> None:
    make_run(store, run_id, RunState.REVIEW_REQUESTED)
    with store.transaction() as tx:
        tx.put_worktree(run_id, 1, {
            "repo": "acme-labs/fleet-engine", "repo_dir": "/srv/git/fleet-engine.git",
            "checkout": f"/srv/jarvis/checkouts/{run_id}", "branch": BRANCH, "base_ref": "main",
            "base_commit": "1" * 40, "start_commit": "1" * 40, "merge_mode": "auto-merge",
            "push_remote": None,
        })  # fmt: skip
        tx.put_git_check(run_id, 1, {
            "checkout": f"/srv/jarvis/checkouts/{run_id}", "head_commit": "2" * 40,
            "merge_base": "1" * 40, "diff_files": 1, "diff_additions": 3, "diff_deletions": 1,
        })  # fmt: skip


def build_merge_store(db_path: Path) -> Path:
    build_store(db_path)
    store = SqliteStore(db_path, clock=fixed_clock)
    try:
        for run_id in ("run-merging", "run-merge-refused"):
            reviewed_with_branch(store, run_id)
            asked = operator_actions.approve(store, run_id, "ana")
            assert asked.ok and asked.merge and asked.merge["pending"], asked
        refused = give_up(store, "run-merge-refused", f"git said {HOSTILE}")
        assert refused is not None and refused["state"] == "review_requested"
    finally:
        store.close()
    return db_path
