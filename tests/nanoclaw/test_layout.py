"""What the host leaves alone in a lane folder: the ``input/`` channel a NanoClaw runner reads
(host → container follow-ups and ``_close``) and the ``worker_runs.json`` snapshot its agents
read. Neither is an event, so neither is ever quarantined; anything else misplaced still is."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ipc.layout import IpcLayout, Rejection

LANE = "jarvis-worker-1"


@pytest.fixture
def layout(tmp_path: Path) -> IpcLayout:
    return IpcLayout(tmp_path / "data" / "ipc")


@pytest.mark.parametrize(
    "relative",
    [
        f"{LANE}/input/1773741605123-a9f0.json",
        f"{LANE}/input/1773741605123-a9f0.json.tmp",
        f"{LANE}/input/_close",
        f"{LANE}/input/deeper/x.json",
        "andy-developer/input/x.json",
        f"{LANE}/worker_runs.json",
        f"{LANE}/worker_runs.json.tmp",
        "main/worker_runs.json",
        # NanoClaw's host's other snapshots, still there in a deployment moved under Jarvis
        f"{LANE}/available_groups.json",
        "andy-developer/current_tasks.json",
        "main/control_plane_status.json",
    ],
)
def test_the_lanes_own_files_are_not_events(layout: IpcLayout, relative: str) -> None:
    assert layout.classify(layout.root / relative) is None


@pytest.mark.parametrize(
    "relative",
    [
        "worker_runs.json",  # not in a lane
        "available_groups.json",
        f"{LANE}/available_groups/x.json",
        f"{LANE}/progress/available_groups.json",
        f"{LANE}/inputs/x.json",
        "bad lane/input/x.json",
    ],
)
def test_other_misplaced_files_are_still_refused(layout: IpcLayout, relative: str) -> None:
    assert isinstance(layout.classify(layout.root / relative), Rejection)
