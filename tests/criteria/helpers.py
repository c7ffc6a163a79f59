"""Shared pieces for the criteria tests: a policy that may run this interpreter, process checks."""

from __future__ import annotations

import os
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.criteria.allowlist import DEFAULT_POLICY
from tests.processes import HANG_GUARD_S

PYTHON = sys.executable
#: This interpreter by its bare name: only a bare name found on PATH runs unattended, and
#: ``tests/criteria/conftest.py`` puts this interpreter's folder first on PATH.
PYTHON_NAME = Path(PYTHON).name
#: Runs ``python -c ...`` without approval; a generous limit so a loaded machine does not flake.
POLICY = replace(DEFAULT_POLICY, allowlist=DEFAULT_POLICY.allowlist | {PYTHON_NAME}, timeout_s=20)
#: For time-out tests: short, so the suite stays fast.
SHORT = replace(POLICY, timeout_s=0.5)
#: A limit for commands that must start a helper process before the limit kills them: room for
#: two Python start-ups on a loaded machine. A tighter limit made the helper's pid file a race.
HELPER_LIMIT_S = 5.0


def py(code: str) -> list[str]:
    return [PYTHON_NAME, "-c", code]


def command(kind: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "command": py(code), "description": "check", **extra}


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as dead)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return text.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_dead(pid: int, within_s: float = HANG_GUARD_S) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)


def wait_for_file(path: Path, within_s: float = HANG_GUARD_S) -> str:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} was not written")


def kill_if_alive(pid: int) -> None:
    """Clean up a process a failing test left behind (only ever a pid the test itself made)."""
    if alive(pid):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


class Marked:
    """The processes a test's command started, found by a marker in their command lines or
    their environments (``env()``: descendants inherit it, whatever they exec).

    A pid that a command writes from inside its PID namespace is its own (2, 3, …), not the
    host's, so tests look for its processes from outside, in /proc, by a word only they carry.
    """

    def __init__(self) -> None:
        self.mark = f"jarvis-test-mark-{uuid.uuid4().hex}"

    def env(self) -> dict[str, str]:
        return {"JARVIS_TEST_MARK": self.mark}

    def processes(self) -> list[int]:
        found = []
        wanted = self.mark.encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                seen = Path(f"/proc/{entry}/cmdline").read_bytes()
                seen += Path(f"/proc/{entry}/environ").read_bytes()
            except OSError:
                continue
            if wanted in seen and alive(int(entry)):
                found.append(int(entry))
        return found

    def wait_for(self, count: int) -> list[int]:
        """At least ``count`` of them, once they are there."""
        deadline = time.monotonic() + HANG_GUARD_S
        while len(found := self.processes()) < count:
            if time.monotonic() >= deadline:
                raise AssertionError(f"{count} marked processes never ran (found {found})")
            time.sleep(0.02)
        return found

    def gone(self) -> bool:
        """Whether none is left, waiting for the kills in flight to land."""
        deadline = time.monotonic() + HANG_GUARD_S
        while self.processes():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def kill(self) -> None:
        """Clean up after a failing test: only processes carrying this test's marker."""
        for pid in self.processes():
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
