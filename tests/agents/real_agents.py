"""Real agent programs for the tests, installed from their own package registry into their own
directory under the repository's ``.agents/`` (ignored by git), once per version.

Claude Code comes from npm at a pinned version: ``npm install --ignore-scripts --prefix DIR``,
then the package's own postinstall (``node install.cjs``) run explicitly, which puts the
platform's native binary in place of the package's placeholder. Running it ourselves makes the
result the same whatever npm's policy on install scripts is. The install is about 235 MB (one
native binary) and takes seconds; a later session finds it in place and only checks
``claude --version``. Parallel test workers take a file lock, so only one of them installs.

OpenCode comes from npm the same way as Claude Code: ``opencode-ai`` with ``--ignore-scripts``,
then its postinstall (``node postinstall.mjs``), which links the platform's binary (from the
``opencode-linux-x64`` package npm installs beside it) over the package's placeholder; about
360 MB. Aider comes from PyPI into a virtual environment of its own (``aider-chat`` pins its
whole dependency tree): the environment is made without pip, and this interpreter's uv (the
dev extra's; its pip where uv is missing) installs into it; about 700 MB, seconds with uv, some
minutes with pip.

Codex comes from npm the same way, at a pinned version: its package is a small launcher whose
optional dependency (``@openai/codex-linux-x64``…, the same package at a version tagged with the
platform) holds the native binary, which is what is run: ``vendor/<target>/bin/codex``, beside
the ``codex-resources`` it finds from its own path. No install script is involved. About 420 MB.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = ROOT / ".agents"

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.197"
OPENCODE_PACKAGE = "opencode-ai"
OPENCODE_VERSION = "1.18.33"
AIDER_PACKAGE = "aider-chat"
AIDER_VERSION = "0.86.2"
CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.171.0"

#: An install from an npm registry that answers takes seconds: this only stops a hung one.
INSTALL_TIMEOUT_S = 600.0


class AgentUnavailable(Exception):
    """The agent's installer is missing from this machine (not: the install failed)."""


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _version_of(executable: Path) -> str | None:
    """What ``executable --version`` prints, or None when it does not run."""
    if not executable.is_file():
        return None
    try:
        done = subprocess.run(
            [str(executable), "--version"], capture_output=True, text=True, timeout=60,
            env={**os.environ, "DISABLE_AUTOUPDATER": "1"},
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _run(argv: list[str], timeout: float = INSTALL_TIMEOUT_S) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} failed with code {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )


