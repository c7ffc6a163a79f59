"""A configured run's completion checked, and its work taken into the main repository.

After the git gates (`core.repos.claims`, asked of the run's view), the host fetches the run's
branch head into the main repository, kept as ``refs/jarvis/RUN/attempt-N`` (and the claimed
commit, when it is another, as ``claimed-attempt-N``), so its diff, a retry and an approval
read it there whatever becomes of the checkout. The branches that moved while the run ran are
gated next (`core.repos.ref_moves`). Only when every gate passed does the branch the dispatch
names reach the main repository, moved there by the host (compare-and-swap; a tip it replaces
that is not part of the run's history is kept as ``refs/jarvis/RUN/replaced-attempt-N``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.repos.claims import ClaimCheck, GitGate, check_claims
from core.repos.git import GitError, git, resolve_commit
from core.repos.ref_moves import REF_GATE, ref_gate
from core.repos.view import RunView, objects_dir, pin
from core.repos.worktrees import list_worktrees

log = logging.getLogger("jarvis.host")

_ZERO = "0" * 40


def check_run(
    checkout: Path,
    completion: Mapping[str, Any] | None,
    *,
    run_id: str,
    attempt: int,
    branch: str,
    view_path: Path,
    main: Path,
    base_commit: str | None,
    bases: Sequence[str] = (),
    refs_at_start: Mapping[str, str] | None = None,
) -> ClaimCheck:
    """The git gates of a run in the configured repository ``main``, its work fetched into it,
    and the ref gate when the branches at the attempt's start are known."""
    check = check_claims(checkout, completion, branch=branch, view_path=view_path,
                         base_commit=base_commit, bases=bases,
                         main_objects=objects_dir(main))  # fmt: skip
    if check.repo is None:
        return check  # no repository in the checkout: nothing to take, nothing to compare
    gates = list(check.gates)
    view = RunView(view_path, [])
    try:
        if check.tip is not None:
            view.bring(main, check.tip, pin(run_id, f"attempt-{attempt}"))
        if check.head is not None and check.head != check.tip:
            view.bring(main, check.head, pin(run_id, f"claimed-attempt-{attempt}"))
        if refs_at_start is not None:
            gates.append(ref_gate(main, refs_at_start, own=f"refs/heads/{branch}",
                                  head=check.head, base_commit=base_commit,
                                  run_id=run_id))  # fmt: skip
    except GitError as exc:
        gates.append(GitGate(REF_GATE, "failed",
                             f"the run's commits could not be taken in: {exc}"))  # fmt: skip
    if check.head is not None and all(g.passed for g in gates):
        why = move_branch(main, branch, check.head, run_id=run_id, attempt=attempt)
        if why:
            log.warning("run %s: %s", run_id, why)
    return replace(check, gates=gates, repo=main)


def move_branch(main: Path, branch: str, head: str, *, run_id: str, attempt: int) -> str | None:
    """Move ``branch`` of the main repository to ``head``, the checked work of the run; why
    not, or None. A branch checked out in a working tree is not moved under its owner."""
    ref = f"refs/heads/{branch}"
    try:
        old = resolve_commit(main, ref)
        if old == head:
            return None
        holders = [w.path for w in list_worktrees(main) if w.branch == branch]
        if holders:
            return f"{branch} is checked out at {holders[0]}, so it was not moved to {head[:12]}"
        if old is not None and not _is_ancestor(main, old, head):
            git(["update-ref", pin(run_id, f"replaced-attempt-{attempt}"), old], cwd=main)
        git(["update-ref", "-m", f"jarvis: run {run_id}'s checked work", ref, head,
             old or _ZERO], cwd=main)  # fmt: skip
    except GitError as exc:
        return f"{branch} could not be moved to {head[:12]}: {exc}"
    return None


def _is_ancestor(repo: Path, older: str, newer: str) -> bool:
    return git(["merge-base", "--is-ancestor", older, newer], cwd=repo, check=False).code == 0
