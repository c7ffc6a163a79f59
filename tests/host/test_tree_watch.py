"""The IPC tree's inotify watch (`core.ipc.tree_watch`) and the drain that reads it, on the real
kernel: what is reported, what is not, folders made, moved and linked, and a queue overflowed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.ipc.files import atomic_write_json
from core.ipc.tree_watch import TreeWatch
from tests.host.inproc import LANE, host_in_process, write_progress
from tests.processes import HANG_GUARD_S, wait_until

pytestmark = pytest.mark.skipif(not TreeWatch.supported(), reason="inotify is Linux's")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ipc"
    for folder in ("progress/r-1", "steer", "tasks", "input"):
        (root / LANE / folder).mkdir(parents=True)
    (root / "errors").mkdir()
    return root


@pytest.fixture
def watch(tree: Path) -> Iterator[TreeWatch]:
    opened = TreeWatch.open(str(tree))
    assert opened is not None and opened.complete
    yield opened
    opened.close()


def reported(watch: TreeWatch, until: int = 1) -> list[str]:
    """What the watch reports, read until ``until`` files came (the kernel queues at once, but
    a read is only what was queued when it ran)."""
    found: list[str] = []

    def more() -> bool:
        names, lost = watch.read()
        assert not lost
        found.extend(names)
        return len(found) >= until

    wait_until(more, f"{until} file(s) reported")
    return found


def test_a_file_renamed_into_place_is_reported_once_and_its_temporary_never(
    tree: Path, watch: TreeWatch
) -> None:
    target = tree / LANE / "progress" / "r-1" / "1-1.json"
    atomic_write_json(target, {"seq": 1})  # a hidden temporary, written, then renamed
    assert reported(watch) == [str(target)]
    assert watch.read() == ([], False)  # the temporary's events are not reported


def test_a_file_written_in_place_is_reported_when_made_and_when_closed(
    tree: Path, watch: TreeWatch
) -> None:
    target = tree / LANE / "tasks" / "t.json"
    target.write_text("{}")
    assert reported(watch, 2) == [str(target)] * 2  # made (empty), then closed after writing


def test_the_quarantine_the_lanes_input_and_the_hosts_snapshots_are_not_reported(
    tree: Path, watch: TreeWatch
) -> None:
    (tree / "errors" / "x.json").write_text("{}")
    (tree / LANE / "input" / "follow-up.json").write_text("{}")
    (tree / LANE / "worker_runs.json").write_text("{}")
    marker = tree / LANE / "steer" / "r-1.acked.json"
    marker.write_text("{}")
    assert set(reported(watch, 2)) == {str(marker)}  # only the last one, made and closed


def test_a_new_folders_files_are_taken_with_it_even_those_written_before_its_watch(
    tree: Path, watch: TreeWatch
) -> None:
    # Made, and written into, before the watch reads its parent's event: a file written
    # before the folder is watched is never reported, so the folder is listed.
    folder = tree / LANE / "progress" / "r-2"
    folder.mkdir()
    early = folder / "1-1.json"
    atomic_write_json(early, {"seq": 1})
    found = reported(watch)
    assert found[0] == str(early)
    late = folder / "2-2.json"
    atomic_write_json(late, {"seq": 2})  # and the folder is watched from now on
    assert str(late) in reported(watch)


def test_a_folder_moved_within_the_tree_is_watched_where_it_went_and_one_moved_out_is_not(
    tmp_path: Path, tree: Path, watch: TreeWatch
) -> None:
    before = tree / LANE / "progress" / "r-1"
    within = tree / LANE / "progress" / "r-9"
    before.rename(within)
    assert reported(watch, 0) == []
    atomic_write_json(within / "1-1.json", {"seq": 1})
    assert reported(watch) == [str(within / "1-1.json")]
    outside = tmp_path / "elsewhere"
    within.rename(outside)
    assert watch.read() == ([], False)  # the move itself reports no file
    atomic_write_json(outside / "2-2.json", {"seq": 2})
    marker = tree / LANE / "tasks" / "after.json"
    atomic_write_json(marker, {"k": 1})  # reads come in order: the marker comes after the rest
    assert reported(watch) == [str(marker)]


def test_a_linked_folder_is_never_entered(tmp_path: Path, tree: Path, watch: TreeWatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tree / LANE / "progress" / "r-link").symlink_to(elsewhere)
    atomic_write_json(elsewhere / "1-1.json", {"seq": 1})
    marker = tree / LANE / "tasks" / "after.json"
    atomic_write_json(marker, {"k": 1})
    assert reported(watch) == [str(marker)]  # nothing from behind the link


def test_a_queue_that_overflowed_is_said_so(tree: Path, watch: TreeWatch) -> None:
    overflow(tree / LANE / "tasks")
    lost = False
    while True:
        names, overflowed = watch.read()
        lost = lost or overflowed
        if not names and not overflowed:
            break
    assert lost


# -- the drain over the watch --------------------------------------------------------------


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "watchfiles"])
def test_the_drain_ingests_what_the_watch_reports(tmp_path: Path, inotify: bool) -> None:
    with host_in_process(tmp_path, "r-1") as host:
        write_progress(host, "r-1", 1)  # makes the run's folder, before the watch
        host.inbox.sweep()
        host.inbox.start_watcher(inotify=inotify)
        try:
            assert (host.inbox.tree is not None) is inotify and host.inbox.watching
            files = [write_progress(host, "r-1", seq) for seq in (2, 3)]

            def drained() -> bool:
                host.inbox.drain(timeout=0.05)
                return host.store.progress_event_count() == 3

            wait_until(drained, "the reported files to be ingested")
            assert not any(path.exists() for path in files)
        finally:
            host.stop()  # ends the watchfiles thread
            host.inbox.close()


def test_a_watch_that_lost_events_makes_the_next_sweep_whole_and_due(tmp_path: Path) -> None:
    with host_in_process(tmp_path, "r-1") as host:
        host.inbox.sweep()
        host.inbox.start_watcher()
        try:
            assert host.inbox.tree is not None
            young = write_progress(host, "r-1", 1)  # its report is dropped below, as if lost
            tree = host.inbox.tree
            wait_until(lambda: bool(tree.read()[0]), "the file's report")
            host.inbox.sweep()  # a watching sweep leaves a young file to the watch
            assert young.exists()
            overflow(young.parent)  # a watched folder
            host.inbox.drain(timeout=HANG_GUARD_S)
            assert host.inbox.missed  # the host's next tick sweeps (`Host._sweep_if_due`)
            host.inbox.sweep()
            assert not young.exists() and host.store.progress_event_count() == 1
            assert not host.inbox.missed
        finally:
            host.inbox.close()


def overflow(folder: Path) -> None:
    """More events in ``folder`` than the kernel queues: hidden files made, two events each."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    for n in range(limit // 2 + 10):
        os.close(os.open(folder / f".t{n}", os.O_CREAT | os.O_WRONLY, 0o600))
