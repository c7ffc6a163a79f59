"""The engine never imports the console or UI libraries (DESIGN: two packages, one direction)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import core

FORBIDDEN = ("textual", "rich", "jarvis_tui")


def test_importing_every_core_module_loads_no_ui_package() -> None:
    modules = [m.name for m in pkgutil.walk_packages(core.__path__, "core.")]
    assert "core.contracts.dispatch" in modules  # the walk really found the engine
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "", f"core imported: {result.stdout.strip()}"


def test_the_check_itself_would_notice_a_ui_import() -> None:
    script = "import sys, rich.text\nprint('rich' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "True"
