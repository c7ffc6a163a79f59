"""What cannot reach the store is refused up front, with its own code: integers too large for
SQLite, and folders in the IPC tree that are symbolic links (moved aside, never followed)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.host.host import Host
from core.ipc.payloads import parse_progress
from tests.host.inproc import LANE, host_in_process, progress_body, reasons, write_progress

RUN = "bounds-run-1"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with host_in_process(tmp_path / "ws", RUN) as made:
        yield made


def seqs(host: Host) -> list[int]:
    assert host.store is not None
    return [r["seq"] for r in host.store.rows("SELECT seq FROM progress_events ORDER BY seq")]


def test_a_seq_beyond_sqlites_integers_is_refused_with_its_own_code(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    write_progress(host, RUN, 1)
    huge = write_progress(host, RUN, 2**70)
    write_progress(host, RUN, 3)
    with caplog.at_level(logging.WARNING, logger="jarvis.host"):
        host.sweep()
    (reason,) = reasons(host)
    assert reason["code"] == "out_of_range", reason
    assert "seq" in reason["message"], reason
    assert reason["original_path"] == str(huge)
    # The good files of the same batch went in with it: no fault, no one-by-one retry.
    assert seqs(host) == [1, 3]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


@pytest.mark.parametrize("seq", [2**63 - 1, 1])
def test_the_largest_integer_sqlite_stores_is_accepted(host: Host, seq: int) -> None:
    write_progress(host, RUN, seq)
    host.sweep()
    assert reasons(host) == []
    assert seqs(host) == [seq]


def test_the_parser_names_the_bound() -> None:
    errors = parse_progress(json.dumps(progress_body(RUN, 2**63)).encode(), lane=LANE, run_id=RUN)
    assert isinstance(errors, list)
    assert [(e.field, e.code) for e in errors] == [("seq", "out_of_range")]


# -- symbolic links in place of folders -----------------------------------------------------------


def _outside_with_progress(tmp_path: Path, run_id: str) -> Path:
    """A folder outside the tree holding a valid-looking progress event for ``run_id``."""
    outside = tmp_path / "outside"
    (outside / run_id).mkdir(parents=True)
    (outside / run_id / "00000001-1.json").write_text(json.dumps(progress_body(run_id, 1)))
    return outside


def _assert_link_quarantined(host: Host, link: Path, target: Path) -> dict[str, object]:
    (reason,) = reasons(host)
    assert reason["code"] == "symlink", reason
    assert reason["original_path"] == str(link)
    assert reason["outcome"] == "moved", reason
    stored = Path(str(reason["stored_as"]))
    # The link itself was moved, never followed: it still points where it did, and what it
    # pointed at is untouched.
    assert stored.is_symlink() and os.readlink(stored) == str(target)
    assert not os.path.lexists(link)
    return reason


def test_a_symlinked_run_folder_is_quarantined_not_followed(host: Host, tmp_path: Path) -> None:
    outside = _outside_with_progress(tmp_path, RUN)
    progress = host.layout.lane_dir(LANE) / "progress"
    progress.mkdir(parents=True)
    link = progress / RUN
    link.symlink_to(outside / RUN)
    host.sweep()
    reason = _assert_link_quarantined(host, link, outside / RUN)
    assert reason["lane"] == LANE
    assert seqs(host) == []
    assert (outside / RUN / "00000001-1.json").exists()
    host.sweep()  # moved once: nothing more to say
    assert len(reasons(host)) == 1


def test_a_symlinked_lane_folder_is_quarantined_not_followed(host: Host, tmp_path: Path) -> None:
    outside = tmp_path / "lane-elsewhere"
    (outside / "progress").mkdir(parents=True)
    (outside / "progress" / RUN).mkdir()
    (outside / "progress" / RUN / "00000001-1.json").write_text(json.dumps(progress_body(RUN, 1)))
    link = host.layout.root / LANE
    link.symlink_to(outside)
    host.sweep()
    reason = _assert_link_quarantined(host, link, outside)
    assert reason["lane"] == LANE
    assert seqs(host) == []


@pytest.mark.parametrize("folder", ["progress", "tasks", "messages", "steer"])
def test_a_symlinked_folder_of_a_lane_is_quarantined(
    host: Host, tmp_path: Path, folder: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    lane = host.layout.lane_dir(LANE)
    lane.mkdir(parents=True)
    link = lane / folder
    link.symlink_to(outside)
    host.sweep()
    _assert_link_quarantined(host, link, outside)


def test_a_run_whose_lane_folder_is_a_link_fails_to_start_without_writing_through_it(
    host: Host, tmp_path: Path
) -> None:
    """The link can appear between a sweep and a start: the start refuses, the host goes on."""
    assert host.store is not None
    outside = tmp_path / "lane-elsewhere"
    outside.mkdir()
    (host.layout.root / LANE).symlink_to(outside)
    assert host.launching.start(RUN) is False
    run = host.store.get_run(RUN)
    assert run is not None and run["state"] == "failed", run
    assert "symbolic link" in str(run["state_reason"]), run["state_reason"]
    assert list(outside.iterdir()) == []
    assert host.workers == {}
