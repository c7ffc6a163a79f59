"""What the simulated worker leaves in its checkout: files that hold what their kind holds.

It used to append a dated line and a ticked box to every file it "changed", so a Python test
file became markdown: the universal checklist's test and lint runs failed in every checkout.
"""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path
from typing import Any

import pytest

from core.criteria.extract import extract_criteria
from jarvis_sim import sim_task, sim_work, simworker

SAMPLES = Path(__file__).resolve().parents[2] / "sample_runs" / "dispatches"
TODAY_RE = r"## \d{4}-\d{2}-\d{2}"


def _dispatch(name: str = "valid-backend-fix.json") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SAMPLES / name).read_text())
    return doc


def _work(tmp_path: Path, dispatch: dict[str, Any], criteria: list[dict[str, Any]]) -> Path:
    task = sim_task.read_task(dispatch, dispatch["run_id"], criteria)
    outcome = sim_work.build_completion(dispatch, task, "ok", random.Random(1))
    sim_work.write_checkout(str(tmp_path), outcome.completion, task)
    # A retry writes the same files again.
    sim_work.write_checkout(str(tmp_path), outcome.completion, task)
    return tmp_path


@pytest.mark.parametrize(
    "text", [None, "Change src/app/core.py and cover it in tests/core_test.py and tests/test_x.py."]
)
def test_python_files_stay_python_and_tests_are_tests(tmp_path: Path, text: str | None) -> None:
    dispatch = _dispatch()
    if text is not None:
        dispatch["input"] = text
    checkout = _work(tmp_path, dispatch, [])
    written = sorted(checkout.rglob("*.py"))
    assert written, "the worker changed no Python file"
    for path in written:
        tree = ast.parse(path.read_text(), filename=str(path))  # raises on markdown
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        if path.name.startswith("test_") or path.stem.endswith("_test"):
            assert names and all(n.startswith("test_") for n in names), path


def test_a_checklist_in_the_criteria_gets_a_dated_changelog_and_a_ticked_backlog(
    tmp_path: Path,
) -> None:
    checklist = extract_criteria("", universal=True).criteria
    checkout = _work(tmp_path, _dispatch(), checklist)
    changelog = (checkout / "CHANGELOG.md").read_text()
    backlog = (checkout / "BACKLOG.md").read_text()
    import re

    assert len(re.findall(TODAY_RE, changelog)) == 2  # one entry per attempt, appended
    assert backlog.count("- [x] ") == 2
    # Nothing else carries bookkeeping lines.
    for path in checkout.rglob("*"):
        if path.is_file() and path.name not in ("CHANGELOG.md", "BACKLOG.md"):
            assert "- [x]" not in path.read_text(), path


def test_without_such_criteria_no_bookkeeping_files_appear(tmp_path: Path) -> None:
    checkout = _work(tmp_path, _dispatch(), [])
    assert not (checkout / "CHANGELOG.md").exists()
    assert not (checkout / "BACKLOG.md").exists()


def test_criteria_from_the_environment_reach_the_task(tmp_path: Path) -> None:
    env = {
        "JARVIS_RUN_ID": "task-20260222-014",
        "JARVIS_LANE": "jarvis-worker-1",
        "JARVIS_DISPATCH": json.dumps(_dispatch()),
        "JARVIS_PROGRESS_DIR": str(tmp_path),
        "JARVIS_STEER_FILE": str(tmp_path / "s.json"),
        "JARVIS_ACK_FILE": str(tmp_path / "a.json"),
        "JARVIS_CRITERIA": json.dumps([{"type": "backlog_updated", "path": "TODO.md",
                                        "pattern": r"\[x\]", "description": "d"}]),
    }  # fmt: skip
    config = simworker.load_config(env)
    task = sim_task.read_task(config.dispatch, config.run_id, config.criteria)
    assert "TODO.md" in task.files and "TODO.md" not in task.asked
    with pytest.raises(simworker.ConfigError, match="JARVIS_CRITERIA"):
        simworker.load_config({**env, "JARVIS_CRITERIA": "{"})