def _has_uv(python: str) -> bool:
    """Whether ``python`` can run uv (the dev extra installs it)."""
    try:
        done = subprocess.run([python, "-m", "uv", "--version"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def claude_code(version: str = CLAUDE_CODE_VERSION) -> Path:
    """The ``claude`` executable of Claude Code ``version``, installed here if it is not yet.

    Raises `AgentUnavailable` when npm or node is not on this machine, RuntimeError when the
    install fails.
    """
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise AgentUnavailable("npm and node are needed to install Claude Code from npm")
    prefix = AGENTS_DIR / f"claude-code-{version}"
    executable = prefix / "node_modules" / ".bin" / "claude"
    with _locked(AGENTS_DIR / f"claude-code-{version}.lock"):
        found = _version_of(executable)
        if found is not None and found.startswith(version):
            return executable
        shutil.rmtree(prefix, ignore_errors=True)
        _run([npm, "install", "--prefix", str(prefix), "--ignore-scripts", "--no-audit",
              "--no-fund", "--loglevel=error", f"{CLAUDE_CODE_PACKAGE}@{version}"])  # fmt: skip
        package = prefix / "node_modules" / CLAUDE_CODE_PACKAGE
        _run([node, str(package / "install.cjs")])
        found = _version_of(executable)
        if found is None or not found.startswith(version):
            raise RuntimeError(f"{executable} --version says {found!r} after installing {version}")
        return executable


def opencode(version: str = OPENCODE_VERSION) -> Path:
    """The ``opencode`` executable of OpenCode ``version``, installed here if it is not yet.

    Raises `AgentUnavailable` when npm or node is not on this machine, RuntimeError when the
    install fails.
    """
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise AgentUnavailable("npm and node are needed to install OpenCode from npm")
    prefix = AGENTS_DIR / f"opencode-{version}"
    executable = prefix / "node_modules" / ".bin" / "opencode"
    with _locked(AGENTS_DIR / f"opencode-{version}.lock"):
        found = _version_of(executable)
        if found == version:
            return executable
        shutil.rmtree(prefix, ignore_errors=True)
        _run([npm, "install", "--prefix", str(prefix), "--ignore-scripts", "--no-audit",
              "--no-fund", "--loglevel=error", f"{OPENCODE_PACKAGE}@{version}"])  # fmt: skip
        _run([node, str(prefix / "node_modules" / OPENCODE_PACKAGE / "postinstall.mjs")])
        found = _version_of(executable)
        if found != version:
            raise RuntimeError(f"{executable} --version says {found!r} after installing {version}")
        return executable


def aider(version: str = AIDER_VERSION) -> Path:
    """The ``aider`` executable of aider ``version``, installed here if it is not yet.

    Raises `AgentUnavailable` when pip (or venv) is not available to this interpreter,
    RuntimeError when the install fails.
    """
    python = sys.executable
    try:
        pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, timeout=60)
        venv = subprocess.run([python, "-m", "venv", "-h"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AgentUnavailable(f"cannot ask {python} for pip: {exc}") from None
    if pip.returncode != 0 or venv.returncode != 0:
        raise AgentUnavailable("pip and venv are needed to install aider from PyPI")
    prefix = AGENTS_DIR / f"aider-{version}"
    executable = prefix / "bin" / "aider"
    with _locked(AGENTS_DIR / f"aider-{version}.lock"):
        found = _version_of(executable)
        if found == f"aider {version}":
            return executable
        shutil.rmtree(prefix, ignore_errors=True)
        _run([python, "-m", "venv", "--without-pip", str(prefix)])
        target = ["--python", str(prefix / "bin" / "python")]
        wanted = f"{AIDER_PACKAGE}=={version}"
        if _has_uv(python):
            # uv installs aider's hundred pinned packages in seconds where pip takes minutes
            # of the suite's time; the same pins, the same environment.
            _run([python, "-m", "uv", "pip", "install", "--quiet", *target, wanted],
                 timeout=3 * INSTALL_TIMEOUT_S)  # fmt: skip
        else:
            by_pip = [python, "-m", "pip", *target, "install", "--disable-pip-version-check"]
            _run([*by_pip, "--quiet", wanted], timeout=3 * INSTALL_TIMEOUT_S)
        found = _version_of(executable)
        if found != f"aider {version}":
            raise RuntimeError(f"{executable} --version says {found!r} after installing {version}")
        return executable


def codex(version: str = CODEX_VERSION) -> Path:
    """The native ``codex`` executable of Codex ``version``, installed here if it is not yet.

    Raises `AgentUnavailable` when npm is not on this machine, RuntimeError when the install
    fails or holds no binary for this platform.
    """
    npm = shutil.which("npm")
    if npm is None:
        raise AgentUnavailable("npm is needed to install Codex from npm")
    prefix = AGENTS_DIR / f"codex-{version}"
    with _locked(AGENTS_DIR / f"codex-{version}.lock"):
        found = _codex_binary(prefix)
        if found is not None and (_version_of(found) or "").endswith(version):
            return found
        shutil.rmtree(prefix, ignore_errors=True)
        _run([npm, "install", "--prefix", str(prefix), "--ignore-scripts", "--no-audit",
              "--no-fund", "--loglevel=error", f"{CODEX_PACKAGE}@{version}"])  # fmt: skip
        found = _codex_binary(prefix)
        said = _version_of(found) if found is not None else None
        if found is None or said is None or not said.endswith(version):
            raise RuntimeError(f"no codex {version} binary under {prefix} (it says {said!r})")
        return found


def _codex_binary(prefix: Path) -> Path | None:
    """The platform package's native binary (``@openai/codex-<platform>/vendor/<target>/bin``)."""
    found = sorted((prefix / "node_modules" / "@openai").glob("codex-*/vendor/*/bin/codex"))
    return found[0] if len(found) == 1 else None
