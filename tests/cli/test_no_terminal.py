"""Bare ``jarvis`` with no terminal (a cron job, ``ssh host jarvis``, stdin from /dev/null) says
so and exits 2: it used to draw the console into the void, hang, and leave a new ``./.jarvis``
with a host running in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.jarvis_cli import jarvis_process
from tests.processes import HANG_GUARD_S


def test_bare_jarvis_with_no_terminal_says_so_exits_2_and_creates_nothing(
    tmp_path: Path,
) -> None:
    done = jarvis_process(stdin=b"", cwd=tmp_path)  # pipes, not a terminal
    assert done.code == 2, done
    assert done.stderr.startswith("jarvis: no terminal:"), done.stderr
    assert "jarvis runs" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no ./.jarvis, no host log
    as_json = jarvis_process("--json", stdin=b"", cwd=tmp_path)
    assert '"code": "no_terminal"' in as_json.stdout and as_json.code == 2


def test_bare_jarvis_on_a_named_workspace_with_stdin_from_dev_null_is_refused_too(
    tmp_path: Path,
) -> None:
    with open("/dev/null", "rb") as nothing:
        proc = subprocess.run(
            [sys.executable, "-m", "jarvis_cli", "--workspace", str(tmp_path / "ws")],
            stdin=nothing, capture_output=True, timeout=HANG_GUARD_S, cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 2 and b"no terminal" in proc.stderr
    assert not (tmp_path / "ws").exists()
