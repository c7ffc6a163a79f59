"""A signal meant for the host's process group never kills one of its git calls halfway.

The demo stops its host with SIGTERM to the host's group, as a terminal's ^C reaches a host in the
foreground: git killed mid-gate was once taken for git failing, and the host's loop stopped on a
traceback. Here a real process group is really signalled while its git call is under way."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.gitrepo import make_repo
from tests.processes import wait_until

CALLER = textwrap.dedent(
    """
    import signal, sys
    from pathlib import Path
    from core.repos.git import git
    asked = []
    signal.signal(signal.SIGTERM, lambda *_: asked.append(1))
    try:
        out = git(["rev-parse", "--is-inside-work-tree"], cwd=Path(sys.argv[1])).out.strip()
    except Exception as exc:
        print("failed:", exc, flush=True)
    else:
        print("answered:", out, "stop asked:", bool(asked), flush=True)
    """
)


def slow_git(bin_dir: Path, marks: Path) -> None:
    """A ``git`` on PATH that says it started, waits to be let go, then is the real git."""
    real = shutil.which("git")
    assert real is not None
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f'#!/bin/sh\ntouch "{marks}/started"\n'
        f'while [ ! -e "{marks}/go" ]; do sleep 0.05; done\nexec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)


def test_a_sigterm_to_the_callers_group_leaves_its_git_call_to_finish(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    marks = tmp_path / "marks"
    marks.mkdir()
    slow_git(tmp_path / "bin", marks)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    caller = subprocess.Popen(
        [sys.executable, "-c", CALLER, str(repo)], env=env, cwd=Path(__file__).parents[2],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(lambda: (marks / "started").exists() or None, "git to start")
        os.killpg(caller.pid, signal.SIGTERM)  # the caller's whole group, as a demo stops a host
        (marks / "go").touch()
        out, _ = caller.communicate(timeout=60)
    finally:
        if caller.poll() is None:
            os.killpg(caller.pid, signal.SIGKILL)
    assert out.strip() == "answered: true stop asked: True", out
