"""The quarantine listed, shown and replayed with a real host: a replayed file that fails again
is quarantined again, once, and never replayed by itself; once it can be read it is ingested.
Names from outside never reach beyond the quarantine, and a reason naming a place outside the
IPC tree puts nothing there."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from core.service.quarantine import (
    Quarantined,
    Replayed,
    quarantined,
    quarantined_content,
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


def _listed(ws: Path) -> list[Quarantined]:
    return quarantined(ws)[0]


def _stored(ws: Path) -> list[str]:
    """The files waiting in the quarantine, to be replayed."""
    return [f.name for f in _listed(ws) if f.replayable]


def _replay(ws: Path, name: str) -> Replayed:
    return replay_quarantined(ws, name, "ops")


def _refused(result: Replayed, code: str) -> bool:
    return not result.ok and result.code == code


def test_a_replayed_file_failing_again_is_quarantined_again_and_ingested_once_it_can_be(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, lane_concurrency={LANE: 0})  # runs stay queued: the host only ingests
    with running_host(ws) as host:
        put_progress(ws, "ghost-1", 1, "written before its run existed")
        (first,) = wait_until(lambda: _stored(ws), HANG_GUARD_S, "the quarantine", host.log)
        (listed,) = _listed(ws)
        assert (listed.code, listed.lane, listed.replayed_at) == ("unknown_run", LANE, None)
        shown = quarantined_content(ws, first)
        assert isinstance(shown, str) and "written before its run existed" in shown

        # Its run still does not exist: it fails again, and is quarantined again, once.
        assert _replay(ws, first).ok
        (second,) = wait_until(lambda: _stored(ws), HANG_GUARD_S, "the second quarantine")
        assert second != first
        wait_for_sweeps(ws, 2, host)
        files = _listed(ws)
        assert [(f.name, f.replayed_by, f.replayable) for f in files] == [
            (second, None, True), (first, "ops", False),
        ]  # fmt: skip
        assert _refused(_replay(ws, first), "not_replayable")

        # Now its run exists: replayed, it is ingested.
        dispatch(store, "ghost-1")
        assert _replay(ws, second).ok
        wait_until(
            lambda: rows(conn, "SELECT 1 FROM progress_events WHERE run_id = 'ghost-1'"),
            HANG_GUARD_S, "the replayed progress to be ingested", host.log,
        )  # fmt: skip
    assert not _stored(ws)
    assert all(f.replayed_at for f in _listed(ws))


def test_names_and_reasons_from_outside_reach_nothing_beyond(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    errors = ws / "data" / "ipc" / "errors"
    errors.mkdir(parents=True)
    (ws / "secret.txt").write_text("not for the console")
    for name in ("../../../secret.txt", "a/b", "", ".hidden", "x.reason.json"):
        assert quarantined_content(ws, name) is None, name
        assert _refused(_replay(ws, name), "unknown_name"), name
    # A stored link is never opened nor moved.
    (errors / "link.json").symlink_to(ws / "secret.txt")
    reason = {"code": "link", "message": "m", "outcome": "moved",
              "original_path": str(ws / "data/ipc/l/x.json")}  # fmt: skip
    (errors / "link.json.reason.json").write_text(json.dumps(reason))
    assert quarantined_content(ws, "link.json") is None
    assert _refused(_replay(ws, "link.json"), "not_replayable")
    # A reason naming a place outside the IPC tree (or the quarantine itself) moves nothing.
    for n, place in enumerate((str(tmp_path / "elsewhere.json"), str(errors / "again.json"),
                               str(ws / "data/ipc/l/../../../x.json"))):  # fmt: skip
        (errors / f"f{n}.json").write_text("{}")
        reason = {"outcome": "moved", "original_path": place}
        (errors / f"f{n}.json.reason.json").write_text(json.dumps(reason))
        assert _refused(_replay(ws, f"f{n}.json"), "not_replayable"), place
        assert (errors / f"f{n}.json").exists()
    assert not (tmp_path / "elsewhere.json").exists()
    # A lane folder swapped for a link is not followed.
    (ws / "data" / "ipc" / "linked").symlink_to(tmp_path)
    (errors / "g.json").write_text("{}")
    (errors / "g.json.reason.json").write_text(
        json.dumps({"outcome": "moved", "original_path": str(ws / "data/ipc/linked/g.json")})
    )
    assert _refused(_replay(ws, "g.json"), "not_replayable")
    assert not (tmp_path / "g.json").exists()
