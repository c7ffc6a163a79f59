"""A console whose input ends (stdin from /dev/null under a terminal's output, a terminal gone)
quits saying why. Textual's input loop read the end again and again: such a console, left
behind by a closed session, spun a core for as long as nobody killed it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jarvis_tui.key_input import INPUT_ENDED
from tests.processes import PtyProcess


def test_a_console_whose_input_ends_quits_saying_why(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "jarvis_cli", "tui", "--no-host", "--workspace", str(tmp_path)]
    with PtyProcess(argv, cols=100, rows=30, stdin=subprocess.DEVNULL) as console:
        assert console.wait() == 2
        said = console.output.decode(errors="replace")
    assert INPUT_ENDED in said
