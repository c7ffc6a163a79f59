from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        lines = self.stdout.strip().splitlines()
        assert len(lines) == 1, f"expected exactly one JSON line, got {len(lines)}: {self.stdout!r}"
        return json.loads(lines[0])


def jarvis(*args: str | Path, stdin: bytes | None = None, cwd: Path | None = None) -> Result:
    """Run the real command line in a subprocess, as a script would."""
    proc = subprocess.run(
        [sys.executable, "-m", "jarvis_tui", *map(str, args)],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        timeout=60,
    )
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


@pytest.fixture
def run_cli() -> Any:
    return jarvis
