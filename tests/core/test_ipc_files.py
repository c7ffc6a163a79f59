from __future__ import annotations

import errno
import json
import os
import stat
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from core.ipc import files
from core.ipc.files import (
    MAX_EVENT_BYTES,
    REASON_SUFFIX,
    QuarantineError,
    atomic_write_json,
    quarantine,
    read_event,
)
from core.ipc.layout import Event, IpcLayout, Rejection

LANE = "jarvis-worker-1"
RUN = "task-7"
NOW = datetime(2026, 11, 22, 3, 30, 0, 120000, tzinfo=UTC)


def clock() -> datetime:
    return NOW


@pytest.fixture
def layout(tmp_path: Path) -> IpcLayout:
    made = IpcLayout(tmp_path / "data" / "ipc")
    made.ensure_lane(LANE)
    return made


def reason_of(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def rejection_code(result: bytes | Rejection | None) -> str:
    assert isinstance(result, Rejection), result
    return result.code


# --- atomic_write_json --------------------------------------------------------------------------


def test_atomic_write_round_trips_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    atomic_write_json(target, {"a": 1, "text": "é"})
    atomic_write_json(target, {"a": 2})
    assert json.loads(target.read_bytes()) == {"a": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_a_failed_rename_leaves_no_json_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(src: Any, dst: Any) -> None:
        raise OSError(errno.EIO, "disk on fire")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        atomic_write_json(tmp_path / "x.json", {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_no_json_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write

    def half(fd: int, data: Any) -> int:
        real_write(fd, bytes(data[:3]))
        raise OSError(errno.ENOSPC, "full")

    monkeypatch.setattr(os, "write", half)
    with pytest.raises(OSError):
        atomic_write_json(tmp_path / "x.json", {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_unserialisable_objects_raise_before_touching_the_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        atomic_write_json(tmp_path / "x.json", {"a": float("nan")})
    assert list(tmp_path.iterdir()) == []


def test_the_temp_file_is_one_every_reader_ignores(
    layout: IpcLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Path] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        seen.append(Path(src))
        assert Path(src).exists() and not Path(dst).exists()  # only the temp is visible
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    target = layout.progress_dir(LANE, RUN) / "1-1.json"
    target.parent.mkdir()
    atomic_write_json(target, {"seq": 1})
    (temp,) = seen
    assert temp.parent == target.parent
    assert temp.name.startswith(f".{target.name}.") and temp.name.endswith(".tmp")
    assert layout.classify(temp) is None
    assert isinstance(layout.classify(target), Event)


def test_a_long_name_still_gets_a_valid_temp_name(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 240 + ".json")
    atomic_write_json(target, {})
    assert target.exists()


# --- read_event ---------------------------------------------------------------------------------


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a": 1}')
    assert read_event(path) == b'{"a": 1}'


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"x" * MAX_EVENT_BYTES)
    assert read_event(path) == b"x" * MAX_EVENT_BYTES
    path.write_bytes(b"x" * (MAX_EVENT_BYTES + 1))
    assert rejection_code(read_event(path)) == "too_large"


def test_a_file_that_grows_after_the_check_is_still_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"x" * 20)
    real_fstat = os.fstat

    def fstat_then_grow(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        path.write_bytes(b"x" * 200)
        return info

    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    assert rejection_code(read_event(path, limit=100)) == "too_large"


def test_a_missing_file_is_gone_not_an_error(tmp_path: Path) -> None:
    assert read_event(tmp_path / "x.json") is None
    assert read_event(tmp_path / "no-dir" / "x.json") is None


def test_a_symlink_is_refused_without_being_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b'{"token": "s3cret"}')
    link = tmp_path / "x.json"
    link.symlink_to(secret)
    result = read_event(link)
    assert rejection_code(result) == "symlink"
    assert isinstance(result, Rejection) and "s3cret" not in result.message


def test_a_dangling_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "x.json"
    link.symlink_to(tmp_path / "nowhere")
    assert rejection_code(read_event(link)) == "symlink"


def test_a_link_swapped_in_after_the_check_is_refused_by_the_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"{}")
    real_lstat = os.lstat

    def lstat_then_swap(target: Any, **kwargs: Any) -> os.stat_result:
        info = real_lstat(target, **kwargs)
        path.unlink()
        path.symlink_to(tmp_path / "secret")
        return info

    (tmp_path / "secret").write_bytes(b"{}")
    monkeypatch.setattr(os, "lstat", lstat_then_swap)
    assert rejection_code(read_event(path)) == "symlink"


def test_a_directory_named_json_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "x.json"
    folder.mkdir()
    assert rejection_code(read_event(folder)) == "not_regular_file"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    assert rejection_code(read_event(fifo)) == "not_regular_file"


def test_a_fifo_swapped_in_after_the_check_does_not_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"{}")
    real_lstat = os.lstat

    def lstat_then_swap(target: Any, **kwargs: Any) -> os.stat_result:
        info = real_lstat(target, **kwargs)
        path.unlink()
        os.mkfifo(path)
        return info

    monkeypatch.setattr(os, "lstat", lstat_then_swap)
    assert rejection_code(read_event(path)) == "not_regular_file"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_an_unreadable_file_is_refused_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"{}")
    path.chmod(0)
    try:
        assert rejection_code(read_event(path)) == "unreadable"
    finally:
        path.chmod(0o600)


def test_a_permission_error_on_open_is_refused_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(*args: Any, **kwargs: Any) -> int:
        raise PermissionError(errno.EACCES, "Permission denied")

    path = tmp_path / "x.json"
    path.write_bytes(b"{}")
    monkeypatch.setattr(os, "open", denied)
    result = read_event(path)
    assert rejection_code(result) == "unreadable"
    assert isinstance(result, Rejection) and "Permission denied" in result.message


def test_a_nul_in_the_path_is_refused_not_raised(tmp_path: Path) -> None:
    assert rejection_code(read_event(tmp_path / "a\x00.json")) == "unreadable"


def test_with_a_root_the_read_walks_down_without_following_links(
    layout: IpcLayout, tmp_path: Path
) -> None:
    path = layout.tasks_dir(LANE) / "t.json"
    path.write_bytes(b"{}")
    assert read_event(path, root=layout.root) == b"{}"
    # Swap the tasks folder for a link after classify passed it: the walk refuses the link.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.json").write_bytes(b'{"stolen": true}')
    path.unlink()
    layout.tasks_dir(LANE).rmdir()
    layout.tasks_dir(LANE).symlink_to(outside)
    assert rejection_code(read_event(path, root=layout.root)) == "symlink"
    assert rejection_code(read_event(path, root=layout.root / LANE)) == "symlink"


def test_with_a_root_a_path_outside_it_is_refused(layout: IpcLayout, tmp_path: Path) -> None:
    other = tmp_path / "x.json"
    other.write_bytes(b"{}")
    assert rejection_code(read_event(other, root=layout.root)) == "outside_tree"


def test_with_a_root_its_real_location_is_accepted(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / LANE / "tasks").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    (real / LANE / "tasks" / "t.json").write_bytes(b"{}")
    assert read_event(real / LANE / "tasks" / "t.json", root=tmp_path / "alias") == b"{}"


def test_with_a_root_missing_folders_mean_gone(layout: IpcLayout) -> None:
    path = layout.progress_dir(LANE, RUN) / "1-1.json"
    assert read_event(path, root=layout.root) is None


def test_with_a_root_a_file_for_a_folder_means_gone(layout: IpcLayout) -> None:
    (layout.lane_dir(LANE) / "plain").write_bytes(b"")
    path = layout.lane_dir(LANE) / "plain" / "x.json"
    assert read_event(path, root=layout.root) is None


# --- quarantine ---------------------------------------------------------------------------------


def quarantine_here(layout: IpcLayout, path: Path, **overrides: Any) -> Path:
    arguments: dict[str, Any] = {
        "lane": LANE,
        "code": "not_json",
        "message": "The document is plain text.",
        "clock": clock,
    }
    arguments.update(overrides)
    return quarantine(path, layout.errors_dir, **arguments)


def test_quarantine_moves_the_bytes_unchanged_and_says_why(layout: IpcLayout) -> None:
    content = bytes(range(256)) * 3
    path = layout.tasks_dir(LANE) / "t1.json"
    path.write_bytes(content)
    reason_path = quarantine_here(layout, path, details={"errors": [{"code": "not_utf8"}]})
    stored = layout.errors_dir / f"20261122T033000.120000Z-{LANE}-t1.json"
    assert reason_path == stored.with_name(stored.name + REASON_SUFFIX)
    assert not path.exists()
    assert stored.read_bytes() == content
    reason = reason_of(reason_path)
    assert reason == {
        "code": "not_json",
        "message": "The document is plain text.",
        "lane": LANE,
        "original_path": str(path),
        "quarantined_at": "2026-11-22T03:30:00.120000Z",
        "details": {"errors": [{"code": "not_utf8"}]},
        "outcome": "moved",
        "outcome_error": None,
        "moved_path": str(path),
        "stored_as": str(stored),
    }


def test_quarantined_files_are_not_events(layout: IpcLayout) -> None:
    path = layout.tasks_dir(LANE) / "t1.json"
    path.write_bytes(b"x")
    reason_path = quarantine_here(layout, path)
    assert layout.classify(reason_path) is None
    for found in layout.errors_dir.iterdir():
        assert layout.classify(found) is None


def test_a_taken_name_gets_a_suffix_and_nothing_is_overwritten(layout: IpcLayout) -> None:
    reasons = []
    for body in (b"first", b"second", b"third"):
        path = layout.tasks_dir(LANE) / "t.json"
        path.write_bytes(body)
        reasons.append(quarantine_here(layout, path))
    assert len(set(reasons)) == 3
    stored = [r.with_name(r.name.removesuffix(REASON_SUFFIX)).read_bytes() for r in reasons]
    assert stored == [b"first", b"second", b"third"]
    assert reasons[1].name.endswith(f"-{LANE}-t.json.2{REASON_SUFFIX}")


def test_an_unknown_or_bad_lane_is_named_unknown(layout: IpcLayout) -> None:
    for lane in (None, "../../etc", "bad lane"):
        path = layout.tasks_dir(LANE) / "t.json"
        path.write_bytes(b"x")
        reason_path = quarantine_here(layout, path, lane=lane)
        assert "-unknown-t.json" in reason_path.name
        assert reason_path.parent == layout.errors_dir
        assert reason_of(reason_path)["lane"] == lane


def test_a_hostile_name_becomes_a_safe_one(layout: IpcLayout) -> None:
    path = layout.tasks_dir(LANE) / ("\x1b[2J" + "é" * 120 + ".json")
    path.write_bytes(b"x")
    reason_path = quarantine_here(layout, path)
    assert reason_path.parent == layout.errors_dir
    assert "\x1b" not in reason_path.name and len(reason_path.name) < 255
    assert reason_of(reason_path)["original_path"] == str(path)


def test_a_symlink_is_moved_as_the_link_never_followed(layout: IpcLayout, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"keep me")
    link = layout.tasks_dir(LANE) / "t.json"
    link.symlink_to(secret)
    reason_path = quarantine_here(layout, link, code="symlink", message="A link.")
    stored = reason_path.with_name(reason_path.name.removesuffix(REASON_SUFFIX))
    assert stored.is_symlink() and os.readlink(stored) == str(secret)
    assert secret.read_bytes() == b"keep me"
    assert reason_of(reason_path)["code"] == "symlink"


def test_a_directory_named_json_is_moved_whole(layout: IpcLayout) -> None:
    folder = layout.tasks_dir(LANE) / "t.json"
    folder.mkdir()
    (folder / "inner").write_bytes(b"inside")
    reason_path = quarantine_here(layout, folder, code="not_regular_file", message="A folder.")
    stored = reason_path.with_name(reason_path.name.removesuffix(REASON_SUFFIX))
    assert (stored / "inner").read_bytes() == b"inside"
    assert reason_of(reason_path)["outcome"] == "moved"


def test_a_fifo_is_moved_without_being_opened(layout: IpcLayout) -> None:
    fifo = layout.tasks_dir(LANE) / "t.json"
    os.mkfifo(fifo)
    reason_path = quarantine_here(layout, fifo, code="not_regular_file", message="A FIFO.")
    stored = reason_path.with_name(reason_path.name.removesuffix(REASON_SUFFIX))
    assert stat.S_ISFIFO(os.lstat(stored).st_mode)
    assert not fifo.exists()


def test_through_a_symlinked_folder_the_link_is_moved_not_the_file(
    layout: IpcLayout, tmp_path: Path
) -> None:
    outside = tmp_path / "host-files"
    outside.mkdir()
    (outside / "config.json").write_bytes(b"the host's own")
    tasks = layout.tasks_dir(LANE)
    tasks.rmdir()
    tasks.symlink_to(outside)
    refused = layout.classify(tasks / "config.json")
    assert isinstance(refused, Rejection) and refused.code == "outside_tree"
    reason_path = quarantine_here(layout, tasks / "config.json", code=refused.code)
    assert (outside / "config.json").read_bytes() == b"the host's own"
    assert not os.path.lexists(tasks)
    reason = reason_of(reason_path)
    assert reason["outcome"] == "moved" and reason["moved_path"] == str(tasks)
    assert os.readlink(reason["stored_as"]) == str(outside)
    assert reason_path.name.endswith(f"-{LANE}-tasks{REASON_SUFFIX}")


@pytest.mark.parametrize("where", ["dotdot", "outside"])
def test_nothing_outside_the_tree_is_moved(layout: IpcLayout, tmp_path: Path, where: str) -> None:
    victim = tmp_path / "victim.json"
    victim.write_bytes(b"keep")
    if where == "dotdot":
        path = layout.tasks_dir(LANE) / ".." / ".." / ".." / ".." / "victim.json"
    else:
        path = victim
    reason = reason_of(quarantine_here(layout, path))
    assert reason["outcome"] == "not_moved" and reason["stored_as"] is None
    assert victim.read_bytes() == b"keep"


def test_a_nul_in_the_path_is_recorded_not_raised(layout: IpcLayout) -> None:
    reason_path = quarantine_here(layout, layout.tasks_dir(LANE) / "a\x00.json")
    assert reason_of(reason_path)["outcome"] == "not_moved"


def test_a_path_through_the_real_root_is_moved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "ipc" / LANE / "tasks").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    layout = IpcLayout(tmp_path / "alias" / "ipc")
    path = real / "ipc" / LANE / "tasks" / "t.json"
    path.write_bytes(b"x")
    assert reason_of(quarantine_here(layout, path))["outcome"] == "moved"
    assert not path.exists()


