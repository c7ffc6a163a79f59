"""A real `jarvis host` applies ``[store]``'s retention soon after it starts: the old history
of finished runs goes, a live run's and an operator's run's stay, a receipt whose file is gone
goes and one whose file is on disk stays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run
from tests.host.hostkit import connect, rows, running_host, wait_until
from tests.store.test_retention import add_events

LANE = "jarvis-worker-1"
#: A file still on disk (where nothing of the host reads it), whose receipt stays.
KEPT = "notes/kept.json"


def test_the_host_removes_what_the_policy_allows_and_nothing_else(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "jarvis.toml").write_text("[store]\nkeep_days = 7\n")
    ten_days_ago = datetime.now(UTC) - timedelta(days=10)
    store = SqliteStore(ws / "jarvis.db", clock=lambda: ten_days_ago)
    make_run(store, "old-done", RunState.DONE)
    add_events(store, "old-done", 1500)
    make_run(store, "old-failed", RunState.FAILED)
    add_events(store, "old-failed", 40)
    with store.transaction() as tx:
        tx.put_receipt(f"{LANE}/progress/gone.json:{'0' * 64}", LANE, "progress")
        tx.put_receipt(f"{KEPT}:{'0' * 64}", LANE, "progress")
    store.close()
    (ws / KEPT).parent.mkdir(parents=True)
    (ws / KEPT).write_text("{}")
    conn = connect(ws)

    def count(sql: str) -> int:
        return int(rows(conn, sql)[0]["n"])

    with running_host(ws) as host:
        wait_until(
            lambda: (
                count("SELECT COUNT(*) AS n FROM ipc_receipts") == 1
                and count("SELECT COUNT(*) AS n FROM progress_events WHERE run_id = 'old-done'")
                == 0
                and count("SELECT COUNT(*) AS n FROM journal WHERE run_id = 'old-done'") == 0
            ),
            60,
            "the host's retention to remove the old history",
            host.log,
        )
    assert count("SELECT COUNT(*) AS n FROM progress_events WHERE run_id = 'old-failed'") == 40
    assert count("SELECT COUNT(*) AS n FROM journal WHERE run_id = 'old-failed'") > 0
    (kept,) = rows(conn, "SELECT key FROM ipc_receipts")
    assert kept["key"] == f"{KEPT}:{'0' * 64}"
    (summary,) = rows(conn, "SELECT * FROM run_retention")
    assert summary["run_id"] == "old-done" and summary["progress_removed"] == 1500
    assert (ws / KEPT).exists()
