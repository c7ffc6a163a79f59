"""The universal checklist is the task-dispatcher record's rule, not a NanoClaw dispatch's.

A NanoClaw dispatch names its own ``acceptance_tests``; it gets the checklist (tests, lint,
changelog, backlog) only when it sets ``universal_criteria: true`` or its workspace sets
``[criteria] universal = true``. Plain task text and task-dispatcher records keep the
document's default (on).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.criteria import run_criteria
from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc

CHECKLIST = ["test_pass", "no_lint_errors", "changelog_updated", "backlog_updated"]
SAMPLE = (
    Path(__file__).resolve().parents[2] / "sample_runs" / "dispatches" / "valid-backend-fix.json"
)


def _nanoclaw(run_id: str, **changes: Any) -> dict[str, Any]:
    doc = dispatch_doc(run_id, input="Fix the retry counter.", **changes)
    if "universal_criteria" not in changes:
        doc.pop("universal_criteria")  # the helper turns it off; these tests need it unset
    return doc


@pytest.mark.parametrize(
    ("flag", "workspace", "expected"),
    [
        (None, False, []),
        (None, True, CHECKLIST),
        (True, False, CHECKLIST),
        (False, True, []),
    ],
)
def test_a_dispatch_gets_the_checklist_only_when_it_or_the_workspace_asks(
    tmp_path: Path, flag: bool | None, workspace: bool, expected: list[str]
) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        extra = {} if flag is None else {"universal_criteria": flag}
        result = submit_dispatch(store, _nanoclaw("r1", **extra), source_lane="main",
                                 target_lane="jarvis-worker-1", actor="test",
                                 universal_default=workspace)  # fmt: skip
        assert result.outcome == "enqueued", result.to_json()
        run = store.get_run("r1")
        assert run is not None
        assert [c["type"] for c in run_criteria.criteria_of(run)] == expected
        assert bool(run["universal_criteria"]) is bool(expected)
        notes = store.rows("SELECT payload FROM journal WHERE run_id = 'r1' AND kind = 'created'")
        [why] = [n for n in json.loads(notes[0]["payload"])["criteria"]["notes"]
                 if n.startswith("universal checklist")]  # fmt: skip
        assert why.startswith("universal checklist " + ("on" if expected else "off"))
    finally:
        store.close()


def _jarvis(*args: str, stdin: str | None = None) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "jarvis_cli", *args, "--json"], input=stdin,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def test_jarvis_dispatch_reads_the_workspace_setting(tmp_path: Path) -> None:
    plain, asking = tmp_path / "plain", tmp_path / "asking"
    asking.mkdir()
    (asking / "jarvis.toml").write_text("[criteria]\nuniversal = true\n")
    for ws in (plain, asking):
        code, done = _jarvis("dispatch", str(SAMPLE), "--workspace", str(ws))
        assert (code, done["outcome"]) == (0, "enqueued"), done
    _, quiet = _jarvis("criteria", "task-20260222-014", "--workspace", str(plain))
    _, full = _jarvis("criteria", "task-20260222-014", "--workspace", str(asking))
    assert quiet["criteria"] == []
    assert [c["type"] for c in full["criteria"]] == CHECKLIST


def test_jarvis_dispatch_refuses_an_unusable_workspace_config(tmp_path: Path) -> None:
    (tmp_path / "jarvis.toml").write_text("[criteria]\nuniversal = 'yes please'\n")
    code, done = _jarvis("dispatch", str(SAMPLE), "--workspace", str(tmp_path))
    assert code == 2
    assert done["error"]["code"] == "config_unusable"


def test_extract_says_what_intake_would_do() -> None:
    _, dispatch = _jarvis("criteria", "extract", str(SAMPLE))
    assert dispatch["criteria"] == []
    assert any(n.startswith("universal checklist off") for n in dispatch["notes"])
    asking = json.loads(SAMPLE.read_text()) | {"universal_criteria": True}
    _, asked = _jarvis("criteria", "extract", "-", stdin=json.dumps(asking))
    assert [c["type"] for c in asked["criteria"]] == CHECKLIST
    _, plain = _jarvis("criteria", "extract", "-", stdin="Fix the retry counter.")
    assert [c["type"] for c in plain["criteria"]] == CHECKLIST
