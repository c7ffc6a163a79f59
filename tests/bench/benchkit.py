"""What the benchmarks share: a real `jarvis host` started on a workspace, and stopped."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]


def start_host(
    ws: Path,
    *,
    env: Mapping[str, str] | None = None,
    stderr: IO[bytes] | int = subprocess.DEVNULL,
    timeout: float = 30,
) -> subprocess.Popen[bytes]:
    """``python -m jarvis_cli host`` on ``ws``, returned once it holds the workspace."""
    args = [sys.executable, "-m", "jarvis_cli", "host", "--workspace", str(ws)]
    host = subprocess.Popen(args, cwd=ROOT, env=None if env is None else dict(env), stderr=stderr)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lock = ws / "host.lock"
        if lock.exists() and lock.read_text().strip() == str(host.pid):
            return host
        if host.poll() is not None:
            raise RuntimeError(f"the host exited with {host.returncode}")
        time.sleep(0.01)
    raise RuntimeError("the host did not start")


def stop_host(host: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """SIGTERM, then SIGKILL if it has not gone within ``timeout``."""
    host.send_signal(signal.SIGTERM)
    try:
        host.wait(timeout)
    except subprocess.TimeoutExpired:
        host.kill()
        host.wait()
