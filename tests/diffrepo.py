"""Runs with a real diff: a repository whose commits a ``run_git`` row names, as the host leaves
it once a completion has been checked. Commits carry fixed dates, so their shas (which the
diff's title shows) are the same on every machine."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from core.repos import records
from core.repos.claims import ClaimCheck, changes_between
from core.repos.git import git
from core.repos.worktrees import Worktree
from core.store.sqlite_store import SqliteStore
from tests.gitrepo import IDENTITY

#: Fixed author and commit dates: the same tree and parent then make the same sha.
DATED = {
    **IDENTITY,
    "GIT_AUTHOR_DATE": "2026-01-02T09:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-02T09:00:00+00:00",
}

#: A fake Anthropic key: masked wherever the diff is shown.
FAKE_KEY = "sk-ant-api03-" + "Ab3dE5fG7h" * 9
#: Terminal escapes (retitle, clear screen, a hyperlink) and Rich markup in one line of a file.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil.test\x1b\\link\x1b]8;;\x1b\\ [bold]x[/]"

BASE_FILES = {
    "README.md": "# fleet engine\n",
    "src/app.py": "VALUE = 1\n\n\ndef retries():\n    return VALUE\n",
}


def _git(repo: Path, *args: str) -> str:
    return git(list(args), cwd=repo, env=DATED).out.strip()


def dated_commit(repo: Path, files: Mapping[str, str], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def change_files(long_lines: int = 60) -> dict[str, str]:
    """What the run's commit writes: a fix, a file of hostile text, a script a gate names as
    unclaimed, and a long file to scroll through."""
    return {
        "src/app.py": "VALUE = 3\n\n\ndef retries():\n    return VALUE + 1\n",
        "notes/hostile.txt": f"{HOSTILE}\nkey = '{FAKE_KEY}'\n\tindented by a tab\n",
        "scripts/deploy.sh": "#!/bin/sh\nset -eu\nrsync -a build/ prod:/srv/app/\n",
        "docs/long.md": "".join(f"line {n} of the long file\n" for n in range(1, long_lines + 1)),
    }


def build_diff_repo(path: Path, *, long_lines: int = 60) -> tuple[Path, str, str]:
    """A repository at ``path``: a first commit on main, then the run's; returns (repo, base,
    head)."""
    path.mkdir(parents=True)
    _git(path, "init", "--quiet", "-b", "main")
    base = dated_commit(path, BASE_FILES, "initial")
    _git(path, "checkout", "--quiet", "-b", "jarvis/run")
    head = dated_commit(path, change_files(long_lines), "fix the retry counter")
    _git(path, "checkout", "--quiet", "main")
    return path, base, head


def record_diff(
    store: SqliteStore,
    run_id: str,
    repo: Path,
    base: str,
    head: str,
    *,
    attempt: int = 1,
    configured: bool = True,
    checkout: Path | None = None,
) -> None:
    """Record what the host would for ``run_id``'s attempt: its worktree of a configured
    repository (``configured``), then the check of its completion, commit ``head`` since
    ``base``."""
    if configured:
        worktree = Worktree(
            path=checkout or repo.parent / "checkouts" / run_id,
            repo_dir=repo,
            branch="jarvis/run",
            base_ref="main",
            base_commit=base,
            start_commit=base,
        )
        records.record_worktree(store, run_id, attempt, "acme-labs/fleet-engine", worktree)
    check = ClaimCheck([], repo, head, base, changes_between(repo, base, head))
    with store.transaction() as tx:
        records.record_check(tx, run_id, attempt, str(repo), check)
