"""A real host's worker logs: one folder per attempt, so a retry keeps the logs before it, and a
stream that outgrows its file is renamed aside, within a bound, its latest lines always kept.

The worker is a script that writes far more than the host keeps on its first attempt and a
line on its second; both fail, and an operator retries the first between them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.worker_logs import (
    LOG_LIMIT_BYTES,
    LOG_ROTATIONS,
    LogFiles,
    attempt_dir,
    rotated,
    tail_log,
)
from tests.host.hostkit import (
    cli,
    connect,
    run_row,
    running_host,
    script_workspace,
    wait_until,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

RUN = "logs-run-1"
LINE_BYTES = 100
#: Half as much again as a stream keeps on disk: the first files are dropped.
FIRST_ATTEMPT_LINES = (LOG_LIMIT_BYTES * (LOG_ROTATIONS + 1) * 3 // 2) // LINE_BYTES

WORKER = f"""
import os, sys
attempt = os.environ["JARVIS_ATTEMPT"]
if attempt == "1":
    out = sys.stdout.buffer
    batch = []
    for n in range({FIRST_ATTEMPT_LINES}):
        batch.append(("attempt 1 line %09d " % n).ljust({LINE_BYTES - 1}, "x").encode() + b"\\n")
        if len(batch) == 1000:
            out.write(b"".join(batch))
            batch = []
    out.write(b"".join(batch) + b"attempt 1 last line\\n")
    out.flush()
sys.stderr.write("attempt %s stderr\\n" % attempt)
print("attempt %s done" % attempt)
sys.exit(1)
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return script_workspace(tmp_path, WORKER, RUN, no_output_s=60)


def stream_files(folder: Path, name: str) -> list[Path]:
    return [rotated(folder / name, i) for i in range(LOG_ROTATIONS + 1)
            if rotated(folder / name, i).exists()]  # fmt: skip


def test_a_retried_run_keeps_its_first_attempts_logs_rotated_within_bounds(ws: Path) -> None:
    conn = connect(ws)
    try:
        with running_host(ws) as host:

            def ended(retries: int) -> bool:
                run = run_row(conn, RUN)
                return bool(run["state"] == "failed" and run["retry_count"] == retries)

            wait_until(lambda: ended(0), HANG_GUARD_S, "attempt 1 to fail", host.log)
            code, answer = cli(ws, "retry", RUN)
            assert code == 0, answer
            wait_until(lambda: ended(1), HANG_GUARD_S, "attempt 2 to fail", host.log)
    finally:
        conn.close()

    first, second = attempt_dir(ws, RUN, 1), attempt_dir(ws, RUN, 2)
    # Attempt 1's logs are still there, renamed aside and bounded however much it wrote.
    stdout = stream_files(first, "stdout.log")
    assert len(stdout) == LOG_ROTATIONS + 1
    assert all(path.stat().st_size <= LOG_LIMIT_BYTES for path in stdout)
    written = FIRST_ATTEMPT_LINES * LINE_BYTES
    kept = sum(path.stat().st_size for path in stdout)
    assert kept <= LOG_LIMIT_BYTES * (LOG_ROTATIONS + 1) < written
    assert int((first / "stdout.log.dropped").read_text()) > 0
    tail = tail_log(LogFiles(RUN, 1, "stdout", first), 3)
    assert tail.lines == [
        f"attempt 1 line {FIRST_ATTEMPT_LINES - 1:09d} ".ljust(LINE_BYTES - 1, "x"),
        "attempt 1 last line",
        "attempt 1 done",
    ]
    assert tail.truncated
    assert (first / "stderr.log").read_text() == "attempt 1 stderr\n"
    # Attempt 2 wrote its own.
    assert (second / "stdout.log").read_text() == "attempt 2 done\n"
    assert (second / "stderr.log").read_text() == "attempt 2 stderr\n"
    assert not (ws / "logs" / RUN / "stdout.log").exists()

    code, answer = cli(ws, "logs", RUN, "--lines", "1")
    assert code == 0 and (answer["attempt"], answer["lines"]) == (2, ["attempt 2 done"])
    code, answer = cli(ws, "logs", RUN, "--attempt", "1", "--stderr")
    assert code == 0 and answer["lines"] == ["attempt 1 stderr"] and answer["stream"] == "stderr"
