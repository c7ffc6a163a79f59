"""Where a run's diff is read, and which of its files the gates named (`core.repos.diff` reads
the patch itself).

Where: the run's latest attempt whose completion was checked against git
(`records.latest_checked`) names the commits, merge base to head. They are read from the
configured repository when there is one (a worktree may be removed once its run is over; the
branch and its commits stay in the repository), else from the repository the worker left in
its checkout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.contracts.secrets_scan import mask_secrets
from core.repos.claims import FileChange, changes_between
from core.repos.git import GitError, is_full_sha, resolve_commit
from core.repos.records import latest_checked, latest_git
from core.store.api import RunStore
from core.text import inert


@dataclass(frozen=True)
class DiffSource:
    """Where a run's diff is read: the repository, and the commits from merge base to head."""

    run_id: str
    attempt: int
    """The attempt whose completion named ``head``."""
    repo: Path
    base: str
    """The merge base of the run's base and ``head`` (full sha)."""
    head: str
    """The commit the completion claimed (full sha)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "attempt": self.attempt,
            "repo": str(self.repo),
            "base": self.base,
            "head": self.head,
        }


@dataclass(frozen=True)
class DiffRefusal:
    """Why a run has no diff to show, as one sentence."""

    code: Literal["not_found", "no_diff"]
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def run_diff_source(store: RunStore, run_id: str) -> DiffSource | DiffRefusal:
    """Where to read ``run_id``'s diff, or why there is none (``not_found``: no such run;
    ``no_diff``: no checked commit yet, no repository, or its commits are gone)."""
    if store.get_run(run_id) is None:
        return DiffRefusal("not_found", f"There is no run {run_id}.")
    row = latest_checked(store, run_id)
    if not row:
        return DiffRefusal("no_diff", _why_none(run_id, latest_git(store, run_id)))
    base, head = str(row["merge_base"]), str(row["head_commit"])
    folder = str(row.get("repo_dir") or row.get("checkout") or "")
    if not (is_full_sha(base) and is_full_sha(head)) or not folder:
        return DiffRefusal("no_diff", f"Run {run_id}'s record names no commits git can read.")
    repo = Path(folder)
    if not repo.is_dir():
        return DiffRefusal(
            "no_diff", f"Run {run_id}'s commits were in {folder}, which is no longer there."
        )
    try:
        found = resolve_commit(repo, head) == head and resolve_commit(repo, base) == base
    except GitError as exc:
        return DiffRefusal("no_diff", f"git cannot read run {run_id}'s diff: {exc}")
    if not found:
        return DiffRefusal(
            "no_diff",
            f"{folder} no longer holds run {run_id}'s commits ({base[:12]}..{head[:12]}).",
        )
    return DiffSource(run_id, int(row["attempt"]), repo, base, head)


def _why_none(run_id: str, latest: Mapping[str, Any]) -> str:
    if not latest or not latest.get("checked_at"):
        return (
            f"Run {run_id} has no checked commit yet: a diff is shown once a completion of it "
            "has been checked against git."
        )
    if not latest.get("head_commit") and not (latest.get("repo_dir") or latest.get("checkout")):
        return f"Run {run_id}'s checkout held no git repository, so there is no diff to show."
    if not latest.get("head_commit"):
        return (
            f"Run {run_id}'s completion named no commit in its repository, so there is no diff "
            "to show."
        )
    return (
        f"Run {run_id}'s commit {str(latest['head_commit'])[:12]} shares no history with its "
        "base, so there is no diff to show."
    )


def diff_files(repo: Path, base: str, head: str) -> list[FileChange]:
    """The files that differ between ``base`` and ``head``, with their line counts.

    Raises:
        GitError: git could not answer.
    """
    return changes_between(repo, base, head)


def finding_files(gates: Iterable[Mapping[str, Any]], files: Sequence[str]) -> list[str]:
    """The diff's files named by a finding of the latest attempt's gates, in the diff's order.

    Findings: a failing gate whose name starts with ``scope``, ``risk`` or ``secret``, and the
    failing ``files_match_diff`` gate. A file is named when its path (or the path as gate
    details store it: inert, secrets masked) stands in a detail as a word of its own.
    """
    every = list(gates)
    latest = max((int(g.get("attempt") or 0) for g in every), default=0)
    details = [
        str(g.get("detail") or "")
        for g in every
        if int(g.get("attempt") or 0) == latest
        and not g.get("passed")
        and (
            str(g.get("name") or "").startswith(("scope", "risk", "secret"))
            or g.get("name") == "files_match_diff"
        )
    ]
    details = [d for d in details if d]
    if not details:
        return []
    named: list[str] = []
    for path in files:
        for form in dict.fromkeys((path, mask_secrets(inert(path)))):
            pattern = re.compile(rf"(?<![\w/.-]){re.escape(form)}(?![\w/-]|\.\w)")
            if any(pattern.search(detail) for detail in details):
                named.append(path)
                break
    return named
