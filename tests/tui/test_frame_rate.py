"""The console's frame-rate cap reaches Textual, and an operator's own TEXTUAL_FPS wins."""

from __future__ import annotations

import os
import subprocess
import sys

from jarvis_tui import FRAME_RATE

#: What Textual's screens are paced at once the console's modules are loaded.
PROBE = (
    "import {first}\n"
    "import jarvis_tui.app\n"
    "from textual import screen\n"
    "print(round(1 / screen.UPDATE_PERIOD))\n"
)


def _paced_at(first: str, **env: str) -> int:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(first=first)],
        capture_output=True,
        text=True,
        check=True,
        env={**clean, **env},
    )
    return int(out.stdout)


def test_the_jarvis_command_paces_the_console_at_its_frame_rate() -> None:
    assert FRAME_RATE > 60  # Textual's own default, which made keys wait behind busy frames
    assert _paced_at("jarvis_cli.tui") == FRAME_RATE


def test_an_operators_textual_fps_is_kept() -> None:
    assert _paced_at("jarvis_cli.tui", TEXTUAL_FPS="30") == 30
