"""A host-owned repository through which the host reads what a run's worker committed.

A run's repository is the worker's to write, its configuration included, so the host never runs
git in it (`core.repos.refs_read`). It reads the run's work through a *view*: a bare repository
the host made itself (``<workspace>/git/RUN_ID.git``, configuration as ``git init`` wrote it),
whose object store borrows the run's objects and, for a configured repository, the main
repository's (``objects/info/alternates``: objects are data, read and checked by their hash),
and whose refs are a copy of the run's, written by the host. Every call on it is isolated (no
system or user configuration, `core.repos.git.git`), so no filter, merge or diff driver exists
for it, and git finds no hook or fsmonitor to run.

What is uncommitted in the run's work tree is asked of the view too, the work tree named
(``GIT_WORK_TREE``), against an index the host builds from the commit (``read-tree``), never
the worker's index. The run's own ``info/exclude`` is copied in as patterns, so what its agent
keeps out of its commits stays out here. Commits leave the view for the main repository by a
fetch the host runs in the main repository (`bring`): the main repository gets the run's
branch only through the host.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.contracts.names import run_ref_part
from core.repos.git import JARVIS_IDENTITY, GitResult, git, split_z
from core.repos.refs_read import RepoRefs, read_small

#: Where the views live, under the workspace.
VIEWS_DIR = "git"
#: The run's ``info/exclude`` copied at most this far.
MAX_EXCLUDE_BYTES = 256 * 1024
_CHECK_INDEX = "index.check"


def view_dir(workspace_root: Path, run_id: str) -> Path:
    """A run's view: one folder per run id, which names no path outside the folder."""
    return workspace_root / VIEWS_DIR / f"{run_ref_part(run_id)}.git"


def pin(run_id: str, what: str) -> str:
    """A ref of the main repository that keeps a run's commits: ``refs/jarvis/RUN/WHAT``."""
    return f"refs/jarvis/{run_ref_part(run_id)}/{what}"


def objects_dir(repo: Path) -> Path:
    """The object store of the repository ``repo`` (a bare one, or a work tree's ``.git``)."""
    found = git(["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=repo).out
    return Path(found.strip()) / "objects"


class RunView:
    """The view at ``path``, borrowing the object stores ``objects``."""

    def __init__(self, path: Path, objects: Sequence[Path]) -> None:
        self.path = path
        self.objects = [p for p in objects if p.is_dir()]

    def git(
        self,
        args: Sequence[str],
        *,
        work_tree: Path | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
        stdin: str | None = None,
    ) -> GitResult:
        """``git ARGS`` on the view, isolated; in ``work_tree`` (named to git) when given."""
        full = {"GIT_DIR": str(self.path), **(env or {})}
        if work_tree is not None:
            full["GIT_WORK_TREE"] = str(work_tree)
        return git(args, cwd=work_tree or self.path, env=full, check=check, stdin=stdin,
                   isolated=True)  # fmt: skip

    def ensure(self) -> None:
        """Make the view if it is not there yet, and point it at its object stores."""
        if not (self.path / "objects").is_dir():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(self.path, ignore_errors=True)  # half made by a host killed mid-way
            git(["init", "--quiet", "--bare", "--template=", "--", str(self.path)],
                cwd=self.path.parent, isolated=True)  # fmt: skip
            # Commits are fetched from it by their sha (`bring`), reachable or not.
            self.git(["config", "uploadpack.allowAnySHA1InWant", "true"])
        info = self.path / "objects" / "info"
        info.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{p.resolve()}\n" for p in self.objects)
        _write(info / "alternates", text)

    def set_refs(self, refs: Mapping[str, str]) -> None:
        """Make the view's refs exactly ``refs`` (full name → sha), as one ``packed-refs``."""
        shutil.rmtree(self.path / "refs", ignore_errors=True)
        for folder in ("heads", "tags"):
            (self.path / "refs" / folder).mkdir(parents=True, exist_ok=True)
        lines = [f"{sha} {name}\n" for name, sha in sorted(refs.items())]
        _write(self.path / "packed-refs", "# pack-refs with: peeled sorted \n" + "".join(lines))

    def take(self, refs: RepoRefs) -> None:
        """Copy a run repository's refs in, and its ``info/exclude`` patterns."""
        self.set_refs(refs.all_direct())
        exclude = read_small(refs.git_dir / "info" / "exclude", MAX_EXCLUDE_BYTES) or b""
        (self.path / "info").mkdir(exist_ok=True)
        _write(self.path / "info" / "exclude", exclude.decode("utf-8", "replace"))

    def uncommitted(self, work_tree: Path, head: str) -> list[str]:
        """Paths of ``work_tree`` that differ from commit ``head``: changed, deleted or
        untracked (and not ignored), as ``git status`` would list them."""
        index = self.path / _CHECK_INDEX
        index.unlink(missing_ok=True)
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            self.git(["read-tree", head], work_tree=work_tree, env=env)
            # Stats the files and hashes those whose stat the index does not know: all of
            # them, the index being new. Exit 1 says some differ, which is what is asked.
            self.git(["update-index", "-q", "--refresh"], work_tree=work_tree, env=env,
                     check=False)  # fmt: skip
            changed = self.git(["diff-files", "--name-only", "-z"], work_tree=work_tree, env=env)
            others = self.git(["ls-files", "--others", "--exclude-standard", "-z"],
                              work_tree=work_tree, env=env)  # fmt: skip
        finally:
            index.unlink(missing_ok=True)
        return sorted(set(split_z(changed.out)) | set(split_z(others.out)))

    def snapshot(self, work_tree: Path, head: str, note: str) -> str | None:
        """A commit of ``work_tree`` as it is (untracked files too, ignored ones not), on top
        of ``head``; None when nothing differs. What ``git stash -u`` would keep, made here."""
        index = self.path / _CHECK_INDEX
        index.unlink(missing_ok=True)
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            self.git(["read-tree", head], work_tree=work_tree, env=env)
            self.git(["add", "--all", "--", "."], work_tree=work_tree, env=env)
            tree = self.git(["write-tree"], work_tree=work_tree, env=env).out.strip()
        finally:
            index.unlink(missing_ok=True)
        if tree == self.git(["rev-parse", f"{head}^{{tree}}"]).out.strip():
            return None
        return self.git(["commit-tree", tree, "-p", head], env=JARVIS_IDENTITY,
                        stdin=note + "\n").out.strip()  # fmt: skip

    def bring(self, main: Path, sha: str, ref: str) -> None:
        """Fetch commit ``sha`` (and what it needs) from the view into the main repository,
        kept there by ``ref`` (made or moved to it).

        Isolated: the fetch runs ``upload-pack`` in the view, whose configuration is the
        host's; a user configuration could name a program for it to run.
        """
        git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", str(self.path),
             f"+{sha}:{ref}"], cwd=main, isolated=True)  # fmt: skip


def _write(path: Path, text: str) -> None:
    """Write ``text`` to the host-owned ``path`` whole (a temporary file renamed over it)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, "utf-8")
    os.replace(temp, path)
