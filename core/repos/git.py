"""Running git: one function, no shell, an environment git cannot be steered by.

Every git call Jarvis makes goes through `git` (or `GitStream`, or `git_command` for a pipe).
The environment drops the ``GIT_*`` variables of whoever started the host (a ``GIT_DIR`` or
``GIT_WORK_TREE`` there would point every command at the wrong repository), never prompts (a URL
that wants a password fails instead of hanging the host), and speaks C so messages can be
quoted. Arguments that come from outside (refs, shas, paths) are passed after
``--end-of-options`` or ``--`` where git accepts them, so none is read as an option.

No call runs a program a repository's configuration names (`HARDENED`): hooks (the
``reference-transaction`` hook a ``update-ref`` would run, ``post-checkout``, ``pre-push``),
``core.fsmonitor`` (which ``status`` and ``diff`` would run), commit signing, automatic
maintenance, and replacement objects are all off, whatever the configuration says: a worker
that could write a repository's ``.git`` (one running unconfined) must not get the host to run
its programs. A call on what a worker wrote itself goes further (``isolated``): no system or
user configuration either, so a filter, merge or diff driver cannot even be defined for it —
such calls never run in the worker's repository, only in a host-owned one (`core.repos.view`).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from core.contracts.errors import preview

#: A git call that takes longer is ended: a hung git must not hang the host. Clones of large
#: repositories take longer, so they pass their own limit.
GIT_TIMEOUT_S = 120.0
#: How much of git's stderr a `GitError` quotes.
ERROR_CHARS = 600
#: Who Jarvis's own commits (merges) are by when the repository names nobody.
JARVIS_IDENTITY = {
    "GIT_AUTHOR_NAME": "Jarvis",
    "GIT_AUTHOR_EMAIL": "jarvis@localhost",
    "GIT_COMMITTER_NAME": "Jarvis",
    "GIT_COMMITTER_EMAIL": "jarvis@localhost",
}

_FULL_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


class GitError(Exception):
    """A git command failed; ``str()`` is one sentence quoting what git said.

    Attributes:
        code: git's exit code (-1 when it could not be started or timed out).
        stderr: git's own message, cut to `ERROR_CHARS`.
    """

    def __init__(self, message: str, code: int = -1, stderr: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.stderr = stderr


#: Options before every git command: the programs a configuration could make git run, off.
#: ``core.hooksPath=/dev/null`` finds no hook at all (every hook's path is under a file, not a
#: folder); the others are each a program or an action a configuration may name.
HARDENED = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.alternateRefsCommand=true",  # prints nothing: no alternate refs, no program
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "protocol.ext.allow=never",
)  # fmt: skip

#: What an isolated call adds to the environment: no configuration but the repository's own
#: (a host-owned one) and the command line's, no system attributes, no replacement objects.
ISOLATED = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
}


OWN_SESSION = True
"""git runs in a session of its own: a signal meant for the caller's process group (a terminal's
^C, a demo's or a supervisor's SIGTERM to the host's group) never kills a git call halfway, which
the caller would take for git failing. The caller stops after the call, as it would anyway; every
call has a timeout, so none outlives a killed caller for long."""


def git_command(args: Sequence[str]) -> list[str]:
    """The argument vector of ``git ARGS``, hardened (`HARDENED`)."""
    return ["git", *HARDENED, *args]


def git_env(base: Mapping[str, str] | None = None, *, isolated: bool = False) -> dict[str, str]:
    """The environment for a git call: no ``GIT_*`` from outside, no prompts, C messages, no
    replacement objects; with ``isolated``, no system or user configuration either."""
    env = {k: v for k, v in (os.environ if base is None else base).items()}
    for name in [k for k in env if k.startswith("GIT_")]:
        del env[name]
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", LC_ALL="C", LANGUAGE="C",
               GIT_NO_REPLACE_OBJECTS="1")  # fmt: skip
    if isolated:
        env.update(ISOLATED)
    return env


@dataclass(frozen=True)
class GitResult:
    code: int
    out: str
    err: str


def git(
    args: Sequence[str],
    *,
    cwd: Path,
    check: bool = True,
    timeout: float = GIT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    isolated: bool = False,
) -> GitResult:
    """Run ``git ARGS`` in ``cwd``, hardened (`HARDENED`).

    Args:
        check: raise `GitError` when git exits non-zero.
        env: extra variables (an identity for a commit, a ``GIT_DIR``), over `git_env`.
        isolated: no system or user configuration (`git_env`).

    Raises:
        GitError: git is missing, timed out, or (with ``check``) failed.
    """
    full_env = git_env(isolated=isolated)
    if env:
        full_env.update(env)
    try:
        done = subprocess.run(
            git_command(args),
            cwd=cwd,
            env=full_env,
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            check=False,
            start_new_session=OWN_SESSION,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (no `git` on PATH).") from None
    except NotADirectoryError:
        raise GitError(f"{cwd} is not a folder.") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"`git {args[0]}` took longer than {timeout:g} s and was stopped.") from None
    except OSError as exc:
        raise GitError(f"git could not be started in {cwd}: {exc.strerror or exc}.") from None
    if check and done.returncode != 0:
        said = " ".join(done.stderr.split())[:ERROR_CHARS] or f"exit code {done.returncode}"
        raise GitError(f"`git {args[0]}` failed: {said}", done.returncode, said)
    return GitResult(done.returncode, done.stdout, done.stderr)


def _not_started(cwd: Path, exc: OSError) -> GitError:
    if isinstance(exc, FileNotFoundError) and exc.filename in ("git", None):
        return GitError("git is not installed (no `git` on PATH).")
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return GitError(f"{cwd} is not a folder.")
    return GitError(f"git could not be started in {cwd}: {exc.strerror or exc}.")


class GitStream:
    """``git ARGS`` whose output is read as git writes it, for output too large to hold.

    The environment is `git`'s. Nothing is read before the caller asks: git blocks on a full
    pipe, so a reader that stops early has cost git only what it read plus a pipe's buffer.
    `stop` ends git (SIGKILL: a read-only command holds no lock) and may be called at any time;
    `finish`, once the output is read to its end, checks how git ended.

    Raises:
        GitError: git could not be started.
    """

    def __init__(self, args: Sequence[str], *, cwd: Path) -> None:
        self.args = list(args)
        # git's messages go to a file, not a pipe nobody reads while the output is: a pipe
        # that fills would block git, and git would block the reader.
        self._err: IO[bytes] = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                git_command(args),
                cwd=cwd,
                env=git_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._err,
                start_new_session=OWN_SESSION,
            )
        except OSError as exc:
            self._err.close()
            raise _not_started(cwd, exc) from None
        assert self._proc.stdout is not None
        self._out: IO[bytes] = self._proc.stdout
        self.stopped = False
        """`stop` ended git before it had written all its output."""

    @property
    def returncode(self) -> int | None:
        """git's exit code once it has ended (negative: the signal that ended it)."""
        return self._proc.returncode

    def readline(self, limit: int) -> bytes:
        """The next line of output with its line feed, at most ``limit`` bytes of it (a longer
        line comes in pieces); empty at the end."""
        return self._out.readline(limit)

    def finish(self, timeout: float = GIT_TIMEOUT_S) -> None:
        """Wait for git to end after its output was read to the end.

        Raises:
            GitError: git failed (its message quoted), or did not end within ``timeout``.
        """
        try:
            code = self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise GitError(f"`git {self.args[0]}` did not end and was stopped.") from None
        self._out.close()
        self._err.seek(0)
        said = " ".join(self._err.read(ERROR_CHARS * 4).decode("utf-8", "replace").split())
        self._err.close()
        if code != 0:
            said = said[:ERROR_CHARS] or f"exit code {code}"
            raise GitError(f"`git {self.args[0]}` failed: {said}", code, said)

    def stop(self) -> None:
        """End git now if it still runs, and let go of its pipes."""
        if self._proc.poll() is None:
            self._proc.kill()
            self.stopped = True
        self._out.close()
        self._proc.wait()
        self._err.close()


