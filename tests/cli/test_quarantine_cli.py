"""``jarvis quarantine``: the files a real host (driven in process) moved aside, with why, and
``--replay NAME`` putting one back: ingested when it is good now, quarantined again with its
reason when it is not (never looping), and no name from outside reaching past the folder."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from core.intake import submit_dispatch
from core.lifecycle import Action
from core.moves import host_move
from core.service.quarantine import Replayed, replay_quarantined
from tests.cli.conftest import jarvis
from tests.core.store_helpers import dispatch_doc
from tests.host.inproc import LANE, host_in_process, reasons, write_progress
from tests.processes import HANG_GUARD_S

RUN = "quarantine-cli-run-1"
LATER = "quarantine-cli-later"


def listed(ws: Path) -> list[dict[str, object]]:
    done = jarvis("quarantine", "--workspace", ws, "--json")
    assert done.code == 0, done
    rows: list[dict[str, object]] = done.json()["quarantined"]
    return rows


def test_a_file_refused_for_a_run_not_there_yet_is_ingested_once_replayed(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    with host_in_process(ws, RUN) as host:
        original = write_progress(host, LATER, 1, "early word")
        host.sweep()
        [entry] = listed(ws)
        assert entry["code"] == "unknown_run" and entry["lane"] == LANE
        assert entry["replayable"] is True and entry["original_path"] == str(original)
        readable = jarvis("quarantine", "--workspace", ws)
        assert "1 quarantined file(s), newest first" in readable.stdout
        assert f"unknown_run  from {LANE}" in readable.stdout
        assert f"There is no run {LATER}" in readable.stdout
        # The run exists now: the file is good, and goes back for the host to take.
        store = host.store
        assert store is not None
        made = submit_dispatch(store, dispatch_doc(LATER), source_lane="main",
                               target_lane=LANE, actor="t")  # fmt: skip
        assert made.outcome == "enqueued"
        host_move(store, LATER, Action.START)
        name = str(entry["name"])
        done = jarvis("quarantine", "--replay", name, "--workspace", ws,
                      "--operator", "ops", "--json")  # fmt: skip
        assert done.code == 0, done
        assert done.json()["ok"] is True and done.json()["path"] == str(original)
        assert original.is_file() and not (host.layout.errors_dir / name).exists()
        host.sweep()
        run = store.get_run(LATER)
        assert run is not None and run["last_progress_summary"] == "early word"
        [after] = listed(ws)
        assert after["replayable"] is False and after["replayed_by"] == "ops"
        twice = jarvis("quarantine", "--replay", name, "--workspace", ws, "--json")
        assert twice.code == 1 and twice.json()["code"] == "not_replayable"
        assert "it was replayed at" in twice.json()["message"]


def test_a_replay_that_fails_again_is_quarantined_again_and_never_loops(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with host_in_process(ws, RUN) as host:
        assert host.store is not None
        host_move(host.store, RUN, Action.START)
        bad = host.layout.progress_dir(LANE, RUN) / "00000001-1.json"
        bad.parent.mkdir(parents=True)
        bad.write_bytes(b"not JSON")
        host.sweep()
        [first] = listed(ws)
        assert first["code"] == "not_json"
        done = jarvis("quarantine", "--replay", str(first["name"]), "--workspace", ws)
        assert done.code == 0 and "✓ replayed" in done.stdout
        host.sweep()
        host.sweep()  # nothing replays it by itself: a further sweep finds nothing to do
        assert [r["code"] for r in reasons(host)] == ["not_json", "not_json"]
        again, old = listed(ws)  # newest first
        assert again["name"] != old["name"] and again["replayable"] is True
        assert old["replayable"] is False and old["replayed_at"]
        assert not bad.exists()


def test_names_from_outside_never_reach_past_the_quarantine_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with host_in_process(ws, RUN) as host:
        write_progress(host, "nobody-run", 1)
        stray = host.layout.root / "stray.json"  # not inside a lane folder: refused by its path
        stray.write_text("{}")
        host.sweep()
        if (
            stray.exists() and host.inbox.ingestor is not None
        ):  # the sweep lists lane folders; a watcher would report it
            host.inbox.ingestor.refuse(stray, lane=None, code="unexpected_path",
                                       message="not in a lane")  # fmt: skip
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    entries = listed(ws)
    names = [str(e["name"]) for e in entries]
    for name in ("../../jarvis.db", str(outside), "../../../secret.json", "",
                 names[0] + ".reason.json", names[0] + "/..", ".", "errors"):  # fmt: skip
        done = jarvis("quarantine", "--replay", name, "--workspace", ws, "--json")
        assert done.code == 1 and done.json()["code"] == "unknown_name", (name, done)
    assert outside.read_text() == "{}" and (ws / "jarvis.db").is_file()
    by_code = {e["code"]: e for e in entries}
    by_path = by_code["unexpected_path"]
    assert by_path["replayable"] is False
    assert "the host would refuse it again by its path alone" in str(by_path["why_not"])
    refused = jarvis("quarantine", "--replay", str(by_path["name"]), "--workspace", ws, "--json")
    assert refused.code == 1 and refused.json()["code"] == "not_replayable"
    # A file at its place again is never written over.
    unknown = by_code["unknown_run"]
    Path(str(unknown["original_path"])).write_text('{"someone": "else"}')
    taken = jarvis("quarantine", "--replay", str(unknown["name"]), "--workspace", ws, "--json")
    assert taken.code == 1 and taken.json()["code"] == "target_exists"
    assert Path(str(unknown["original_path"])).read_text() == '{"someone": "else"}'
    assert os.path.isfile(ws / "data" / "ipc" / "errors" / str(unknown["name"]))


def test_two_operators_replaying_one_file_at_once_put_it_back_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with host_in_process(ws, RUN) as host:
        write_progress(host, LATER, 1)
        host.sweep()
    [entry] = listed(ws)
    start = threading.Barrier(2)
    answers: list[Replayed] = []

    def replay(operator: str) -> None:
        start.wait()
        answers.append(replay_quarantined(ws.resolve(), str(entry["name"]), operator))

    threads = [threading.Thread(target=replay, args=(who,)) for who in ("ana", "bo")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD_S)
    assert sorted(a.ok for a in answers) == [False, True], answers
    refused = next(a for a in answers if not a.ok)
    assert refused.code in ("not_replayable", "target_exists"), refused
    assert Path(str(entry["original_path"])).is_file()
    assert [n for n in os.listdir(ws / "data" / "ipc" / "errors") if n.startswith(".")] == []
