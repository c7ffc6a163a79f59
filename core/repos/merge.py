"""Merging an approved run's branch into its base, without a working tree.

The merge is computed by ``git merge-tree --write-tree`` and recorded by ``git commit-tree``; the
base branch is then moved with ``git update-ref`` naming the value it had (compare-and-swap): no
checkout is touched, a bare repository works, and a base that moved meanwhile makes the merge
fail rather than drop someone's commit. A base branch checked out in a working tree is never
moved under its owner: the approval records a recommendation instead.

A merge that already happened (the approval was interrupted after the ref moved) is found as
such: the branch's head is already in the base and the approval had marked it
(``refs/jarvis/RUN/merged``, written just before the base moves), and approving again records
it. A base that holds the head without that mark was moved to the run's work by something else
(a worker running unconfined, say): the approval is refused (``moved_outside``), never taken
for a merge already done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.repos.claims import named
from core.repos.git import JARVIS_IDENTITY, GitError, git, resolve_commit
from core.repos.ref_moves import other_runs_pins
from core.repos.view import pin
from core.repos.worktrees import list_worktrees
from core.text import inert

Done = Literal["fast_forward", "merge_commit", "already_merged", "recommended", "not_merged"]


@dataclass(frozen=True)
class MergeOutcome:
    """What approving did with the branch, or why it refused (``refused`` is then set)."""

    done: Done | None
    note: str
    """One sentence for the operator: what happened, or why nothing did."""
    merged_commit: str | None = None
    refused: str | None = None
    """``branch_moved``, ``moved_outside``, ``merge_conflict``, ``base_moved`` (while merging),
    ``push_rejected`` (merged here, not pushed: ``merged_commit`` is set), ``no_base``,
    ``no_branch``, ``no_record`` or ``git``."""
    pushed: bool | None = None
    conflicts: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "done": self.done,
            "note": self.note,
            "merged_commit": self.merged_commit,
            "pushed": self.pushed,
            "conflicts": self.conflicts,
            "refused": self.refused,
        }


def _refuse(code: str, note: str, conflicts: list[str] | None = None) -> MergeOutcome:
    return MergeOutcome(None, note, refused=code, conflicts=conflicts or [])


def _others_work(repo: Path, run_id: str, head: str) -> bool:
    """Whether ``head`` is reachable from what the host pinned for other runs."""
    left = git(["rev-list", "--max-count=1", head, "--not", *other_runs_pins(run_id), "--"],
               cwd=repo, check=False)  # fmt: skip
    return left.code == 0 and not left.out.strip()


def _is_ancestor(repo: Path, older: str, newer: str) -> bool:
    return git(["merge-base", "--is-ancestor", older, newer], cwd=repo, check=False).code == 0


def _mark(repo: Path, marker: str, head: str, run_id: str) -> None:
    """Mark ``head`` as merged by this run's approval, just before the base moves: an approval
    interrupted after the move finds its merge done."""
    git(["update-ref", "-m", f"jarvis: approving run {run_id}", marker, head], cwd=repo)


def _conflicted(output: str) -> list[str]:
    """The paths ``git merge-tree --write-tree --name-only`` lists after the tree's id."""
    lines = output.split("\0") if "\0" in output else output.splitlines()
    paths: list[str] = []
    for line in lines[1:]:
        if not line:
            break  # the informational messages follow an empty entry
        if line not in paths:
            paths.append(line)
    return paths


def merge_branch(
    repo: Path,
    *,
    branch: str,
    base: str,
    head: str,
    run_id: str,
    operator: str,
    remote: str | None = None,
) -> MergeOutcome:
    """Merge ``branch`` (whose head must still be ``head``, the commit the gates checked) into
    ``base`` in ``repo``, then push ``base`` to ``remote`` when one is named."""
    try:
        outcome = _merge(repo, branch, base, head, run_id, operator)
    except GitError as exc:
        return _refuse("git", f"Nothing was merged: {exc}")
    if remote and outcome.done in ("fast_forward", "merge_commit", "already_merged"):
        push = git(["push", "--quiet", "--", remote, f"refs/heads/{base}:refs/heads/{base}"],
                   cwd=repo, check=False)  # fmt: skip
        if push.code == 0:
            return MergeOutcome(outcome.done, f"{outcome.note} Pushed {base} to {remote}.",
                                outcome.merged_commit, pushed=True)  # fmt: skip
        said = " ".join(push.err.split())[:300]
        note = (f"{outcome.note} Pushing {base} to {remote} was rejected: {said} Approve again "
                "to push again.")  # fmt: skip
        return MergeOutcome(outcome.done, note, outcome.merged_commit, refused="push_rejected",
                            pushed=False)  # fmt: skip
    return outcome