def test_a_vanished_file_still_gets_a_reason(layout: IpcLayout) -> None:
    path = layout.tasks_dir(LANE) / "gone.json"
    reason_path = quarantine_here(layout, path)
    reason = reason_of(reason_path)
    assert reason["outcome"] == "vanished" and reason["stored_as"] is None
    assert reason["code"] == "not_json"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_an_unmovable_file_is_recorded_not_raised(layout: IpcLayout) -> None:
    path = layout.tasks_dir(LANE) / "t.json"
    path.write_bytes(b"stuck")
    layout.tasks_dir(LANE).chmod(0o500)
    try:
        reason_path = quarantine_here(layout, path)
    finally:
        layout.tasks_dir(LANE).chmod(0o700)
    reason = reason_of(reason_path)
    assert reason["outcome"] == "not_moved" and reason["outcome_error"]
    assert reason["stored_as"] is None
    assert path.read_bytes() == b"stuck"


def test_a_refused_move_is_recorded_not_raised(
    layout: IpcLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(src: Any, dst: Any) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    path = layout.tasks_dir(LANE) / "t.json"
    path.write_bytes(b"stuck")
    monkeypatch.setattr(os, "replace", denied)
    monkeypatch.setattr(files, "atomic_write_json", _write_without_replace)
    reason = reason_of(quarantine_here(layout, path))
    assert reason["outcome"] == "not_moved"
    assert reason["outcome_error"] == "Operation not permitted"
    assert path.read_bytes() == b"stuck"


def test_across_file_systems_a_file_is_copied_then_removed(
    layout: IpcLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cross_device(src: Any, dst: Any) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    path = layout.tasks_dir(LANE) / "t.json"
    path.write_bytes(b"\x00binary\xff")
    monkeypatch.setattr(os, "replace", cross_device)
    monkeypatch.setattr(files, "atomic_write_json", _write_without_replace)
    reason_path = quarantine_here(layout, path)
    stored = reason_path.with_name(reason_path.name.removesuffix(REASON_SUFFIX))
    assert stored.read_bytes() == b"\x00binary\xff"
    assert not path.exists()
    assert reason_of(reason_path)["outcome"] == "copied"


def test_across_file_systems_a_link_is_recreated_not_followed(
    layout: IpcLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cross_device(src: Any, dst: Any) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    link = layout.tasks_dir(LANE) / "t.json"
    link.symlink_to(tmp_path / "secret")
    monkeypatch.setattr(os, "replace", cross_device)
    monkeypatch.setattr(files, "atomic_write_json", _write_without_replace)
    reason_path = quarantine_here(layout, link)
    stored = reason_path.with_name(reason_path.name.removesuffix(REASON_SUFFIX))
    assert os.readlink(stored) == str(tmp_path / "secret")
    assert not os.path.lexists(link)


def test_across_file_systems_a_fifo_stays_put(
    layout: IpcLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cross_device(src: Any, dst: Any) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    fifo = layout.tasks_dir(LANE) / "t.json"
    os.mkfifo(fifo)
    monkeypatch.setattr(os, "replace", cross_device)
    monkeypatch.setattr(files, "atomic_write_json", _write_without_replace)
    reason = reason_of(quarantine_here(layout, fifo))
    assert reason["outcome"] == "not_moved" and "FIFO" in reason["outcome_error"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _write_without_replace(path: Path, obj: Any) -> None:
    # The reason file's own rename would hit the patched os.replace.
    path.write_text(json.dumps(obj), encoding="utf-8")


def test_an_unusable_errors_folder_raises(layout: IpcLayout, tmp_path: Path) -> None:
    path = layout.tasks_dir(LANE) / "t.json"
    path.write_bytes(b"x")
    blocker = tmp_path / "not-a-folder"
    blocker.write_bytes(b"")
    with pytest.raises(QuarantineError):
        quarantine(path, blocker, lane=LANE, code="c", message="m", clock=clock)
    with pytest.raises(QuarantineError):
        quarantine(path, blocker / "errors", lane=LANE, code="c", message="m", clock=clock)
    assert path.read_bytes() == b"x"


def test_odd_details_and_clocks_are_recorded_safely(layout: IpcLayout) -> None:
    path = layout.tasks_dir(LANE) / "t.json"
    path.write_bytes(b"x")
    east = timezone(timedelta(hours=2))
    reason_path = quarantine_here(
        layout,
        path,
        details={"nan": float("nan"), "path": path, "obj": object(), "bad": "\udcff"},
        clock=lambda: datetime(2026, 11, 22, 5, 30, tzinfo=east),
    )
    reason = reason_of(reason_path)
    assert reason["quarantined_at"] == "2026-11-22T03:30:00.000000Z"
    assert reason_path.name.startswith("20261122T033000.000000Z-")
    assert reason["details"]["nan"] == "nan" and reason["details"]["path"] == str(path)
    assert reason["details"]["bad"] == "\\udcff"


def test_a_naive_clock_is_taken_as_utc(layout: IpcLayout) -> None:
    path = layout.tasks_dir(LANE) / "t.json"
    path.write_bytes(b"x")
    reason_path = quarantine_here(layout, path, clock=lambda: datetime(2026, 1, 2, 3, 4, 5))
    assert reason_of(reason_path)["quarantined_at"] == "2026-01-02T03:04:05.000000Z"


def test_classify_then_read_then_quarantine_end_to_end(layout: IpcLayout, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"private")
    link = layout.messages_dir(LANE) / "m.json"
    link.symlink_to(secret)
    event = layout.classify(link)
    assert isinstance(event, Event)
    refused = read_event(event.path, root=layout.root)
    assert isinstance(refused, Rejection)
    reason_path = quarantine(
        event.path,
        layout.errors_dir,
        lane=event.lane,
        code=refused.code,
        message=refused.message,
        clock=clock,
    )
    assert reason_of(reason_path)["code"] == "symlink"
    assert secret.read_bytes() == b"private"


def test_a_batch_walks_to_a_folder_once_and_reads_each_file_in_one_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.ipc.reading import OpenFolders

    root = tmp_path / "ipc"
    folder = root / "jarvis-worker-1" / "progress" / "r-1"
    folder.mkdir(parents=True)
    bodies = {folder / f"{n}.json": json.dumps({"n": n, "pad": "x" * n * 100}).encode()
              for n in range(10)}  # fmt: skip
    for path, body in bodies.items():
        path.write_bytes(body)
    calls: dict[str, int] = {"path lstat": 0, "read": 0}
    lstat, read = os.lstat, os.read

    def counted_lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        calls["path lstat"] += 1
        return lstat(path, *args, **kwargs)

    def counted_read(fd: int, size: int) -> bytes:
        calls["read"] += 1
        return read(fd, size)

    monkeypatch.setattr(os, "lstat", counted_lstat)
    monkeypatch.setattr(os, "read", counted_read)
    with OpenFolders() as folders:
        got = {path: read_event(path, root=root, folders=folders) for path in bodies}
    assert got == bodies
    # Only the first file is looked at by its whole path; the others through the folder's
    # descriptor. Each is read in one call: the file's size and one byte more.
    assert calls == {"path lstat": 1, "read": 10}


def test_a_file_that_grows_while_read_is_read_whole_up_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "grows.json"
    path.write_bytes(b"x" * 10)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    real_fstat = os.fstat

    def fstat_then_grow(opened: int) -> os.stat_result:
        info = real_fstat(opened)
        os.write(fd, b"y" * 20)  # the writer appends between the look and the read
        return info

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "fstat", fstat_then_grow)
            assert read_event(path) == b"x" * 10 + b"y" * 20
            assert rejection_code(read_event(path, limit=40)) == "too_large"
    finally:
        os.close(fd)


def test_a_batch_walks_to_the_lane_once_for_all_its_run_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.ipc.reading import OpenFolders

    root = tmp_path / "ipc"
    paths = []
    for n in range(10):
        folder = root / "jarvis-worker-1" / "progress" / f"r-{n}"
        folder.mkdir(parents=True)
        (folder / "1.json").write_bytes(b'{"n": %d}' % n)
        paths.append(folder / "1.json")
    opened: list[str] = []
    real_open = os.open

    def counted_open(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counted_open)
    with OpenFolders() as folders:
        got = [read_event(path, root=root, folders=folders) for path in paths]
    assert got == [b'{"n": %d}' % n for n in range(10)]
    # The root, the lane and its progress folder once; each run folder and each file once.
    assert len(opened) == 3 + 10 + 10, opened
    assert opened.count("jarvis-worker-1") == 1 and opened.count("progress") == 1
