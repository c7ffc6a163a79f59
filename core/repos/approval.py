"""What approving a run does with its branch, recorded with the approval.

Read from the run's latest ``run_git`` row: its repository, branch, base, the head its claims
were checked at, and its merge mode (``auto-merge`` or ``recommend-only``, set when the worktree
was made from the repository's configuration, or by an OpenClaw run's risk level).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.repos.merge import MergeOutcome, merge_branch
from core.store.api import Row, RunTransaction


def carry_out_merge(
    tx: RunTransaction, run: Row, operator: str, *, merge: bool
) -> MergeOutcome | None:
    """Merge, recommend or leave the run's branch; None for a run with no repository record.

    Runs inside the approval's transaction: an outcome that is not refused is recorded in it
    (``run_git``, an audit row and a journal row), a refused one writes nothing.
    """
    run_id = str(run["run_id"])
    attempt = int(run["retry_count"]) + 1
    record = tx.attempt_git(run_id, attempt)
    mode = record.get("merge_mode")
    if not mode or not record.get("repo_dir") or not record.get("branch"):
        return None
    branch, base = str(record["branch"]), str(record.get("base_ref") or "")
    head = record.get("head_commit")
    if not merge:
        outcome = MergeOutcome("not_merged", f"Approved without merging: {branch} is left as is.")
    elif mode != "auto-merge":
        note = f"The merge mode is {mode}: merging {branch} into {base} is recommended."
        outcome = MergeOutcome("recommended", note)
    elif not head or not base:
        note = f"No checked commit of {branch} is known: merging it by hand is recommended."
        outcome = MergeOutcome("recommended", note)
    else:
        outcome = merge_branch(
            Path(record["repo_dir"]), branch=branch, base=base, head=str(head), run_id=run_id,
            operator=operator, remote=record.get("push_remote"),
        )  # fmt: skip
    if outcome.refused:
        return outcome
    tx.record_merge(run_id, attempt, outcome.merged_commit, outcome.note)
    payload: dict[str, Any] = {"mode": mode, "branch": branch, "base": base, **outcome.to_json()}
    tx.journal(run_id, "merge", payload, operator)
    tx.audit(run_id, actor=operator, action="merge", from_state=run["state"],
             to_state=run["state"], reason=outcome.note)  # fmt: skip
    return outcome
