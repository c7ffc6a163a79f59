"""Quitting the demo: it says what it is stopping before it waits (the console is gone, and the
screen stayed blank for half a minute), its tree ends in a few steps, and the temporary
workspace is taken away at once and deleted in the background."""

from __future__ import annotations

import signal
from pathlib import Path

from jarvis_cli.demo import DEMO_CONFIG, DemoProcesses
from tests.demo.test_demo_cli import (
    LIVE_TIMEOUT_S,
    assert_nothing_left,
    start_demo,
    workers,
)
from tests.host.hostkit import wait_until
from tests.processes import HANG_GUARD_S

#: Steps of a stop whose tree ends on SIGTERM: a wait on each of the two processes, one look
#: for what is left, and a few more looks while the kernel reaps the workers' groups.
MOST_STEPS = 8


def test_a_busy_demo_tree_stops_in_a_few_steps(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "jarvis.toml").write_text(DEMO_CONFIG, "utf-8")
    procs = DemoProcesses(root, interval=0.2)
    try:
        procs.start()
        procs.wait_for_host()
        wait_until(lambda: len(workers(root)) >= 2, LIVE_TIMEOUT_S, "workers running")
    finally:
        steps = procs.stop()
    assert 1 <= steps <= MOST_STEPS
    assert_nothing_left(root, at_once=True)


def test_quitting_says_what_it_stops_and_takes_the_workspace_away_at_once(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    with start_demo("--no-console", "60", env_extra={"TMPDIR": str(tmp)}) as demo:
        ws = wait_until(lambda: next(tmp.glob("jarvis-demo-*"), None), LIVE_TIMEOUT_S,
                        "the temporary workspace")  # fmt: skip
        wait_until(lambda: workers(ws), LIVE_TIMEOUT_S, "a worker process")
        demo.send_signal(signal.SIGTERM)
        _, err = demo.communicate()
    said = err.splitlines()
    stopping = said.index("jarvis demo: stopping the host, its workers and the fleet…")
    assert said[stopping + 1] == "jarvis demo: stopped."
    assert "jarvis demo: the temporary workspace is being removed in the background." in said
    assert not ws.exists(), "the workspace is still where it was when the demo exited"
    assert_nothing_left(ws, at_once=True)
    wait_until(lambda: not list(tmp.iterdir()), HANG_GUARD_S, "the background removal")
