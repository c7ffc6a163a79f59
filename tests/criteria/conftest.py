"""Criterion commands find this interpreter by its bare name on PATH, as a host would."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def interpreter_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    here = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", here + os.pathsep + os.environ.get("PATH", ""))
