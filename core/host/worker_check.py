"""Whether a worker profile's program is here, and which version: what `jarvis workers` shows."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from core.text import inert

#: A program that does not answer ``--version`` within this is reported, not waited on.
VERSION_TIMEOUT_S = 10.0
VERSION_CHARS = 120
#: The agents whose programs are known to answer ``--version`` and do nothing else. A
#: ``command`` or ``nanoclaw`` profile runs any program, which may take ``--version`` for work:
#: one did its run when asked.
ANSWERS_VERSION = frozenset({"claude-code", "codex", "opencode", "aider"})


@dataclass(frozen=True)
class ProgramCheck:
    path: str | None
    """Where the executable was found (None: not found)."""
    version: str | None
    problem: str | None = None
    version_asked: bool = True


def find_program(program: str, *, cwd: Path) -> str | None:
    """The executable ``program`` names: looked up on PATH when bare, else as a path (relative
    to ``cwd``, the workspace, where the host runs it)."""
    if os.sep in program:
        path = Path(program) if os.path.isabs(program) else cwd / program
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(program)


def check_program(executable: list[str], *, cwd: Path, agent: str) -> ProgramCheck:
    """Find the program and, for an agent in `ANSWERS_VERSION`, ask it for ``--version`` (its
    first line, made inert)."""
    found = find_program(executable[0], cwd=cwd)
    if found is None:
        return ProgramCheck(None, None, f"{executable[0]} is not found", agent in ANSWERS_VERSION)
    if agent not in ANSWERS_VERSION:
        return ProgramCheck(found, None, None, version_asked=False)
    try:
        done = subprocess.run(
            # The program alone: a wrapper's fixed arguments may not take --version.
            [found, "--version"], cwd=cwd, capture_output=True, text=True,
            errors="replace", timeout=VERSION_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
            start_new_session=True,  # a stop signal to the host's group is the host's alone
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return ProgramCheck(found, None, f"--version did not answer in {VERSION_TIMEOUT_S:g} s")
    except OSError as exc:
        return ProgramCheck(found, None, f"cannot be run: {exc.strerror or exc}")
    text = (done.stdout or done.stderr).strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    said = inert(first)[:VERSION_CHARS]
    if done.returncode != 0:
        return ProgramCheck(found, None, f"--version exited with code {done.returncode}: {said}")
    return ProgramCheck(found, said or None)
