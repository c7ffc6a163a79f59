"""Running the ``jarvis`` command line from tests: in this process, or as a real process.

In process is the default. ``jarvis_cli.run(argv)`` is everything the entry point does
(``python -m jarvis_cli`` is ``sys.exit(run(sys.argv[1:]))``), so its return value is the exit
code; starting an interpreter per call made every CLI test cost a third of a second or more.
The call sees what a process would: ``sys.argv``, an stdin holding ``stdin``, stdout and stderr
captured as text, the working directory and environment, all put back afterwards; argparse's
``sys.exit`` becomes the exit code, and an uncaught exception is written to stderr with exit
code 1, as Python does.

Some commands own their process: ``host`` (not ``--stop``), ``tui``, ``serve``, ``demo``,
``journal --follow`` and ``logs --follow`` install signal handlers, run a console or a service,
or never end. They
always run as a real process, as does anything a test passes to `jarvis_process`, which is for
tests where the process boundary is the point (the real entry point's exit codes, stdin pipes,
signals).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.processes import HANG_GUARD_S


@dataclass
class Result:
    """How one ``jarvis`` command ended."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The one JSON object a ``--json`` command prints (fails if it printed other lines)."""
        lines = self.stdout.strip().splitlines()
        assert len(lines) == 1, f"expected exactly one JSON line, got {len(lines)}: {self.stdout!r}"
        return json.loads(lines[0])


def owns_its_process(args: Sequence[str]) -> bool:
    """Whether ``jarvis args`` must run as a process of its own (see the module docstring)."""
    command = args[0] if args else "tui"  # `jarvis` alone opens the console
    if command in ("tui", "demo", "serve"):
        return True
    if command == "host":
        return "--stop" not in args
    return command in ("journal", "logs") and "--follow" in args


def jarvis_process(
    *args: str | Path, stdin: bytes | None = None, cwd: Path | None = None
) -> Result:
    """Run the real command line in a subprocess, as a script would."""
    proc = subprocess.run(
        [sys.executable, "-m", "jarvis_cli", *map(str, args)],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        timeout=HANG_GUARD_S,
    )
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


class _Output(io.TextIOWrapper):
    """A text stream over bytes, as a pipe looks to a process (UTF-8, not a terminal)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="")

    def text(self) -> str:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue().decode("utf-8")


@contextlib.contextmanager
def _as_a_process(
    argv: list[str], stdin: bytes, cwd: Path | None
) -> Iterator[tuple[_Output, _Output]]:
    saved = (sys.argv, sys.stdin, sys.stdout, sys.stderr, dict(os.environ), os.getcwd())
    out, err = _Output(), _Output()
    sys.argv = ["jarvis", *argv]
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield out, err
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr, environ, where = saved
        os.chdir(where)
        # A command that changed the environment must not change it for the tests after it.
        os.environ.clear()
        os.environ.update(environ)


def jarvis_in_process(
    *args: str | Path, stdin: bytes | None = None, cwd: Path | None = None
) -> Result:
    """Run ``jarvis args`` in this process, as the entry point would run it."""
    from jarvis_cli import run

    argv = [str(a) for a in args]
    with _as_a_process(argv, stdin or b"", cwd) as (out, err):
        try:
            code = run(argv)
        except SystemExit as exc:  # argparse: --help, usage errors
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                sys.stderr.write(f"{exc.code}\n")
                code = 1
        except Exception:
            traceback.print_exc()  # to the captured stderr, as the interpreter would
            code = 1
    return Result(code, out.text(), err.text())


def jarvis(*args: str | Path, stdin: bytes | None = None, cwd: Path | None = None) -> Result:
    """Run ``jarvis args``: in this process, unless the command owns its process."""
    if owns_its_process([str(a) for a in args]):
        return jarvis_process(*args, stdin=stdin, cwd=cwd)
    return jarvis_in_process(*args, stdin=stdin, cwd=cwd)
