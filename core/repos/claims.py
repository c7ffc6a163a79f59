"""What a completion claims, checked against what git shows in the run's checkout.

Three gates follow the completion's own (docs/contracts.md):

- ``commit_exists`` — ``commit_sha`` names one commit in the repository;
- ``commit_on_branch`` — that commit is the head of the run's branch, and the worktree holds
  nothing uncommitted (the gate lists what it holds);
- ``files_match_diff`` — ``files_changed`` is exactly the set of files that differ between the
  merge base (of the base and the commit) and the commit;
- ``secrets_in_diff`` — the lines that change adds hold no secret.

A checkout with no repository in it cannot be checked: its gates say "not checked: no
repository" and carry the status ``not_checked``, never ``passed``. Whether such a run may still
reach review is the workspace's policy (``[git] unverified_may_review``).

The repository in the checkout is the worker's: git is never run in it. Its refs are read as
files, and everything else is asked of the run's view (`core.repos.view`), a host-owned
repository borrowing its objects.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from core.repos.git import GitError, git, resolve_commit, split_z
from core.repos.patches import PATCH_OPTIONS, read_patch
from core.repos.refs_read import RefsUnreadable, git_dir_of, read_refs
from core.repos.view import RunView

_SHA = re.compile(r"[0-9a-fA-F]{6,40}")

GIT_GATES = ("commit_exists", "commit_on_branch", "files_match_diff", "secrets_in_diff")
"""The git gates, in the order the gate panel shows them (after the completion's own)."""

Status = Literal["passed", "failed", "not_checked"]

#: How many paths a gate's detail names before it says how many more there are.
NAMED_PATHS = 8
#: Branches tried, in order, as the base of a repository Jarvis was not told about.
FALLBACK_BASES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")


@dataclass(frozen=True)
class GitGate:
    name: str
    status: Status
    detail: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str
    """git's letter: ``A`` added, ``M`` modified, ``D`` deleted, ``T`` type changed."""
    additions: int | None
    deletions: int | None
    """None for a binary file."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
        }


@dataclass(frozen=True)
class ClaimCheck:
    """The git gates, and what git showed (for the run's record and its diff)."""

    gates: list[GitGate]
    repo: Path | None = None
    head: str | None = None
    """The full sha of the claimed commit, when it exists."""
    merge_base: str | None = None
    files: list[FileChange] = field(default_factory=list)
    tip: str | None = None
    """The head of the run's branch as its repository holds it (None: no such branch)."""

    @property
    def unchecked(self) -> bool:
        return any(g.status == "not_checked" for g in self.gates)

    def stat(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "additions": sum(f.additions or 0 for f in self.files),
            "deletions": sum(f.deletions or 0 for f in self.files),
        }


def named(paths: Sequence[str]) -> str:
    """``a, b, c`` — or the first `NAMED_PATHS` and how many more."""
    shown = ", ".join(paths[:NAMED_PATHS])
    more = len(paths) - NAMED_PATHS
    return f"{shown} and {more} more" if more > 0 else shown


def _own_git_dir(folder: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(folder / ".git").st_mode)
    except OSError:
        return False


def find_repository(checkout: Path) -> Path | None:
    """The repository the worker left in its checkout: the checkout itself, or the one folder
    in it that is a repository (a ``.git`` folder, never a link). A repository *around* the
    checkout (a workspace kept inside a project) is not the run's. Found by looking, not by
    asking git, which would read the worker's configuration."""
    if not checkout.is_dir() or checkout.is_symlink():
        return None
    if _own_git_dir(checkout):
        return checkout
    try:
        inner = [
            Path(e.path)
            for e in sorted(os.scandir(checkout), key=lambda e: e.name)
            if e.is_dir(follow_symlinks=False) and _own_git_dir(Path(e.path))
        ]
    except OSError:
        return None
    return inner[0] if len(inner) == 1 else None


def _not_checked(reason: str) -> ClaimCheck:
    return ClaimCheck(
        [GitGate(name, "not_checked", f"not checked: {reason}") for name in GIT_GATES]
    )


def _not_evaluated(reason: str) -> list[GitGate]:
    return [GitGate(name, "failed", f"not evaluated: {reason}") for name in GIT_GATES]


def changes_between(repo: Path, base: str, head: str) -> list[FileChange]:
    """The files that differ between two commits, renames counted as a deletion and an addition
    (so both paths are among the files a worker must claim)."""
    statuses = split_z(
        git(["diff", *PATCH_OPTIONS, "--name-status", "-z", base, head, "--"], cwd=repo).out
    )
    counts: dict[str, tuple[int | None, int | None]] = {}
    numstat = split_z(
        git(["diff", *PATCH_OPTIONS, "--numstat", "-z", base, head, "--"], cwd=repo).out
    )
    for entry in numstat:
        added, deleted, path = (entry.split("\t", 2) + ["", ""])[:3]
        counts[path] = (
            int(added) if added.isdigit() else None,
            int(deleted) if deleted.isdigit() else None,
        )
    files: list[FileChange] = []
    for letter, path in zip(statuses[0::2], statuses[1::2], strict=False):
        plus, minus = counts.get(path, (None, None))
        files.append(FileChange(path, letter[:1], plus, minus))
    return files


def _base_for(repo: Path, base_commit: str | None, bases: Sequence[str]) -> str | None:
    if base_commit and resolve_commit(repo, base_commit):
        return base_commit
    for name in bases:
        found = resolve_commit(repo, name)
        if found:
            return found
    return None


def _claimed(completion: Mapping[str, Any]) -> list[str]:
    files = completion.get("files_changed")
    if not isinstance(files, list):
        return []
    return [f.removeprefix("./") for f in files if isinstance(f, str)]


def check_claims(
    checkout: Path,
    completion: Mapping[str, Any] | None,
    *,
    branch: str,
    view_path: Path,
    base_commit: str | None = None,
    bases: Sequence[str] = (),
    main_objects: Path | None = None,
) -> ClaimCheck:
    """Check ``completion``'s claims against the repository in ``checkout``, through the run's
    view at ``view_path`` (made or refreshed here).

    Args:
        branch: the run's branch (the dispatch's; the completion's own is gated on matching it).
        base_commit: where the run's branch started (known for a checkout Jarvis made).
        bases: refs to try as the base otherwise (the dispatch's base branch, then the usual
            names), the first that resolves wins.
        main_objects: the configured repository's object store, which the view borrows too.
    """
    repo = find_repository(checkout)
    if repo is None:
        return _not_checked("no repository in the run's checkout")
    view = RunView(
        view_path, [repo / ".git" / "objects", *([main_objects] if main_objects else [])]
    )
    if completion is None:
        return ClaimCheck(_not_evaluated("there is no parseable completion"), view.path)
    try:
        refs = read_refs(git_dir_of(repo))
        view.ensure()
        view.take(refs)
        tip = refs.resolve(f"refs/heads/{branch}")
        check = _check(view.path, completion, branch, base_commit, [*bases, *FALLBACK_BASES],
                       tip=tip, dirty=lambda sha: view.uncommitted(repo, sha))  # fmt: skip
        return replace(check, tip=tip)
    except (GitError, RefsUnreadable, OSError) as exc:
        return ClaimCheck(
            [GitGate(name, "failed", f"git could not answer: {exc}") for name in GIT_GATES],
            view.path,
        )


def _check(
    repo: Path,
    completion: Mapping[str, Any],
    branch: str,
    base_commit: str | None,
    bases: Sequence[str],
    *,
    tip: str | None,
    dirty: Callable[[str], list[str]],
) -> ClaimCheck:
    """The gates, asked of ``repo`` (the view); ``tip`` is the run's branch head as its
    repository holds it, ``dirty`` what the work tree holds uncommitted against a commit."""
    claimed_sha = completion.get("commit_sha")
    # Only a hexadecimal sha is looked up: "main", "HEAD" or "v1.2" name commits too, and a
    # claim that is a moving name is no claim about what was committed.
    is_sha = isinstance(claimed_sha, str) and _SHA.fullmatch(claimed_sha) is not None
    sha = resolve_commit(repo, claimed_sha) if is_sha and isinstance(claimed_sha, str) else None
    if sha is None:
        cited = repr(claimed_sha) if isinstance(claimed_sha, str) else "nothing"
        why = "names no commit in the repository" if is_sha else "is not a commit sha"
        return ClaimCheck(
            [
                GitGate("commit_exists", "failed", f"{cited} {why}"),
                *_not_evaluated("the claimed commit does not exist")[1:],
            ],
            repo,
        )
    subject = git(["log", "-1", "--format=%s", sha, "--"], cwd=repo).out.strip()
    gates = [GitGate("commit_exists", "passed", f"{sha[:12]} {subject}".strip())]

    if tip is None:
        gates.append(
            GitGate("commit_on_branch", "failed", f"the repository has no branch {branch}")
        )
    elif tip != sha:
        gates.append(
            GitGate(
                "commit_on_branch", "failed", f"the head of {branch} is {tip[:12]}, not {sha[:12]}"
            )
        )
    elif left := dirty(sha):
        gates.append(
            GitGate(
                "commit_on_branch",
                "failed",
                f"{sha[:12]} is the head of {branch}, but {len(left)} path(s) are "
                f"uncommitted: {named(left)}",
            )
        )
    else:
        gates.append(
            GitGate(
                "commit_on_branch",
                "passed",
                f"{sha[:12]} is the head of {branch}; nothing uncommitted",
            )
        )

    base = _base_for(repo, base_commit, bases)
    if base is None:
        for name in ("files_match_diff", "secrets_in_diff"):
            gates.append(
                GitGate(name, "not_checked", "not checked: no base branch to compare with")
            )
        return ClaimCheck(gates, repo, sha)
    merge_base = git(["merge-base", base, sha], cwd=repo, check=False).out.strip() or None
    if merge_base is None:
        for name in ("files_match_diff", "secrets_in_diff"):
            gates.append(GitGate(name, "failed", f"{sha[:12]} shares no history with the base"))
        return ClaimCheck(gates, repo, sha)
    files = changes_between(repo, merge_base, sha)
    changed = {f.path for f in files}
    claimed = set(_claimed(completion))
    unchanged = sorted(claimed - changed)
    unclaimed = sorted(changed - claimed)
    if unchanged or unclaimed:
        parts = []
        if unchanged:
            parts.append(f"claimed but unchanged: {named(unchanged)}")
        if unclaimed:
            parts.append(f"changed but unclaimed: {named(unclaimed)}")
        gates.append(GitGate("files_match_diff", "failed", "; ".join(parts)))
    else:
        gates.append(
            GitGate(
                "files_match_diff",
                "passed",
                f"{len(changed)} file(s), as claimed, since {merge_base[:12]}",
            )
        )
    gates.append(_secrets_gate(repo, merge_base, sha, len(files)))
    return ClaimCheck(gates, repo, sha, merge_base, files)


def _secrets_gate(repo: Path, base: str, head: str, count: int) -> GitGate:
    """Whether the lines the change adds hold a secret (the worker's own output is scanned
    apart): a key committed to a branch is leaked however the completion reads."""
    # Here, not at the top: approving a run imports this module, and the console imports the
    # approval at start; the scanners' tables and pydantic cost its first paint.
    from core.contracts.diffparse import parse_diff
    from core.contracts.risk_gate import PATCH_CAP
    from core.contracts.secrets_scan import scan_diff

    patch, too_large = read_patch(repo, base, head, PATCH_CAP)
    if too_large:
        return GitGate("secrets_in_diff", "failed",
                       f"the diff is over {PATCH_CAP:,} bytes, so it was not scanned")  # fmt: skip
    findings = scan_diff(parse_diff(patch))
    if not findings:
        return GitGate("secrets_in_diff", "passed", f"no secret in the lines {count} file(s) add")
    shown = "; ".join(f"{f.kind} in {f.path} line {f.line}" for f in findings[:3])
    more = f" and {len(findings) - 3} more" if len(findings) > 3 else ""
    return GitGate("secrets_in_diff", "failed", f"{shown}{more} (masked wherever shown)")
