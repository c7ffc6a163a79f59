"""Two real consoles (`jarvis tui --db URL`, each in its own tmux terminal and workspace) on one
PostgreSQL store that a host on a third workspace serves: both show the fleet's host and the same
run; one operator cancels it by keys, and both screens show it failed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from core.store.location import open_store
from tests.e2e.test_demo_in_tmux import Terminal
from tests.host.hostkit import STEERABLE_INTERVAL, dispatch, running_host, wait_until, write_config
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def console(tmp_path: Path, name: str, url: str) -> Terminal:
    workspace = tmp_path / name
    return Terminal(
        f"cd {Path.cwd()} && JARVIS_OPERATOR={name} TERM=xterm-256color "
        f"{sys.executable} -m jarvis_cli tui --workspace {workspace} --db '{url}'; "
        f"sleep {HANG_GUARD_S:.0f}",
        width=120,
        height=30,
    )


def row_of(screen: str, run_id: str) -> str:
    return next((line for line in screen.splitlines() if run_id in line), "")


def test_two_consoles_see_the_same_fleet_and_one_operators_cancel(
    tmp_path: Path, pg_url: str
) -> None:
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    # The worker hangs until cancelled: a run that could finish before the keys arrive would
    # make the test depend on the machine's speed (a slow scenario once ended first).
    write_config(fleet, no_output_s=600)
    with (fleet / "jarvis.toml").open("a") as config:
        config.write(f'[store]\nurl = "{pg_url}"\n[host]\nname = "build-01"\n')
    store = open_store(pg_url)
    dispatch(store, "slow-1", scenario="hang")
    terminals = []
    try:
        with running_host(fleet, interval=STEERABLE_INTERVAL):
            wait_until(lambda: (store.get_run("slow-1") or {})["state"] == "running",
                       HANG_GUARD_S, "slow-1 to run")  # fmt: skip
            terminals = [console(tmp_path, name, pg_url) for name in ("op-1", "op-2")]
            for terminal in terminals:
                screen = terminal.wait_for(
                    lambda s: "running" in row_of(s, "slow-1") and "build-01" in s,
                    "the running run and the fleet's host",
                )
                assert "1 host live" in screen
            first, second = terminals
            first.keys("x")
            first.wait_for(lambda s: "reason" in s.lower(), "the reason box")
            first.keys("not needed by op-1", "Enter")
            for terminal in terminals:
                terminal.wait_for(lambda s: "failed" in row_of(s, "slow-1"), "slow-1 failed")
        run = store.get_run("slow-1") or {}
        assert run["state"] == "failed" and "not needed by op-1" in run["state_reason"]
        (cancel,) = [a for a in store.audit_of("slow-1") if a["action"] == "cancel"]
        assert cancel["actor"] == "op-1"
    finally:
        for terminal in terminals:
            terminal.close()
        store.close()
