"""The quarantine listed, shown and replayed with a real host: a replayed file that fails again
is quarantined again, once, and never replayed by itself; once it can be read it is ingested.
Names from outside never reach beyond the quarantine, and a reason naming a place outside the
IPC tree puts nothing there."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from core.service.quarantine import (
    QuarantineRefusal,
    Replayed,
    quarantined_content,
    quarantined_files_in,
    replay_quarantined,
)
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    LANE,
    dispatch,
    put_progress,
    rows,
    running_host,
    wait_for_sweeps,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S


def _stored(ws: Path) -> list[str]:
    return [f.name for f in quarantined_files_in(ws) if f.stored]


def test_a_replayed_file_failing_again_is_quarantined_again_and_ingested_once_it_can_be(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, lane_concurrency={LANE: 0})  # runs stay queued: the host only ingests
    with running_host(ws) as host:
        put_progress(ws, "ghost-1", 1, "written before its run existed")
        (first,) = wait_until(lambda: _stored(ws), HANG_GUARD_S, "the quarantine", host.log)
        (listed,) = quarantined_files_in(ws)
        assert (listed.code, listed.lane, listed.replayed) == ("unknown_run", LANE, False)
        shown = quarantined_content(ws, first)
        assert isinstance(shown, str) and "written before its run existed" in shown

        # Its run still does not exist: it fails again, and is quarantined again, once.
        assert isinstance(replay_quarantined(ws, first), Replayed)
        (second,) = wait_until(lambda: _stored(ws), HANG_GUARD_S, "the second quarantine")
        assert second != first
        wait_for_sweeps(ws, 2, host)
        files = quarantined_files_in(ws)
        assert [(f.name, f.replayed, f.stored) for f in files] == [
            (second, False, True), (first, True, False),
        ]  # fmt: skip
        again = replay_quarantined(ws, first)
        assert isinstance(again, QuarantineRefusal) and again.code == "already_replayed"

        # Now its run exists: replayed, it is ingested.
        dispatch(store, "ghost-1")
        assert isinstance(replay_quarantined(ws, second), Replayed)
        wait_until(
            lambda: rows(conn, "SELECT 1 FROM progress_events WHERE run_id = 'ghost-1'"),
            HANG_GUARD_S, "the replayed progress to be ingested", host.log,
        )  # fmt: skip
    assert not _stored(ws)
    assert all(f.replayed for f in quarantined_files_in(ws))


def test_names_and_reasons_from_outside_reach_nothing_beyond(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    errors = ws / "data" / "ipc" / "errors"
    errors.mkdir(parents=True)
    (ws / "secret.txt").write_text("not for the console")
    for name in ("../../../secret.txt", "a/b", "", ".hidden", "x.reason.json"):
        for result in (quarantined_content(ws, name), replay_quarantined(ws, name)):
            assert isinstance(result, QuarantineRefusal) and result.code == "bad_name", name
    # A stored link is never opened nor moved.
    (errors / "link.json").symlink_to(ws / "secret.txt")
    reason = {"code": "link", "message": "m", "original_path": str(ws / "data/ipc/l/x.json")}
    (errors / "link.json.reason.json").write_text(json.dumps(reason))
    shown = quarantined_content(ws, "link.json")
    assert isinstance(shown, QuarantineRefusal) and shown.code == "not_stored"
    refused = replay_quarantined(ws, "link.json")
    assert isinstance(refused, QuarantineRefusal) and refused.code == "not_stored"
    # A reason naming a place outside the IPC tree (or the quarantine itself) moves nothing.
    for n, place in enumerate((str(tmp_path / "elsewhere.json"), str(errors / "again.json"),
                               str(ws / "data/ipc/l/../../../x.json"))):  # fmt: skip
        (errors / f"f{n}.json").write_text("{}")
        (errors / f"f{n}.json.reason.json").write_text(json.dumps({"original_path": place}))
        refused = replay_quarantined(ws, f"f{n}.json")
        assert isinstance(refused, QuarantineRefusal) and refused.code == "outside_tree", place
        assert (errors / f"f{n}.json").exists()
    assert not (tmp_path / "elsewhere.json").exists()
    # A lane folder swapped for a link is not followed.
    (ws / "data" / "ipc" / "linked").symlink_to(tmp_path)
    (errors / "g.json").write_text("{}")
    (errors / "g.json.reason.json").write_text(
        json.dumps({"original_path": str(ws / "data/ipc/linked/g.json")})
    )
    refused = replay_quarantined(ws, "g.json")
    assert isinstance(refused, QuarantineRefusal) and refused.code == "outside_tree"
    assert not (tmp_path / "g.json").exists()
