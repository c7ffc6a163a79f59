"""A worker's progress holding a NUL is ingested on PostgreSQL as it is on SQLite.

PostgreSQL refuses a NUL in a text value: the host's transaction failed, the file was moved aside
as ``host_error`` and the host's log held the tracebacks. A real host on each backend now runs a
worker whose progress summary and completion hold ``\\u0000``: the event is ingested once, with
U+FFFD where the NUL was, nothing is refused, and the host's log holds no traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.store.api import RunStore
from core.store.location import open_store
from tests.host.hostkit import dispatch, running_host, wait_until
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

RUN = "nul-run-1"
WORKER = r"""
import json, os
doc = {"kind": "worker_progress", "run_id": os.environ["JARVIS_RUN_ID"],
       "group_folder": os.environ["JARVIS_LANE"], "timestamp": "2026-11-26T03:00:00.000Z",
       "phase": "testing", "summary": "read \u0000 from the socket", "tool_used": "cat\u0000",
       "seq": 1}
progress = os.environ["JARVIS_PROGRESS_DIR"]
with open(os.path.join(progress, ".1.tmp"), "w") as f:
    json.dump(doc, f)
os.replace(os.path.join(progress, ".1.tmp"), os.path.join(progress, "0001.json"))
dispatch = json.loads(os.environ["JARVIS_DISPATCH"])
print("<completion>")
print(json.dumps({"run_id": dispatch["run_id"], "branch": dispatch["branch"],
                  "commit_sha": "abc1234", "files_changed": ["src/app.py"],
                  "test_result": "42 passed \u0000", "risk": "low", "pr_skipped_reason": "none"}))
print("</completion>")
"""


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, ws: Path, tmp_path: Path) -> str:
    """The workspace's store, on each backend, with the worker above as its command."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    config = (
        f"[workers]\ncommand = [{str(sys.executable)!r}, {str(script)!r}]\n"
        "[timeouts]\nno_output_s = 30\nshutdown_grace_s = 1\n"
    )
    where = str(ws / "jarvis.db")
    if request.param == "postgres":
        where = request.getfixturevalue("pg_url")
        config += f'[store]\nurl = "{where}"\n'
    (ws / "jarvis.toml").write_text(config)
    return where


def state(store: RunStore) -> str:
    return str((store.get_run(RUN) or {}).get("state"))


def test_progress_and_a_completion_holding_a_nul_are_ingested(ws: Path, location: str) -> None:
    store = open_store(location)
    try:
        dispatch(store, RUN)
        with running_host(ws) as host:
            wait_until(
                lambda: state(store) == "review_requested",
                HANG_GUARD_S,
                "the run to reach review",
                host.log,
            )
        log = host.log()
        (event,) = store.rows("SELECT summary, tool_used FROM progress_events")
        assert event == {"summary": "read \ufffd from the socket", "tool_used": "cat\ufffd"}
        assert (store.get_run(RUN) or {})["test_summary"] == "42 passed \ufffd"
        assert store.refusals() == []
        assert not list((ws / "data" / "ipc" / "errors").glob("*")), "a file was refused"
        assert "Traceback" not in log and "host_error" not in log, log
    finally:
        store.close()
