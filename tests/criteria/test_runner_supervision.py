"""A supervised command: its group is recorded before it runs, and it carries the markers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.criteria.runner import Supervision, run_command
from tests.criteria.helpers import PYTHON

ENV = {"PATH": "/usr/bin:/bin"}
WRITES = "import os, pathlib; pathlib.Path('ran').write_text(os.environ.get('MARK', ''))"


def _program(pid: int) -> str:
    """The file the process executes (set by exec, unlike a cmdline read mid-exec)."""
    return os.readlink(f"/proc/{pid}/exe")


def test_the_group_is_recorded_before_the_command_runs(tmp_path: Path) -> None:
    seen: list[tuple[str, int, bool]] = []
    programs: list[str] = []

    def started(pgid: int) -> None:
        # Popen has returned, so the process has exec'd: it is still the gate, not the command.
        programs.append(_program(pgid))
        seen.append(("started", pgid, (tmp_path / "ran").exists()))

    watch = Supervision(
        env={"MARK": "ours"},
        started=started,
        ended=lambda pgid: seen.append(("ended", pgid, (tmp_path / "ran").exists())),
    )
    result = run_command([PYTHON, "-c", WRITES], cwd=tmp_path, env=ENV, timeout_s=20,
                         keep_bytes=100, supervision=watch)  # fmt: skip
    assert result.returncode == 0
    [(first, pgid, ran_before), (last, same, ran_after)] = seen
    assert (first, ran_before) == ("started", False)
    assert programs == [os.path.realpath("/bin/sh")]
    assert (last, same, ran_after) == ("ended", pgid, True)
    assert (tmp_path / "ran").read_text() == "ours"


def test_a_command_whose_record_failed_never_runs(tmp_path: Path) -> None:
    def refuse(pgid: int) -> None:
        raise OSError("the store is locked")

    with pytest.raises(OSError, match="store is locked"):
        run_command([PYTHON, "-c", WRITES], cwd=tmp_path, env=ENV, timeout_s=20, keep_bytes=100,
                    supervision=Supervision(started=refuse))  # fmt: skip
    assert not (tmp_path / "ran").exists()


def test_a_supervised_command_still_gets_empty_stdin(tmp_path: Path) -> None:
    code = "import sys; print(repr(sys.stdin.read()))"
    watch = Supervision(started=lambda pgid: None)
    result = run_command([PYTHON, "-c", code], cwd=tmp_path, env=ENV, timeout_s=20,
                         keep_bytes=100, supervision=watch)  # fmt: skip
    assert (result.returncode, result.tail) == (0, b"''\n")
