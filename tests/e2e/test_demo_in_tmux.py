"""`jarvis demo` in a real terminal (tmux): an operator retries a failed run by keys.

The console runs exactly as a person would start it; tmux stands in for their terminal
(`send-keys` for the keyboard, `capture-pane` for their eyes). The result is checked where it
must land, in the store, through `jarvis runs --json` and `jarvis show --json`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes import HANG_GUARD_S, wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

JARVIS = [sys.executable, "-m", "jarvis_cli"]


class Terminal:
    """One tmux session on a private server socket (so tests never touch a user's tmux, nor
    each other's when they run in parallel).

    The tmux server reads the program's terminal all the time, whatever the test does, so the
    program never blocks on a full terminal.
    """

    def __init__(self, command: str, *, width: int = 160, height: int = 48) -> None:
        self.socket = f"jarvis-e2e-{uuid.uuid4().hex[:8]}"
        self._tmux("new-session", "-d", "-s", "e2e", "-x", str(width), "-y", str(height), command)
        # A detached session may still take tmux's default size; insist on ours.
        self._tmux("resize-window", "-t", "e2e", "-x", str(width), "-y", str(height))

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        return done.stdout

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "e2e", *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "e2e")

    def wait_for(self, what: Callable[[str], bool], describe: str) -> str:
        """The screen, once ``what`` holds for it."""

        def shown() -> str | None:
            text = self.screen()
            return text if what(text) else None

        return wait_until(shown, f"{describe} on screen", describe=self.screen, interval=0.1)

    def close(self) -> None:
        self._tmux("kill-server")


def jarvis_json(*args: str) -> Any:
    done = subprocess.run([*JARVIS, *args, "--json"], capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def workspace_processes(workspace: Path) -> list[int]:
    """Pids whose command line names the workspace (host, fleet, workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (entry / "comm").read_text().strip() in ("sh", "bash", "tmux: server"):
                continue  # the terminal's own shell, whose command line names the workspace
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if str(workspace).encode() in cmdline or str(workspace).encode() in environ:
            found.append(int(entry.name))
    return found


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    workspace = tmp_path / "demo"
    exit_file = tmp_path / "exit-code"
    command = (
        f"cd {Path.cwd()} && JARVIS_OPERATOR=e2e-operator TERM=xterm-256color "
        f"{sys.executable} -m jarvis_cli demo --workspace {workspace} --interval 0.5; "
        f"echo $? > {exit_file}; sleep {HANG_GUARD_S:.0f}"
    )
    terminal = Terminal(command)
    try:
        yield terminal, workspace
    finally:
        terminal.close()


def test_retry_a_failed_run_by_keys_in_the_live_demo(demo: tuple[Terminal, Path]) -> None:
    terminal, workspace = demo
    # How soon the fleet is live is a benchmark figure, not an assertion on a loaded machine.
    terminal.wait_for(lambda s: "host pid" in s and "▶ running" in s, "a live fleet")

    runs = jarvis_json("runs", "--workspace", str(workspace), "--state", "failed")["runs"]
    target = next(run for run in runs if run["retry_count"] == 0)
    run_id = target["run_id"]

    # Find it the way an operator would: filter by its id, then retry and confirm.
    terminal.keys("/")
    terminal.wait_for(lambda s: "filter: run id" in s, "the filter box")
    # (waiting for the box also proves the console took the key, not the shell behind it)
    terminal.keys("-l", run_id)
    terminal.keys("Enter")
    # The table narrows while the id is typed, so "1 of" alone does not say Enter was taken:
    # wait until the filter has also let go of the keyboard (its cursor, ▏, is gone), or the
    # next key would be typed into the filter.
    terminal.wait_for(lambda s: "· 1 of " in s and run_id in s and f"{run_id}▏" not in s,
                      "the filtered run, the filter closed")  # fmt: skip
    terminal.keys("r")
    terminal.wait_for(lambda s: "this will be retry 1" in s, "the retry dialog")
    terminal.keys("y")
    terminal.wait_for(lambda s: f"Retried run {run_id}" in s, "the confirmation")

    shown = jarvis_json("show", run_id, "--workspace", str(workspace))
    run = shown["run"] if "run" in shown else shown
    assert run["retry_count"] == 1
    assert run["state"] in ("queued", "running", "review_requested", "failed_contract", "failed")
    audit = run.get("audit") or shown.get("audit") or []
    assert any(row["action"] == "retry" and row["actor"] == "e2e-operator" for row in audit), audit

    terminal.keys("q")
    exit_file = workspace.parent / "exit-code"
    wait_until(lambda: exit_file.exists() and exit_file.read_text().strip(),
               "the demo to exit after q", describe=terminal.screen)  # fmt: skip
    assert exit_file.read_text().strip() == "0"
    wait_until(lambda: not workspace_processes(workspace), "the demo's processes to end",
               describe=lambda: f"left behind: {workspace_processes(workspace)}")  # fmt: skip
