"""Confining a worker with bubblewrap: it may write its run's checkout and little else.

Every worker runs under ``bwrap`` where the machine has a bubblewrap that works
(``[workers] sandbox`` / ``[workers.NAME] sandbox``: ``"bwrap"`` or ``"none"``; unset, bwrap
when it works here). Inside, the whole file system is mounted read-only, and writable on top of
it are only:

- the run's checkout (its own repository, ``.git`` included: `core.repos.run_repo`);
- the run's IPC progress folder and its lane's steer folder (acknowledgements);
- a HOME and a TMPDIR of the run's own, under ``<workspace>/sandbox/RUN_ID/``;
- for a ``nanoclaw`` profile, its lane's IPC folder, which NanoClaw's runner writes;
- the folders ``writable`` names (``[workers]`` and the profile's: an agent's login or cache).

So the operator's checkouts, other runs' checkouts, the main repository (hooks, configuration,
refs), ``~/.ssh`` and ``/tmp`` are read-only: a write there fails with "Read-only file system",
which the worker's own output (its log) shows. The network stays. The worker gets
``JARVIS_SANDBOX=bwrap`` (or ``none``), so an agent's adapter can set the agent's own sandbox
not to fight this one.

Processes: bwrap runs the worker in a PID namespace of its own (``--unshare-pid``) under an
init that ends the namespace, and everything in it, when the worker exits; ``--die-with-parent``
ends it too when the host dies, even by SIGKILL. The host starts bwrap as the leader of a
process group that the sandbox's processes share, as an unconfined worker's would: killing the
group kills everything. bwrap's outer process dies of a SIGINT or SIGTERM, and its death kills
the sandbox at once, so the host's gentler signals (a budget's SIGINT, a stop's SIGTERM) go to
every member of the group but that leader (`signal_confined`): the worker gets to wrap up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Mode = Literal["bwrap", "none"]
MODES: tuple[Mode, ...] = ("bwrap", "none")
SANDBOX_ENV = "JARVIS_SANDBOX"
#: Where each run's private HOME and TMPDIR are, under the workspace.
SANDBOX_DIR = "sandbox"
#: A probe of bwrap that takes longer is taken for one that does not work.
PROBE_TIMEOUT_S = 10.0
#: The environment's folders a program writes into, by the XDG convention: left out of a
#: confined worker's environment (they would name the operator's home, read-only inside), so
#: they default under its own HOME — unless the profile sets them itself.
XDG_DIRS = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
            "XDG_RUNTIME_DIR")  # fmt: skip

#: The sandbox, before the writable folders: all read-only, a /dev and a /proc of its own, a
#: private /dev/shm, a PID namespace, gone with its parent.
BASE_ARGS = (
    "--die-with-parent",
    "--unshare-pid",
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/dev/shm",
)  # fmt: skip


class SandboxUnavailable(Exception):
    """A profile asks for bubblewrap where it cannot run; ``str()`` says why."""


@dataclass(frozen=True)
class Probe:
    """Whether bubblewrap works on this machine."""

    program: str | None
    """Where ``bwrap`` is, when it works."""
    problem: str | None = None
    """Why it cannot be used (not installed, or it cannot make a sandbox here)."""


def probe(path: str | None = None) -> Probe:
    """Find ``bwrap`` on PATH (``path``: another search path) and make one sandbox with it."""
    found = shutil.which("bwrap", path=path)
    if found is None:
        return Probe(None, "bubblewrap is not installed (no bwrap on PATH)")
    try:
        done = subprocess.run(
            [found, *BASE_ARGS, "--", "true"], capture_output=True, text=True,
            errors="replace", timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
            start_new_session=True,  # a stop signal to the host's group is the host's alone
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(None, f"{found} cannot be run: {exc}")
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return Probe(None, f"{found} cannot make a sandbox here: {said[:200]}")
    return Probe(found)


def choose(configured: Mode | None, found: Probe) -> tuple[Mode, str | None]:
    """The sandbox a worker runs in, and why it runs unconfined (None when it does not).

    Raises:
        SandboxUnavailable: ``bwrap`` is asked for and cannot be used.
    """
    if configured == "none":
        return "none", 'the profile says sandbox = "none"'
    if found.program is not None:
        return "bwrap", None
    if configured == "bwrap":
        raise SandboxUnavailable(f'the profile asks for sandbox = "bwrap", but {found.problem}')
    return "none", found.problem


def run_dirs(workspace_root: Path, run_id: str) -> tuple[Path, Path]:
    """The run's private HOME and TMPDIR (made, private to the user)."""
    base = workspace_root / SANDBOX_DIR / run_id
    home, tmp = base / "home", base / "tmp"
    for folder in (home, tmp):
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
    return home, tmp


def remove_run_dirs(workspace_root: Path, run_id: str) -> None:
    shutil.rmtree(workspace_root / SANDBOX_DIR / run_id, ignore_errors=True)


def wrap(bwrap: str, command: Sequence[str], *, writable: Sequence[Path], cwd: Path) -> list[str]:
    """``command`` run by ``bwrap`` in the sandbox, ``writable`` folders (which must exist)
    mounted writable at their own paths, starting in ``cwd``."""
    binds: list[str] = []
    for folder in dict.fromkeys(str(p) for p in writable):
        binds += ["--bind", folder, folder]
    return [bwrap, *BASE_ARGS, *binds, "--chdir", str(cwd), "--", *command]


def confined_env(
    env: Mapping[str, str], *, home: Path, tmp: Path, keep: Collection[str] = ()
) -> dict[str, str]:
    """A confined worker's environment: its own HOME and TMPDIR; the XDG folders the host's
    environment names left out (those ``keep``, the profile's own, stay)."""
    out = {k: v for k, v in env.items() if k not in XDG_DIRS or k in keep}
    out.update(HOME=str(home), TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp))
    out[SANDBOX_ENV] = "bwrap"
    return out


def signal_confined(leader: int, sig: int) -> None:
    """Send ``sig`` to every process of the group ``leader`` leads but the leader (bwrap's
    outer process, which a SIGINT or SIGTERM would kill, and the sandbox with it)."""
    for pid in _group_members(leader):
        if pid != leader:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _group_members(pgid: int) -> list[int]:
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid):
            found.append(int(name))
    return found


@dataclass(frozen=True)
class Confined:
    """How a worker is started: its command and environment, confined or not."""

    argv: list[str]
    env: dict[str, str]
    mode: Mode
    unconfined: str | None
    """Why it runs unconfined (None when it does not)."""


def confine(
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    configured: Mode | None,
    found: Probe,
    workspace_root: Path,
    run_id: str,
    writable: Sequence[Path],
    cwd: Path,
    keep: Collection[str] = (),
) -> Confined:
    """The worker's command and environment in the sandbox its profile asks for.

    Raises:
        SandboxUnavailable: ``bwrap`` is asked for and cannot be used.
    """
    mode, why = choose(configured, found)
    if mode == "none" or found.program is None:
        return Confined(list(command), {**env, SANDBOX_ENV: "none"}, "none", why)
    missing = [str(p) for p in writable if not p.is_dir()]
    if missing:
        raise SandboxUnavailable(f"{missing[0]}, which its workers may write, is not a folder")
    home, tmp = run_dirs(workspace_root, run_id)
    argv = wrap(found.program, command, writable=[*writable, home, tmp], cwd=cwd)
    return Confined(argv, confined_env(env, home=home, tmp=tmp, keep=keep), "bwrap", None)
