"""The coordinator keeps running under NanoClaw's host while Jarvis's host serves the worker lanes
(docs/nanoclaw.md, "The coordinator beside Jarvis"), end to end.

Two trees, one owner each. NanoClaw's host keeps its own (``<nanoclaw>/data/ipc/``): the
coordinator's chat (``/workspace/ipc`` in its container) and its follow-ups. Jarvis's host
keeps the workspace's: the worker lanes, and ``data/ipc/andy-developer/``, which NanoClaw's host
mounts into the coordinator's container at ``/workspace/extra/jarvis``. The coordinator, written
byte for byte as NanoClaw's writes (tests/nanoclaw/coordinator.py), dispatches and steers there
and reads its ``worker_runs.json`` to learn what became of them; the workers are NanoClaw's
runner in a container (tests/nanoclaw/fake_container.py around runner_fixture.py).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from core.store.sqlite_store import SqliteStore
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import rows, run_row, running_host, wait_until
from tests.nanoclaw.coordinator import Coordinator, documented_dispatch, js_compact
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).with_name("runner_fixture.py")
FAKE_CONTAINER = FIXTURE.with_name("fake_container.py")
REPO = "openclaw-gurusharan/nanoclaw"
#: The coordinator's own chat: a WhatsApp group, NanoClaw's to deliver to.
OWN_CHAT = "120363000000000000@g.us"
STEERED = "nc:req-1:a8"


def configure(ws: Path, origin: Path) -> None:
    command = [sys.executable, str(FAKE_CONTAINER), "run", "-i", "--rm", "nanoclaw-agent:latest"]
    (ws / "jarvis.toml").write_text(
        '[workers]\ndefault = "nanoclaw"\nconcurrency = 2\n'
        f'[workers.nanoclaw]\nagent = "nanoclaw"\ncommand = {json.dumps(command)}\n'
        "container = true\n"  # `python fake_container.py run …` plays `docker run …`
        '[lanes."jarvis-worker-1"]\nworker = "nanoclaw"\n'
        '[lanes."jarvis-worker-2"]\nworker = "nanoclaw"\n'
        f'[repos."{REPO}"]\npath = "{origin}"\n'
        "[timeouts]\nno_output_s = 60\n"
    )


def runs_seen(andy: Coordinator) -> dict[str, Any]:
    """``/workspace/extra/jarvis/worker_runs.json``, as the coordinator reads it."""
    try:
        found: dict[str, Any] = json.loads((andy.root / "worker_runs.json").read_text())
    except (OSError, ValueError):
        return {}
    return found


def status_of(andy: Coordinator, run_id: str, listing: str = "recent") -> str | None:
    found = [r["status"] for r in runs_seen(andy).get(listing, []) if r["run_id"] == run_id]
    return found[0] if found else None


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_coordinator_works_the_worker_lanes_through_jarvis_and_chats_through_nanoclaw(
    tmp_path: Path, ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    origin = make_repo(tmp_path / "origin.git", {"README.md": "# nanoclaw\n"}, bare=True)
    configure(ws, origin)
    nanoclaw = tmp_path / "nanoclaw"
    # The coordinator's /workspace/ipc: NanoClaw's tree, its chat and its follow-ups.
    chat = Coordinator(nanoclaw / "data" / "ipc")
    said = chat.send_message("On it: jarvis-worker-1 takes the retry.", OWN_CHAT)
    follow_up = chat.root / "input" / "1773741605123-a9f0.json"
    follow_up.parent.mkdir(parents=True)
    follow_up.write_text('{"type":"message","text":"<messages>…</messages>"}')
    nanoclaws = tree(nanoclaw)
    # Its /workspace/extra/jarvis: Jarvis's lane for it.
    andy = Coordinator(ws / "data" / "ipc")
    sparse = {"required_fields": ["run_id", "branch", "pr_skipped_reason"]}  # NanoClaw fills
    andy.dispatch(documented_dispatch(STEERED, branch="jarvis-retry", output_contract=sparse,
                                      input="Add the retry. NC:steer"))  # fmt: skip
    andy.dispatch(documented_dispatch("task-2", branch="jarvis-docs"), worker="jarvis-worker-2")
    andy.send_message(js_compact(documented_dispatch("task-3")), OWN_CHAT)  # no target set
    with running_host(ws) as host:
        # It learns that its dispatch was taken, and that its run is at work, from the file.
        wait_until(lambda: status_of(andy, STEERED, "active") == "running", HANG_GUARD_S,
                   "the coordinator to see its run running", host.log)  # fmt: skip
        andy.steer(STEERED, "Only touch src/retry.py")
        for run_id in (STEERED, "task-2"):
            wait_until(lambda r=run_id: status_of(andy, r) == "review_requested", HANG_GUARD_S,
                       f"the coordinator to see {run_id} in review", host.log)  # fmt: skip
        wait_until(lambda: runs_seen(andy).get("dispatch_blocks"), HANG_GUARD_S,
                   "the coordinator to see its blocked dispatch", host.log)  # fmt: skip
    seen = runs_seen(andy)
    assert seen["scope"] == "jarvis"
    assert {r["run_id"]: r["group_folder"] for r in seen["recent"]} == {
        STEERED: "jarvis-worker-1", "task-2": "jarvis-worker-2"
    }  # fmt: skip
    (block,) = seen["dispatch_blocks"]
    assert (block["target_jid"], block["reason_code"], block["run_id"]) == (
        OWN_CHAT, "dispatch_to_own_chat", "task-3"
    )  # fmt: skip
    # The steer went from the coordinator's tasks/ to the runner and back, acknowledged.
    (steer,) = rows(conn, "SELECT operator, message, status FROM steering_events")
    assert steer == {"operator": "andy-developer", "message": "Only touch src/retry.py",
                     "status": "acked"}  # fmt: skip
    summaries = [r["summary"] for r in rows(
        conn, "SELECT summary FROM progress_events WHERE run_id = ? ORDER BY id", [STEERED]
    )]  # fmt: skip
    assert "Steered: Only touch src/retry.py" in summaries
    # Its commit is on its branch, and its dispatch is the one NanoClaw would have run.
    row = run_row(conn, STEERED)
    assert row["commit_sha"] == run_git(origin, "rev-parse", "jarvis-retry")
    assert json.loads(row["dispatch_json"])["output_contract"]["required_fields"] == [
        "run_id", "branch", "pr_skipped_reason", "commit_sha", "files_changed", "test_result",
        "risk",
    ]  # fmt: skip
    # NanoClaw's tree is NanoClaw's: its chat message and follow-up are where it left them.
    assert tree(nanoclaw) == nanoclaws and said.exists()
