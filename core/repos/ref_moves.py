"""Branches of the main repository that moved while a run ran.

The main repository's branches are recorded when each attempt starts (`branches`, kept in the
attempt's ``run_git`` row). When its completion is gated, the host compares them with the
branches as they are (`ref_gate`): every branch other than the run's own that moved, appeared or
went is named, and one that now holds a commit of this run fails the gate — the run's commits
reach the main repository only through the host, into the run's own branch, so another branch
holding one was moved by something else (a worker running unconfined, say, with ``git
update-ref refs/heads/main``). Other moves (an operator's commits, another run's approval) are
only reported. A commit that is another run's work too (two runs that made the same commit, as
deterministic workers can) is not counted: the host pinned it for that run
(``refs/jarvis/OTHER/…``) before moving any branch to it.

What an unconfined worker writes in the main repository can forge anything there, pins
included: this gate is a tripwire for such a run, not a guarantee. The sandbox is the guarantee
(docs/agents.md, Confinement).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.repos.claims import GitGate, named
from core.repos.git import git, is_full_sha
from core.repos.view import pin

REF_GATE = "refs_unmoved"
"""The gate's name: after the git gates, for runs in a configured repository."""
#: Branches recorded at most: a repository with more is recorded this far.
MAX_BRANCHES = 5_000
#: Commits compared at most on each side: enough to find a run's commits on a moved branch.
MAX_COMMITS = 10_000


def branches(repo: Path) -> dict[str, str]:
    """The repository's branches (``refs/heads/…``) and the commit each is at."""
    out = git(["for-each-ref", f"--count={MAX_BRANCHES}", "--format=%(objectname) %(refname)",
               "refs/heads/"], cwd=repo).out  # fmt: skip
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition(" ")
        if is_full_sha(sha) and name:
            found[name] = sha
    return found


@dataclass(frozen=True)
class Move:
    name: str
    before: str | None
    after: str | None

    def text(self) -> str:
        short = self.name.removeprefix("refs/heads/")
        if self.before is None:
            return f"{short} appeared at {str(self.after)[:12]}"
        if self.after is None:
            return f"{short} went (it was at {self.before[:12]})"
        return f"{short} moved {self.before[:12]} → {self.after[:12]}"


def moves(before: Mapping[str, str], after: Mapping[str, str], own: str) -> list[Move]:
    """Branches other than ``own`` (a full ref name) that differ between the two records."""
    names = sorted((set(before) | set(after)) - {own})
    return [
        Move(name, before.get(name), after.get(name))
        for name in names
        if before.get(name) != after.get(name)
    ]


def _commits(
    repo: Path, tips: list[str], exclude: list[str], others: Sequence[str] = ()
) -> set[str]:
    """Commits reachable from ``tips`` but not from ``exclude`` (shas) nor ``others`` (rev-list
    ``--exclude``/``--glob`` options naming refs)."""
    if not tips:
        return set()
    out = git(["rev-list", f"--max-count={MAX_COMMITS}", *tips, "--not", *exclude, *others,
               "--"], cwd=repo, check=False).out  # fmt: skip
    return {line.strip() for line in out.splitlines() if is_full_sha(line.strip())}


def other_runs_pins(run_id: str) -> list[str]:
    """rev-list options naming the refs the host pinned for runs other than ``run_id``."""
    return [f"--exclude={pin(run_id, '*')}", "--glob=refs/jarvis/*"]


def ref_gate(
    repo: Path,
    before: Mapping[str, str],
    *,
    own: str,
    head: str | None,
    base_commit: str | None,
    run_id: str,
) -> GitGate:
    """Whether branches of ``repo`` other than the run's own (``own``, full name) moved since
    ``before``, and whether one of them holds a commit of the run (``head`` and what leads to
    it from the branches as they were and the base, less what is other runs' work too)."""
    found = moves(before, branches(repo), own)
    if not found:
        return GitGate(REF_GATE, "passed", "no other branch moved while the run ran")
    told = named([m.text() for m in found])
    # The branches as they were, and the base: what the run started from is not its work.
    exclude = [sha for name, sha in before.items() if name != own]
    exclude += [base_commit] if base_commit else []
    mine = _commits(repo, [head], exclude, other_runs_pins(run_id)) if head else set()
    landed = [m for m in found if m.after and mine & _commits(repo, [m.after], exclude)]
    if landed:
        where = ", ".join(m.name.removeprefix("refs/heads/") for m in landed)
        return GitGate(
            REF_GATE,
            "failed",
            f"{where} holds this run's commits, put there outside Jarvis while it ran ({told})",
        )
    return GitGate(REF_GATE, "passed", f"while the run ran: {told}; none holds its commits")
