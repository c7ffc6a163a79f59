"""The ``jarvis`` runners for CLI tests (see `tests.jarvis_cli`).

`jarvis(...)` runs a command in this process unless it owns its process; `jarvis_process(...)`
always starts the real entry point, for tests where the process boundary is the point.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.jarvis_cli import Result, jarvis, jarvis_in_process, jarvis_process

__all__ = ["Result", "jarvis", "jarvis_in_process", "jarvis_process"]


@pytest.fixture
def run_cli() -> Any:
    return jarvis
