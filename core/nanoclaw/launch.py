"""Starting a NanoClaw runner for a run: its command line, its environment, its stdin, and the
``input/_close`` sentinel that ends it.

The runner finds its IPC folder at ``/workspace/ipc`` and works in ``/workspace/group``. When the
profile's command is a container (``docker run …``, ``podman run …``, Apple's ``container run
…``), the host adds, right after ``run`` (so options of the profile's own that follow win):

- ``-v <data/ipc/<lane>>:/workspace/ipc`` and ``-v <the run's worktree>:/workspace/group``;
- ``-v <objects>:<objects>:ro``: the configured repository's object store at its own path,
  read-only, since the run's own repository borrows its objects from there (its
  ``objects/info/alternates``); for a checkout that is a linked worktree (as runs had before),
  ``-v <git dir>:<git dir>``, the repository's git directory its ``.git`` file points to;
  a checkout whose path holds a ``:`` (the option's separator; a run id such as ``nc:run:a8``)
  is mounted through a link named after the run id with every such character percent-encoded
  (`mount_source`), so the id itself stays as it is everywhere else;
- ``--user <uid>:<gid> -e HOME=/home/node`` when the host's user is neither root nor 1000 (the
  image's ``node`` user), as NanoClaw does, so files written in the mounts stay the host's;
- ``-e NAME`` for every variable of the profile's ``env`` (the value reaches the container from
  the client's environment, never on its command line).

A plain process gets the lane's IPC folder in ``NANOCLAW_IPC_DIR`` and runs in the worktree; the
runner must be pointed at that folder (NanoClaw's own runner has ``/workspace/ipc`` built in).

The runner's agent waits for follow-up messages after it answers, until ``input/_close`` appears.
NanoClaw's host writes that empty file right after the first frame with a result, for a worker,
and stops the container if it is still there `CLOSE_GRACE_S` later; Jarvis does the same.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.contracts.names import run_ref_part
from core.nanoclaw.container_input import (
    DEFAULT_ASSISTANT,
    container_input,
    encode,
    resolve_secrets,
)
from core.nanoclaw.prompt import worker_prompt

CONTAINER_IPC = "/workspace/ipc"
CONTAINER_GROUP = "/workspace/group"
#: Programs taken for a container runtime when their command has a ``run`` word.
RUNTIMES = frozenset({"docker", "podman", "container", "nerdctl"})
IPC_DIR_ENV = "NANOCLAW_IPC_DIR"
INPUT = "input"
CLOSE = "_close"
#: How long a runner has to exit after ``input/_close`` before the host stops it.
CLOSE_GRACE_S = 15.0
#: The uid of the ``node`` user in NanoClaw's images.
IMAGE_UID = 1000
#: The workspace folder holding the links a container mounts for checkouts it cannot name.
MOUNTS = "mounts"


class LaunchError(ValueError):
    """The runner cannot be started as configured; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class Launch:
    """What the host starts."""

    argv: list[str]
    env: dict[str, str]
    """Added to the worker's environment."""
    stdin: bytes
    """The task, written to its stdin, which is then closed."""


def run_word(command: Sequence[str]) -> int | None:
    """Where the ``run`` word of a container command is (after the program), or None."""
    for at, word in enumerate(command[1:], 1):
        if word == "run":
            return at
    return None


def looks_like_container(command: Sequence[str]) -> bool:
    """Whether ``command`` starts a container: a known runtime, and a ``run`` word."""
    return os.path.basename(command[0]) in RUNTIMES and run_word(command) is not None


def git_dir_of(checkout: Path) -> Path | None:
    """The git directory a linked worktree's ``.git`` file points into (the repository's
    common git directory), or None when the checkout is not a linked worktree."""
    try:
        text = (checkout / ".git").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # a folder (a clone of its own) or nothing: no link to follow
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    if not gitdir.is_absolute():
        gitdir = checkout / gitdir
    try:
        common = (gitdir / "commondir").read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return gitdir.resolve()
    found = Path(common)
    return (found if found.is_absolute() else gitdir / found).resolve()


def _mount(source: Path | str, target: str, *, read_only: bool = False) -> list[str]:
    if ":" in str(source) or ":" in target:
        raise LaunchError(
            f"{source} cannot be mounted into the container: its path holds a ':' "
            "(the -v option's separator)."
        )
    return ["-v", f"{source}:{target}" + (":ro" if read_only else "")]


def mount_source(checkout: Path, run_id: str, mounts_dir: Path | None) -> Path:
    """What a container mounts as ``/workspace/group``: the checkout, or, when its path holds
    a ``:`` (which ``-v`` takes for its separator), a link to it in ``mounts_dir`` named
    `run_ref_part` of the run id (``nc:run:a8`` → ``nc%3Arun%3Aa8``).

    That name is stable (the run's every attempt mounts the same path) and never shared (the
    encoding is one to one, and an id that needs none has no link). The link is made anew
    each time, so one left by an earlier attempt, or pointing elsewhere, is replaced.

    Raises:
        OSError: the link cannot be made.
    """
    if mounts_dir is None or ":" not in str(checkout):
        return checkout
    mounts_dir.mkdir(exist_ok=True)
    alias = mounts_dir / run_ref_part(run_id)
    temp = mounts_dir / f".{alias.name}.{os.getpid()}.tmp"
    temp.unlink(missing_ok=True)
    os.symlink(checkout.absolute(), temp)
    os.replace(temp, alias)  # a folder there (not the host's) fails, and the start with it
    return alias


