"""NO_COLOR, checked where it matters: the bytes the real console writes to a terminal.

`jarvis tui` runs under a pseudo-terminal and its output is read back. With NO_COLOR set the
console paints in greys only (Textual's monochrome filter: a cursor still needs a lighter
background): every colour in every select-graphic-rendition sequence must have no hue, and no
palette colour may be named. Without it, the same screen has hues, so the check can tell the
two apart. Meaning never rests on colour alone (`state_look`): the symbols carry it.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from tests.processes import PtyProcess
from tests.tui.conftest import build_store

SGR = re.compile(rb"\x1b\[([0-9;:]*)m")


def hues(output: bytes) -> list[str]:
    """Every colour with a hue set by the output's SGR sequences: a palette colour (30-37,
    40-47, 90-97, 100-107, 256-colour), or a true colour whose red, green and blue differ."""
    found = []
    for match in SGR.finditer(output):
        params = [int(p) for p in re.split(rb"[;:]", match.group(1)) if p]
        i = 0
        while i < len(params):
            code = params[i]
            if code in (38, 48) and i + 1 < len(params) and params[i + 1] == 2:
                rgb = params[i + 2 : i + 5]
                if len(set(rgb)) > 1:
                    found.append(f"{code};2;{';'.join(map(str, rgb))}")
                i += 5
                continue
            if code in (38, 48) and i + 1 < len(params) and params[i + 1] == 5:
                found.append(f"{code};5;{params[i + 2] if i + 2 < len(params) else '?'}")
                i += 3
                continue
            if 30 <= code <= 37 or 40 <= code <= 47 or 90 <= code <= 97 or 100 <= code <= 107:
                found.append(str(code))
            i += 1
    return found


def console_output(workspace: Path, *, no_color: bool) -> bytes:
    """Everything `jarvis tui` writes to a 100 x 30 terminal, from its start until it has quit.

    The terminal is read until the console exits: its last frame after ``q`` is larger than a
    terminal's buffer, and a console left blocked writing it would never exit.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", COLORTERM="truecolor")
    if no_color:
        env["NO_COLOR"] = "1"
    argv = [sys.executable, "-m", "jarvis_cli", "tui", "--no-host", "--workspace", str(workspace)]
    with PtyProcess(argv, cols=100, rows=30, env=env) as console:
        console.wait_for(b"run-contract", "the run table")
        console.write(b"q")
        assert console.wait() == 0, console.tail()
        return console.output


def test_no_color_paints_in_greys_and_colour_is_there_without_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    build_store(workspace / "jarvis.db")
    assert hues(console_output(workspace, no_color=False)), "a coloured console expected"
    assert hues(console_output(workspace, no_color=True)) == []
