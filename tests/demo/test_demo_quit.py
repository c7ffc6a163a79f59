"""Quitting the demo: a busy demo's tree ends in a few steps (its quit once left the screen blank
for half a minute). What it says as it stops, and its workspace taken away at once and deleted in
the background: tests/demo/test_demo_cli.py, the SIGTERM test."""

from __future__ import annotations

from pathlib import Path

from jarvis_cli.demo import DEMO_CONFIG, DemoProcesses
from tests.demo.test_demo_cli import (
    LIVE_TIMEOUT_S,
    assert_nothing_left,
    workers,
)
from tests.host.hostkit import wait_until

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