def is_full_sha(value: str) -> bool:
    return bool(_FULL_SHA.fullmatch(value))


def resolve_commit(repo: Path, rev: str) -> str | None:
    """The full sha of the commit ``rev`` names in ``repo``, or None when it names none."""
    if not rev or rev.startswith("-"):
        return None
    result = git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        cwd=repo,
        check=False,
    )
    sha = result.out.strip()
    return sha if result.code == 0 and is_full_sha(sha) else None


def toplevel(folder: Path) -> Path | None:
    """The root of the work tree ``folder`` is in, or None when it is in none.

    A folder inside a repository that is itself ignored or a bare repository's folder count as
    no work tree.
    """
    result = git(["rev-parse", "--show-toplevel"], cwd=folder, check=False)
    top = result.out.strip()
    return Path(top) if result.code == 0 and top else None


def git_dir(folder: Path) -> Path | None:
    """The repository (``.git`` folder or bare repository) ``folder`` belongs to, or None."""
    result = git(["rev-parse", "--absolute-git-dir"], cwd=folder, check=False)
    found = result.out.strip()
    return Path(found) if result.code == 0 and found else None


def common_dir(folder: Path) -> Path | None:
    """The repository's shared folder (the main ``.git`` of a linked worktree), or None."""
    result = git(
        ["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=folder, check=False
    )
    found = result.out.strip()
    return Path(found) if result.code == 0 and found else None


def split_z(text: str) -> list[str]:
    """The fields of git's ``-z`` output."""
    return [part for part in text.split("\0") if part]


#: How much of a path a sentence quotes.
_PATH_LIMIT = 4096


def repository_problem(path: Path) -> str | None:
    """Why ``path`` is not a git repository runs can start from, or None.

    It must be the top folder of a clone or a bare repository: a folder inside a clone would make
    every run's worktree start from the clone's top without saying so.
    """
    shown = preview(str(path), _PATH_LIMIT)
    if not path.exists():
        return f"{shown} does not exist."
    if not path.is_dir():
        return f"{shown} is not a folder."
    try:
        found = git(
            ["rev-parse", "--is-bare-repository", "--show-prefix", "--git-dir"],
            cwd=path,
            check=False,
        )
    except GitError as exc:
        return f"{shown} cannot be checked: {exc}"
    if found.code != 0:
        said = found.err.strip().splitlines()
        if said and "not a git repository" not in said[-1]:
            return f"{shown} is not a git repository (git said {preview(said[-1], 200)})."
        return f"{shown} is not a git repository."
    lines = found.out.splitlines()
    if len(lines) != 3:
        return f"{shown} is not a git repository (git rev-parse said {preview(found.out)})."
    bare, prefix, git_dir = lines
    if bare == "true":
        if (path / git_dir).resolve() == path.resolve():
            return None
        inside = preview(str((path / git_dir).resolve()), _PATH_LIMIT)
        return f"{shown} is inside the bare repository {inside}."
    if prefix:
        top = toplevel(path)
        inside = preview(str(top) if top else "a repository", _PATH_LIMIT)
        return f"{shown} is a folder inside {inside}, not the top of a repository."
    return None
