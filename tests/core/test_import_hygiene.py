"""The engine never imports the console, the command line, the simulator or UI libraries."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import core

FORBIDDEN = ("textual", "rich", "jarvis_tui", "jarvis_cli", "jarvis_sim")


def ui_modules_loaded_by(modules: list[str]) -> list[str]:
    """Import ``modules`` in a fresh interpreter; the forbidden packages that got loaded."""
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
    return [name for name in result.stdout.strip().split(",") if name]


def core_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(core.__path__, "core.")]


def test_importing_every_core_module_loads_no_ui_package() -> None:
    modules = core_modules()
    assert "core.contracts.dispatch" in modules  # the walk really found the engine
    assert "core.host.host" in modules
    assert ui_modules_loaded_by(modules) == []


def test_the_check_notices_a_ui_import_among_engine_modules() -> None:
    # The same check, with one console module slipped in, must name what it pulled in.
    loaded = ui_modules_loaded_by([*core_modules(), "jarvis_tui.state_look"])
    assert "rich" in loaded and "jarvis_tui" in loaded