def _merge(
    repo: Path, branch: str, base: str, head: str, run_id: str, operator: str
) -> MergeOutcome:
    tip = resolve_commit(repo, f"refs/heads/{branch}")
    if tip is None:
        return _refuse("no_branch", f"Branch {branch} is gone from the repository; nothing was "
                       "merged.")  # fmt: skip
    if tip != head:
        return _refuse(
            "branch_moved",
            f"Branch {branch} moved since its claims were checked (it is at {tip[:12]}, the "
            f"gates checked {head[:12]}); nothing was merged. Retry the run to check it again.",
        )
    base_tip = resolve_commit(repo, f"refs/heads/{base}")
    if base_tip is None:
        return _refuse("no_base", f"The repository has no branch {base} to merge into.")
    holders = [w.path for w in list_worktrees(repo) if w.branch == base]
    if holders:
        return MergeOutcome(
            "recommended",
            f"{base} is checked out at {holders[0]}, so it was not moved under its owner: "
            f"merging {branch} into {base} is recommended.",
        )
    marker = pin(run_id, "merged")
    if _is_ancestor(repo, head, base_tip):
        if resolve_commit(repo, marker) == head:
            return MergeOutcome("already_merged", f"{branch} is already in {base}.", base_tip)
        if _others_work(repo, run_id, head):
            # Another run made the very same commits (deterministic workers can), and the host
            # brought them in for it: in the base through Jarvis, not outside it.
            _mark(repo, marker, head, run_id)
            note = f"{branch} is already in {base}: another run's work holds the same commits."
            return MergeOutcome("already_merged", note, base_tip)
        return _refuse(
            "moved_outside",
            f"{base} already holds {head[:12]}, the commit run {run_id} was checked at, but no "
            f"approval of the run merged it: {base} was moved to the run's work outside Jarvis. "
            "Nothing was merged; look at the repository, then approve with --no-merge to "
            "accept it as it is.",
        )
    if _is_ancestor(repo, base_tip, head):
        _mark(repo, marker, head, run_id)
        if not _move_base(repo, base, head, base_tip, marker, f"fast-forward for run {run_id}"):
            return _base_moved(repo, base, base_tip)
        return MergeOutcome("fast_forward", f"{base} fast-forwarded to {head[:12]}.", head)
    merged = git(["merge-tree", "--write-tree", "--name-only", "-z", base_tip, head], cwd=repo,
                 check=False)  # fmt: skip
    if merged.code == 1:
        conflicts = _conflicted(merged.out)
        return _refuse(
            "merge_conflict",
            f"{branch} does not merge cleanly into {base}: {len(conflicts)} file(s) conflict "
            f"({named(conflicts)}); nothing was merged.",
            conflicts,
        )
    if merged.code != 0:
        said = " ".join(merged.err.split())[:300]
        raise GitError(f"`git merge-tree` failed: {said}", merged.code, said)
    tree = merged.out.split("\0")[0].split("\n")[0].strip()
    message = (
        f"Merge branch '{branch}' into {base}\n\nRun {run_id}, approved by {inert(operator)}.\n"
    )
    commit = git(["commit-tree", tree, "-p", base_tip, "-p", head], cwd=repo,
                 env=JARVIS_IDENTITY, stdin=message).out.strip()  # fmt: skip
    _mark(repo, marker, head, run_id)
    if not _move_base(repo, base, commit, base_tip, marker, f"merge for run {run_id}"):
        return _base_moved(repo, base, base_tip)
    return MergeOutcome("merge_commit", f"{branch} merged into {base} as {commit[:12]}.", commit)


def _move_base(repo: Path, base: str, new: str, old: str, marker: str, why: str) -> bool:
    """Move ``base`` from ``old`` to ``new`` (compare-and-swap); False, the mark taken back,
    when it is no longer at ``old``: something moved it while this merge was made."""
    moved = git(["update-ref", "-m", f"jarvis: {why}", f"refs/heads/{base}", new, old],
                cwd=repo, check=False)  # fmt: skip
    if moved.code == 0:
        return True
    if resolve_commit(repo, f"refs/heads/{base}") == old:
        said = " ".join(moved.err.split())[:300]
        raise GitError(f"`git update-ref` failed: {said}", moved.code, said)
    git(["update-ref", "-d", marker], cwd=repo, check=False)
    return False


def _base_moved(repo: Path, base: str, was: str) -> MergeOutcome:
    now = resolve_commit(repo, f"refs/heads/{base}")
    return _refuse(
        "base_moved",
        f"{base} moved while the merge was made (from {was[:12]} to {(now or 'nothing')[:12]}); "
        "nothing was merged. Approve again to merge onto where it is now.",
    )
