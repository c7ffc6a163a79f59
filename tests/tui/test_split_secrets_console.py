"""The console masks a secret split by an escape sequence, wherever it shows worker text.

Two stores: one filled by the engine's own ingest and gates from a worker's files (what a host
stores today), and one holding the same texts unmasked, as an engine older than the rule stored
them. On both, the run table, the progress stream, the gates and the run details must show the
masked form and no piece of either secret past the four characters a mask keeps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from core.lifecycle import Action
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from core.verdicts import record_completion
from jarvis_tui.modals.run_details import RunDetailsScreen
from tests.host.inproc import host_in_process, write_progress
from tests.tui.conftest import build_store, ticking_clock
from tests.tui.helpers import console_on

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SPLIT_AWS = f"{AWS[:8]}\x1b[0m{AWS[8:]}"
SPLIT_GITHUB = f"{GITHUB[:10]}\x1b[31m{GITHUB[10:]}\x1b[0m"
#: What a reader could put a secret back together from: every piece past a mask's four.
PIECES = (AWS[4:8], AWS[8:], GITHUB[4:10], GITHUB[10:])
SUMMARY = f"{SPLIT_AWS} via {SPLIT_GITHUB}"
RUN = "run-split"


def by_ingest(tmp_path: Path) -> Path:
    """The store a host fills today, from the worker's progress file and completion."""
    with host_in_process(tmp_path / "ws", RUN) as host:
        assert host.store is not None
        host_move(host.store, RUN, Action.START)
        write_progress(host, RUN, 1, SUMMARY, tool_used=f"curl -H {SPLIT_GITHUB}")
        host.sweep()
        output = {
            "run_id": RUN, "branch": "jarvis-retry-counter", "commit_sha": "abc1234",
            "files_changed": [f"keys/{SPLIT_AWS}.env"], "test_result": f"passed {SPLIT_AWS}",
            "risk": f"token {SPLIT_GITHUB}", "pr_skipped_reason": "no remote",
        }  # fmt: skip
        completion = f"<completion>{json.dumps(output)}</completion>\n"
        record_completion(host.store, RUN, completion.encode())
        return host.workspace.db_path


def unmasked(tmp_path: Path) -> Path:
    """The same texts as an older engine stored them: as the worker wrote them."""
    db = build_store(tmp_path / "jarvis.db")
    ticks = ticking_clock()
    store = SqliteStore(db, clock=lambda: next(ticks))
    try:
        with store.transaction() as tx:
            tx.execute(
                "INSERT INTO progress_events (run_id, attempt, seq, timestamp, phase, summary, "
                "tool_used, ingested_at) VALUES ('run-running', 1, 3, '2026-01-02T09:49:00.000Z', "
                "'edit', ?, ?, '2026-01-02T09:49:00.000Z')",
                [SUMMARY, f"curl -H {SPLIT_GITHUB}"],
            )
            tx.touch_run(
                "run-running",
                changes={"last_progress_summary": SUMMARY, "test_summary": f"passed {SPLIT_AWS}",
                         "risk_summary": f"token {SPLIT_GITHUB}"},
                kind="progress",
                payload={"attempt": 1, "seq": 3, "phase": "edit", "summary": SUMMARY,
                         "tool_used": None, "timestamp": "2026-01-02T09:49:00.000Z"},
                actor="jarvis-worker-1",
            )  # fmt: skip
            tx.execute(
                "INSERT INTO gate_results (run_id, attempt, name, passed, detail, evaluated_at) "
                "VALUES ('run-running', 1, 'tests_pass', 0, ?, '2026-01-02T09:50:00.000Z')",
                [f"failed with {SPLIT_AWS}"],
            )
    finally:
        store.close()
    return db


def screen(app: Any) -> str:
    """Every line the console would draw now, as text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def leaked(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


async def details(pilot: Pilot[Any]) -> str:
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, RunDetailsScreen)
    return str(pilot.app.screen.query_one(".dialog-body").render())


@pytest.mark.parametrize(("build", "run_id"), [(by_ingest, RUN), (unmasked, "run-running")])
async def test_the_console_masks_secrets_split_by_escapes(
    tmp_path: Path, build: Any, run_id: str
) -> None:
    db = build(tmp_path)
    async with console_on(db, run_id, size=(200, 50)) as (app, pilot):
        main = screen(app)
        assert not leaked(main), leaked(main)
        assert "AKIA****" in main and "ghp_****" in main
        body = await details(pilot)
        assert not leaked(body), leaked(body)
        assert "passed AKIA****" in body and "token ghp_****" in body
        await pilot.press("escape")
