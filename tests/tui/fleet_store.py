"""A workspace for the fleet and quarantine views: runs on three lanes, a configuration naming
worker profiles, two hosts (one lost), a paused lane, and quarantined files (one hostile)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from core.host.fleet import Lease
from core.lifecycle import RunState
from core.store.api import iso
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run
from tests.tui.conftest import HOSTILE, fixed_clock, ticking_clock

CONFIG = """\
[workers]
concurrency = 2
lane_concurrency = { "docs" = 0 }
default = "sim"

[workers.sim]
agent = "command"
command = ["python3", "-m", "jarvis_sim.simworker"]
sandbox = "none"

[workers.claude]
agent = "claude-code"
sandbox = "bwrap"

[lanes."backend"]
worker = "claude"
"""

#: lane → states of its runs.
LANES = {
    "backend": [RunState.RUNNING, RunState.RUNNING, RunState.QUEUED, RunState.DONE],
    "frontend": [RunState.QUEUED, RunState.QUEUED, RunState.REVIEW_REQUESTED],
    "docs": [RunState.QUEUED],
}

#: The quarantined files: name → (lane, code, message, content).
QUARANTINED = {
    "20260102T101500.000000Z-frontend-0007-p.json": (
        "frontend", "unknown_run", "There is no run ghost-7.", '{"run_id": "ghost-7"}\n'),
    "20260102T102000.000000Z-backend-0003-p.json": (
        "backend", "bad_json", f"The file is not JSON: {HOSTILE}", f"not json {HOSTILE}\n"),
}  # fmt: skip


def build_fleet_workspace(db_path: Path) -> Path:
    """Fill the workspace of ``db_path`` (its folder) and return ``db_path``."""
    root = db_path.parent
    (root / "jarvis.toml").write_text(CONFIG)
    ticks = ticking_clock()
    store = SqliteStore(db_path, clock=lambda: next(ticks))
    try:
        n = 0
        for lane, states in LANES.items():
            for state in states:
                n += 1
                make_run(store, f"run-{lane}-{n}", state, lane=lane)
        with store.transaction() as tx:
            tx.pause_lane("frontend", "release freeze until the tag", "alice")
    finally:
        store.close()
    store = SqliteStore(db_path)
    try:
        for name, lanes in (("build-01", ["backend", "frontend"]), ("gpu-01", None)):
            Lease(store, name, Path("/srv/jarvis") / name, lanes, 5.0, 3600.0).register()
        quiet, beat = (iso(fixed_clock() - timedelta(seconds=s)) for s in (41, 2))
        with store.transaction() as tx:
            tx.execute(
                "UPDATE hosts SET heartbeat_at = ?, pid = 4242, machine = name || '.lan'", [beat]
            )
            tx.execute("UPDATE hosts SET heartbeat_at = ?, lease_until = ? WHERE name = "
                       "'gpu-01'", [quiet, quiet])  # fmt: skip
            tx.execute("UPDATE lane_pauses SET paused_at = ?", [iso(fixed_clock())])
    finally:
        store.close()
    errors = root / "data" / "ipc" / "errors"
    errors.mkdir(parents=True, exist_ok=True)
    for name, (lane, code, message, content) in QUARANTINED.items():
        (errors / name).write_text(content)
        run_id = "ghost-7" if lane == "frontend" else "run-backend-3"
        original = root / "data" / "ipc" / lane / "progress" / run_id / name.split("-", 2)[2]
        original.parent.mkdir(
            parents=True, exist_ok=True
        )  # the lane's folder, as its worker left it
        at = f"2026-01-02T{name[9:11]}:{name[11:13]}:00.000000Z"
        reason = {"code": code, "message": message, "lane": lane, "outcome": "moved",
                  "original_path": str(original.resolve()), "stored_as": str(errors / name),
                  "quarantined_at": at}  # fmt: skip
        (errors / f"{name}.reason.json").write_text(json.dumps(reason))
    return db_path