def container_options(
    runtime: str,
    *,
    ipc_dir: Path,
    checkout: Path,
    env_names: Sequence[str],
    uid: int,
    gid: int,
    shared: Sequence[Path] = (),
    group_source: Path | None = None,
) -> list[str]:
    """The options the host adds after ``run`` (see the module docstring); ``shared`` are the
    object stores the run's repository borrows, mounted read-only; ``group_source`` is what is
    mounted as ``/workspace/group`` when it is not the checkout (`mount_source`)."""
    source = checkout if group_source is None else group_source
    options = [*_mount(ipc_dir, CONTAINER_IPC), *_mount(source, CONTAINER_GROUP)]
    git_dir = git_dir_of(checkout)
    if git_dir is not None:
        options += _mount(git_dir, str(git_dir))
    for folder in shared:
        options += _mount(folder, str(folder), read_only=True)
    if runtime != "container" and uid not in (0, IMAGE_UID):
        options += ["--user", f"{uid}:{gid}", "-e", "HOME=/home/node"]
    for name in env_names:
        options += ["-e", name]
    return options


def build_launch(
    command: Sequence[str],
    *,
    container: bool,
    run_id: str,
    lane: str,
    dispatch: Mapping[str, Any],
    criteria: Sequence[Mapping[str, Any]],
    ipc_dir: Path,
    checkout: Path,
    profile_env: Mapping[str, str],
    host_env: Mapping[str, str],
    secret_names: Sequence[str] = (),
    assistant_name: str | None = None,
    shared: Sequence[Path] = (),
    mounts_dir: Path | None = None,
) -> Launch:
    """The command, environment and stdin of a run's runner (``shared``: the object stores
    its checkout's repository borrows, which a container gets read-only).

    ``mounts_dir`` is where the link to a checkout whose path holds a ``:`` is made
    (`mount_source`); without it such a checkout cannot be mounted.

    Raises:
        LaunchError: a container command without a ``run`` word, or a path that cannot be
            mounted.
        OSError: the link to the checkout cannot be made.
    """
    argv = list(command)
    env: dict[str, str] = {}
    if container:
        at = run_word(argv)
        if at is None:
            raise LaunchError(
                f"{' '.join(argv[:3])} … has no 'run' word: the host adds the container's "
                "mounts after it."
            )
        options = container_options(
            os.path.basename(argv[0]),
            ipc_dir=ipc_dir,
            checkout=checkout,
            env_names=sorted(profile_env),
            uid=os.getuid(),
            gid=os.getgid(),
            shared=shared,
            group_source=mount_source(checkout, run_id, mounts_dir),
        )
        argv[at + 1 : at + 1] = options
        workdir = CONTAINER_GROUP
    else:
        env[IPC_DIR_ENV] = str(ipc_dir)
        workdir = str(checkout)
    session = dispatch.get("session_id")
    doc = container_input(
        prompt=worker_prompt(dispatch, criteria, run_id, workdir=workdir),
        run_id=run_id,
        lane=lane,
        session_id=session if isinstance(session, str) else None,
        assistant_name=assistant_name or DEFAULT_ASSISTANT,
        secrets=resolve_secrets(secret_names, profile_env, host_env),
    )
    return Launch(argv, env, encode(doc))


def _input_dir_fd(ipc_dir: Path) -> int:
    """The lane's ``input/`` folder, opened without following a link (made when missing)."""
    lane = os.open(ipc_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            os.mkdir(INPUT, 0o755, dir_fd=lane)
        except FileExistsError:
            pass
        mode = os.stat(INPUT, dir_fd=lane, follow_symlinks=False).st_mode
        if not stat.S_ISDIR(mode):
            raise OSError(f"{ipc_dir / INPUT} is not a folder")
        return os.open(INPUT, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=lane)
    finally:
        os.close(lane)


def prepare_input(ipc_dir: Path) -> None:
    """Make the lane's ``input/`` folder, as NanoClaw's host does before a start.

    Raises:
        OSError: it cannot be made, or is a link or a file.
    """
    os.close(_input_dir_fd(ipc_dir))


def request_close(ipc_dir: Path) -> None:
    """Write the empty ``input/_close`` the runner ends on (directly, as NanoClaw does).

    The lane folder is written by the runner too: nothing on the way is followed if it is a
    link, and an existing ``_close`` is left as it is.

    Raises:
        OSError: it cannot be written.
    """
    folder = _input_dir_fd(ipc_dir)
    try:
        fd = os.open(CLOSE, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644, dir_fd=folder)
        os.close(fd)
    finally:
        os.close(folder)
