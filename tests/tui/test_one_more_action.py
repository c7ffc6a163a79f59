"""The registry of operator actions drives both front ends: one entry more (and its engine
call) is a key, a place on the key bar, a palette command, a line of help and a verb."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.processes import HANG_GUARD_S


def test_one_registered_action_is_everywhere_an_action_is(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.tui.one_more_action", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["binding"] == ["run.hold"]
    assert found["key_bar"] == ["Hold", True]  # on the bar, and it can act on a queued run
    assert found["key_bar_on_done"] == ["Hold", False]  # dimmed where its stages say no
    assert found["palette"] == ["Run: Hold run-queued"]
    assert found["help"] == ["Hold a queued run (asks nothing)"]
    assert found["note"] == ["Held run run-queued: now queued."]
    assert [call["run_id"] for call in found["calls_from_console"]] == ["run-queued"]
    cli = found["cli"]
    assert cli["listed"] and cli["code"] == 0, cli
    assert cli["output"]["ok"] is True and cli["output"]["run"]["run_id"] == "run-queued"
    assert cli["calls"] == [{"run_id": "run-queued", "operator": "cli-operator", "version": None,
                             "options": {"why": "waiting on a review"}}]  # fmt: skip
