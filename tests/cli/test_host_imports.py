"""`jarvis host` never imports the console: checked on a running host, not only by import-linter.

The host is the long-running service every console starts (`ensure_host`), so what it loads it
carries for as long as it runs. import-linter checks the static imports (pyproject.toml); this
runs ``python -m jarvis_cli host`` for real, through a run's whole life, and lists every module it
had loaded when it exited: the command's handler (imported by name) and whatever the host
imports only when it needs it included.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import FAST_INTERVAL, connect, dispatch, states, wait_until, write_config
from tests.processes import HANG_GUARD_S

#: ``python -m jarvis_cli ARGS``, run the way the interpreter runs it, which writes the names of
#: the loaded modules to $MODULES_OUT as the process exits.
PROBE = (
    "import atexit, os, runpy, sys\n"
    "def dump():\n"
    "    with open(os.environ['MODULES_OUT'], 'w') as out:\n"
    "        out.write('\\n'.join(sorted(sys.modules)))\n"
    "atexit.register(dump)\n"
    "runpy.run_module('jarvis_cli', run_name='__main__', alter_sys=True)\n"
)
CONSOLE = ("jarvis_tui", "textual")


def modules_of_a_host_through_one_run(tmp_path: Path) -> list[str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config(ws, concurrency=1)
    store = SqliteStore(ws / "jarvis.db")
    try:
        dispatch(store, "r1")
    finally:
        store.close()
    out, log = tmp_path / "modules.txt", tmp_path / "host.log"
    env = {k: v for k, v in os.environ.items() if k != "JARVIS_POLL"}
    env.update(MODULES_OUT=str(out), JARVIS_SIM_INTERVAL_MS=FAST_INTERVAL)
    command = [sys.executable, "-c", PROBE, "host", "--workspace", str(ws)]
    with log.open("ab") as sink:
        host = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink
        )
    conn = connect(ws)

    def run_ended() -> bool:
        if host.poll() is not None:
            pytest.fail(f"the host exited with {host.returncode}:\n{log.read_text()}")
        return states(conn).get("r1") not in ("queued", "running")

    try:
        # Its run ends (worker, ingest, gates, verification), so everything the host loads for
        # a run is loaded by then.
        wait_until(run_ended, HANG_GUARD_S, "the host to see its run to an end",
                   lambda: f"runs: {states(conn)}\n{log.read_text()}")  # fmt: skip
    finally:
        conn.close()
        host.send_signal(signal.SIGTERM)
        code = host.wait(HANG_GUARD_S)
    assert code == 0, log.read_text("utf-8", "replace")
    return out.read_text().split()


def test_a_host_loads_nothing_of_the_console(tmp_path: Path) -> None:
    loaded = modules_of_a_host_through_one_run(tmp_path)
    # The probe really ran the command and the host: their modules are there.
    assert {"jarvis_cli.host", "core.host.host", "core.host.ingest"} <= set(loaded)
    assert [m for m in loaded if m.split(".")[0] in CONSOLE] == []
