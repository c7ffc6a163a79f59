"""Real git repositories for tests: made in a temporary folder, committed by a test identity."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from core.repos.git import git

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.test",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.test",
}


def run_git(repo: Path, *args: str) -> str:
    return git(list(args), cwd=repo, env=IDENTITY).out.strip()


def commit(repo: Path, files: Mapping[str, str | None], message: str = "change") -> str:
    """Write (or, for None, delete) ``files`` and commit them; returns the commit's sha."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    run_git(repo, "add", "--all")
    run_git(repo, "commit", "--quiet", "--allow-empty", "-m", message)
    return run_git(repo, "rev-parse", "HEAD")


def make_repo(
    path: Path, files: Mapping[str, str] | None = None, *, branch: str = "main", bare: bool = False
) -> Path:
    """A repository at ``path`` with one commit of ``files`` on ``branch``.

    With ``bare``, a bare repository holding that commit (made by cloning a scratch one).
    """
    work = path.with_name(path.name + "-work") if bare else path
    work.mkdir(parents=True)
    run_git(work, "init", "--quiet", "-b", branch)
    commit(work, files or {"README.md": "# project\n", "src/app.py": "VALUE = 1\n"}, "initial")
    if bare:
        run_git(path.parent, "clone", "--quiet", "--bare", str(work), str(path))
        return path
    return path
