"""``jarvis approve --wait`` on a run whose merge no host carries out: the approval stands, the
wait ends after ``--timeout`` refused ``merge_pending`` naming the host it waits for; a timeout
that is not a number of seconds is refused before anything is done."""

from __future__ import annotations

import json
from pathlib import Path

from core.store.sqlite_store import SqliteStore
from tests.jarvis_cli import jarvis
from tests.tui.merge_store import reviewed_with_branch


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    try:
        reviewed_with_branch(store, "r1")
    finally:
        store.close()
    return ws


def stage(ws: Path) -> tuple[str, str | None, int]:
    store = SqliteStore(ws / "jarvis.db")
    try:
        run = store.get_run("r1") or {}
        return run["state"], run["merge_state"], run["version"]
    finally:
        store.close()


def test_a_bad_timeout_is_refused_and_nothing_is_done(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    before = stage(ws)
    done = jarvis("approve", "r1", "--wait", "--timeout", "soon", "--workspace", ws, "--json")
    result = json.loads(done.stdout)
    assert done.code == 1 and result["refusal"]["code"] == "bad_timeout", result
    assert "'soon' is not a number of seconds" in result["refusal"]["message"]
    assert stage(ws) == before


def test_a_wait_with_no_host_ends_refused_with_the_approval_standing(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    _, _, version = stage(ws)
    done = jarvis("approve", "r1", "--wait", "--timeout", "0.3", "--workspace", ws, "--json")
    result = json.loads(done.stdout)
    assert done.code == 1 and result["refusal"]["code"] == "merge_pending", result
    message = result["refusal"]["message"]
    assert "still pending after 0.3 s" in message and "the workspace's host" in message
    assert "The approval stands" in message
    assert result["merge"]["pending"] is True
    assert stage(ws) == ("review_requested", "merging", version + 1)
    # In words, without --json: where it stands, and how to find out later.
    again = jarvis("show", "r1", "--workspace", ws)
    assert "◈ merge pending: Merge of" in again.stdout
