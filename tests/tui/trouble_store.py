"""The console's test store plus worker trouble on ``run-failed``: refused files and stderr."""

from __future__ import annotations

from pathlib import Path

from core.store.sqlite_store import SqliteStore
from core.verdicts import record_stderr
from tests.tui.conftest import HOSTILE, build_store, fixed_clock

#: A token the stderr carries; it must never reach a screen.
TOKEN = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
LAST = "RuntimeError: fixture database is locked"
STDERR = (
    "collecting tests...\n"
    f"export GITHUB_TOKEN={TOKEN}\n"
    f"worker said: {HOSTILE}\n"
    "Traceback (most recent call last):\n"
    '  File "tests/conftest.py", line 12, in db\n'
    f"{LAST}\n"
)
REFUSALS = [
    ("20260102T095100.000000Z-jarvis-worker-1-00000007-7.json", "not_json",
     "The document is not valid JSON: Expecting value (line 1, column 1).",
     "2026-01-02T09:51:00.000000Z"),
    ("20260102T095200.000000Z-jarvis-worker-1-run-failed.acked.json", "unknown_steer",
     f"Run run-failed has no steer steer-{HOSTILE}.", "2026-01-02T09:52:00.000000Z"),
]  # fmt: skip


def build_trouble_store(db_path: Path) -> Path:
    build_store(db_path)
    store = SqliteStore(db_path, clock=fixed_clock)
    try:
        record_stderr(store, "run-failed", 1, STDERR.encode(), len(STDERR) + 10_000, 1)
        with store.transaction() as tx:
            for name, code, message, at in REFUSALS:
                tx.execute(
                    "INSERT INTO quarantined_files (reason_file, run_id, named_run, lane, code, "
                    "message, original_path, stored_as, outcome, quarantined_at) "
                    "VALUES (?, 'run-failed', 'run-failed', 'jarvis-worker-1', ?, ?, ?, ?, "
                    "'moved', ?)",
                    [f"{name}.reason.json", code, message, f"data/ipc/jarvis-worker-1/{name[40:]}",
                     f"data/ipc/errors/{name}", at],
                )  # fmt: skip
    finally:
        store.close()
    return db_path
