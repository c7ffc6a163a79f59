"""The flags Jarvis adds to an agent's command line so that it works unattended in a run's
checkout: what the agent needs whatever the site's policy, so that a profile holding only the
agent, its program, its model and the settings pointing it at its model service is enough.

Codex sandboxes the commands it runs itself. Its default in ``exec`` is ``read-only``, and its
``workspace-write`` keeps every ``.git`` under a writable root read-only and everything outside
the checkout unwritable (codex 0.171.0, run live): a commit then fails on ``index.lock``, which
lives in the repository's git directory (``<checkout>/.git``, or for a linked worktree
``<repository>/worktrees/NAME`` beside the shared objects and refs). So Jarvis chooses the
sandbox from how the run is confined (``JARVIS_SANDBOX``, set by the host: ``bwrap`` when
Jarvis's own sandbox confines the worker, ``none`` or absent otherwise):

- ``bwrap``: Jarvis confines the worker to its checkout already, so Codex's own sandbox is
  relaxed (``--sandbox=danger-full-access``): one sandbox inside another is not needed, and a
  user namespace inside bubblewrap is often not allowed;
- ``none``: ``--sandbox=workspace-write``, and the git metadata a commit writes made writable
  with ``--add-dir``: the git directory, and for a linked worktree the shared ``objects``,
  ``refs`` and ``logs``.

A profile whose ``args`` already choose a sandbox keeps its choice; the git metadata is still
added, so that a commit works under it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

#: The variable the host sets in every worker's environment: ``bwrap`` or ``none``.
SANDBOX_ENV: Final = "JARVIS_SANDBOX"
#: Options by which a codex command line chooses its sandbox itself.
_CODEX_SANDBOX_FLAGS: Final = (
    "-s",
    "--sandbox",
    "--dangerously-bypass-approvals-and-sandbox",
)


def sandbox_mode(env: Mapping[str, str]) -> str:
    """How the host confines this worker: ``bwrap``, else ``none`` (absent means none)."""
    return "bwrap" if env.get(SANDBOX_ENV, "").strip() == "bwrap" else "none"


def unattended_args(
    agent: str, checkout: Path, given: Sequence[str], env: Mapping[str, str]
) -> list[str]:
    """The options Jarvis adds before the profile's own ``given`` ones for ``agent``."""
    if agent == "codex":
        return codex_args(checkout, given, sandbox_mode(env))
    return []


def _chooses_sandbox(given: Sequence[str]) -> bool:
    """Whether codex options ``given`` choose a sandbox (a flag, or ``-c sandbox_mode=…``)."""
    for i, arg in enumerate(given):
        if arg.split("=", 1)[0] in _CODEX_SANDBOX_FLAGS:
            return True
        if arg.startswith("-s") and not arg.startswith("--"):  # ``-sworkspace-write``
            return True
        if arg in ("-c", "--config"):
            setting = given[i + 1] if i + 1 < len(given) else ""
        elif arg.startswith("--config="):
            setting = arg.removeprefix("--config=")
        elif arg.startswith("-c") and not arg.startswith("--"):
            setting = arg.removeprefix("-c")
        else:
            continue
        if setting.strip().startswith("sandbox_mode"):
            return True
    return False


def codex_args(checkout: Path, given: Sequence[str], sandbox: str) -> list[str]:
    """Codex's sandbox for a run confined by ``sandbox``, and its git metadata made writable."""
    chosen = _chooses_sandbox(given)
    if sandbox == "bwrap" and not chosen:
        return ["--sandbox=danger-full-access"]
    added = [f"--add-dir={path}" for path in git_metadata(checkout)]
    return added if chosen else ["--sandbox=workspace-write", *added]


def git_metadata(checkout: Path) -> list[Path]:
    """The folders a commit in ``checkout`` writes: its git directory, and when that is a
    linked worktree's, the repository's shared ``objects``, ``refs`` and ``logs``. None when
    ``checkout`` holds no repository."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"],
            cwd=checkout, capture_output=True, text=True, timeout=60,
            start_new_session=True,  # a stop signal to the host's group is the host's alone
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 2:
        return []
    git_dir, common = Path(lines[0]), Path(lines[1])
    found = [git_dir]
    if common != git_dir:
        found += [common / name for name in ("objects", "refs", "logs")]
    return [path for path in found if path.is_dir()]
