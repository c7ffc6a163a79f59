"""A crashed worker's stderr reaches the operator: its end, bounded, masked and inert.

A real host runs a worker that floods stderr, puts a token and terminal escapes in it, ends with
the error that matters, and exits 1 without a completion. `jarvis show` (JSON and readable) must
carry the end of that stderr, with the secret masked and the escapes shown, not executed; the
run's reason must say what the last line said.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.host.hostkit import (
    cli,
    connect,
    running_host,
    script_workspace,
    wait_for_states,
)

pytestmark = pytest.mark.slow

LANE = "jarvis-worker-1"
RUN = "stderr-run-1"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
LAST = "ValueError: the fixture file tests/data/users.json is broken"
NOISE_LINES = 5_000

WORKER = f"""
import sys
for n in range({NOISE_LINES}):
    sys.stderr.write(f"\\x1b[33mwarning\\x1b[0m: step {{n}} of a long build log\\n")
sys.stderr.write("auth header: token={TOKEN}\\n")
sys.stderr.write("\\x1b]0;pwned\\x07 title change attempt\\n")
sys.stderr.write("Traceback (most recent call last):\\n  File 'x.py', line 1\\n")
sys.stderr.write("{LAST}\\n")
sys.exit(1)
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return script_workspace(tmp_path, WORKER, RUN, lane=LANE)


def test_a_crashed_workers_stderr_is_shown_bounded_masked_and_inert(ws: Path) -> None:
    conn = connect(ws)
    with running_host(ws) as host:
        wait_for_states(conn, {RUN: "failed"}, 60, host)
    conn.close()

    code, out = cli(ws, "show", RUN)
    assert code == 0
    run = out["run"]
    assert LAST in run["state_reason"], run["state_reason"]
    (stderr,) = run["stderr"]
    assert stderr["attempt"] == 1 and stderr["exit_code"] == 1
    assert stderr["total_bytes"] > NOISE_LINES * 40  # all of it was counted...
    tail = stderr["tail"]
    assert len(tail) <= 4_100  # ...only its end was kept
    assert tail.rstrip().endswith(LAST)
    assert TOKEN not in tail and "ghp_****" in tail  # masked as it was stored
    assert "\x1b" not in tail and "\x07" not in tail  # inert as it was stored
    assert "\\x1b]0;pwned\\x07" in tail
    assert "[33m" not in tail  # colour codes are noise, dropped

    readable = subprocess.run(
        [sys.executable, "-m", "jarvis_cli", "show", RUN, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert readable.returncode == 0, readable.stderr
    assert "worker stderr" in readable.stdout
    assert f"step {NOISE_LINES - 1} of a long build log" in readable.stdout
    assert TOKEN not in readable.stdout and "\x1b]0" not in readable.stdout
