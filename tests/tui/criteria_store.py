"""Runs with acceptance criteria, taken through the real intake, gates and verification.

A run is dispatched with its criteria listed (no universal checklist), started, given a valid
completion, then verified by `core.criteria.run_criteria` in its checkout under the workspace,
exactly as the host would. Durations are fixed afterwards so a capture never depends on how
fast the machine checked a file.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from core.criteria import run_criteria
from core.criteria.allowlist import DEFAULT_POLICY
from core.criteria.verify import Verification
from core.intake import submit_dispatch
from core.lifecycle import Action
from core.moves import host_move
from core.store.api import Row
from core.store.sqlite_store import SqliteStore
from core.verdicts import record_completion
from tests.core.store_helpers import dispatch_doc
from tests.tui.conftest import START, build_store, ticking_clock

#: What an operator asked for in the criteria runs: an install guide with its section.
INSTALL_CRITERIA: list[dict[str, Any]] = [
    {
        "type": "file_exists",
        "path": "docs/install.md",
        "description": "The install guide exists",
    },
    {
        "type": "content_match",
        "path": "docs/install.md",
        "pattern": "^## Installation",
        "description": "It has an Installation section",
    },
    {"type": "file_exists", "path": "README.md", "description": "The README is kept"},
]

#: A criterion whose command is not on the allowlist: verification waits for an operator.
SMOKE_CRITERION: dict[str, Any] = {
    "type": "command_success",
    "command": ["./scripts/smoke.sh", "--fast"],
    "description": "The smoke script passes",
}

#: The checkout files that satisfy `INSTALL_CRITERIA`.
INSTALL_GUIDE = "# Fleet dashboard\n\n## Installation\n\nRun `make install`.\n"


def completion_output(doc: dict[str, Any]) -> bytes:
    """A worker's output with a completion every gate accepts for ``doc``."""
    completion = {
        "run_id": doc["run_id"],
        "branch": doc["branch"],
        "commit_sha": "4e5d6c7",
        "files_changed": ["docs/install.md"],
        "test_result": "pytest tests/test_retry.py: 9 passed",
        "risk": "low - documentation only",
        "pr_url": "https://github.com/acme-labs/fleet-engine/pull/88",
    }
    return f"Done.\n<completion>\n{json.dumps(completion)}\n</completion>\n".encode()


def fixed_durations(verification: Verification) -> Verification:
    """``verification`` with every duration a fixed, plausible number of milliseconds."""
    outcomes = [replace(o, duration_ms=3 + 2 * n) for n, o in enumerate(verification.outcomes)]
    return replace(verification, outcomes=outcomes)


def checkout(workspace_root: Path, run_id: str) -> Path:
    path = run_criteria.checkout_dir(workspace_root, run_id)
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_criteria_run(
    store: SqliteStore,
    run_id: str,
    criteria: list[dict[str, Any]],
    *,
    files: dict[str, str] | None = None,
) -> Row:
    """A run with ``criteria``, completed and verified once against a checkout holding
    ``files`` (path → text; none: an empty checkout). Returns the run as verification left it.
    """
    doc = dispatch_doc(run_id, acceptance_criteria=criteria, universal_criteria=False)
    result = submit_dispatch(
        store, doc, source_lane="main", target_lane="jarvis-worker-1", actor="test"
    )
    assert result.outcome == "enqueued", result.to_json()
    host_move(store, run_id, Action.START)
    completed = record_completion(store, run_id, completion_output(doc))
    assert completed is not None and completed["verification_state"] == run_criteria.PENDING
    root = store.path.parent
    where = checkout(root, run_id)
    for name, text in (files or {}).items():
        target = where / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    run = run_criteria.begin(store, run_id)
    assert run is not None
    verification = run_criteria.verify_run(store, root, run, DEFAULT_POLICY)
    ended = run_criteria.finish(store, run_id, fixed_durations(verification))
    assert ended is not None
    return ended


def build_criteria_store(db_path: Path) -> Path:
    """`build_store`'s runs, and two with criteria: ``run-criteria`` failed by them (an empty
    checkout but for its README), ``run-approval`` waiting for its smoke script to be allowed.
    Every timestamp is fixed, so a capture of it is the same on every machine."""
    build_store(db_path)
    ticks = ticking_clock(START + timedelta(minutes=20))
    store = SqliteStore(db_path, clock=lambda: next(ticks))
    try:
        readme = {"README.md": "# Fleet dashboard\n"}
        make_criteria_run(store, "run-criteria", INSTALL_CRITERIA, files=readme)
        make_criteria_run(store, "run-approval", [INSTALL_CRITERIA[2], SMOKE_CRITERION],
                          files=readme)  # fmt: skip
    finally:
        store.close()
    return db_path
