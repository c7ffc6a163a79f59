"""A real NanoClaw coordinator's files under `jarvis host`: each reaches the state NanoClaw
would give it (tests/nanoclaw/coordinator.py writes them byte for byte)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import rows, run_row, running_host, wait_for_states, wait_until
from tests.nanoclaw.coordinator import Coordinator, documented_dispatch, js_compact
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

ENDS = {"review_requested", "failed_contract", "failed"}


def refusals(ws: Path) -> list[dict[str, Any]]:
    errors = ws / "data" / "ipc" / "errors"
    if not errors.is_dir():
        return []
    return [json.loads(p.read_text()) for p in sorted(errors.glob("*.reason.json"))]


def wait_for_refusals(ws: Path, count: int) -> list[dict[str, Any]]:
    return wait_until(lambda: len(refusals(ws)) >= count and refusals(ws), HANG_GUARD_S,
                      f"{count} refused file(s)", lambda: str(refusals(ws)))  # fmt: skip


def wait_consumed(path: Path) -> None:
    wait_until(lambda: not path.exists(), HANG_GUARD_S, f"{path.name} to be taken")


def test_the_documented_dispatch_runs_on_the_worker_its_chat_id_names(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    # null optional fields, as a coordinator in JavaScript may well send them
    andy.dispatch(documented_dispatch("task-1", session_id=None, parent_run_id=None),
                  worker="jarvis-worker-2")  # fmt: skip
    andy.dispatch(documented_dispatch("nc:run:a8", branch="jarvis-nc", project_key="nanoclaw"))
    with running_host(ws) as host:
        wait_for_states(conn, {"task-1": ENDS, "nc:run:a8": ENDS}, HANG_GUARD_S, host=host)
    assert run_row(conn, "task-1")["lane"] == "jarvis-worker-2"
    assert run_row(conn, "nc:run:a8")["lane"] == "jarvis-worker-1"
    for run_id in ("task-1", "nc:run:a8"):
        row = run_row(conn, run_id)
        assert row["state"] == "review_requested" and row["source_lane"] == "andy-developer"
        # Its progress was taken from a folder named after it.
        assert rows(conn, "SELECT 1 FROM progress_events WHERE run_id = ?", [run_id])
    assert refusals(ws) == []


def test_a_dispatch_in_a_fenced_block_or_a_sentence_is_taken(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    fenced = "```json\n" + json.dumps(documented_dispatch("fenced-1"), indent=2) + "\n```"
    andy.send_message(fenced, "jarvis-worker-1@nanoclaw")
    prose = "Dispatching: " + js_compact(documented_dispatch("prose-1", branch="jarvis-p")) + " ok"
    andy.send_message(prose, "jarvis-worker-2@nanoclaw")
    with running_host(ws) as host:
        wait_for_states(conn, {"fenced-1": ENDS, "prose-1": ENDS}, HANG_GUARD_S, host=host)
    assert run_row(conn, "prose-1")["lane"] == "jarvis-worker-2"
    assert refusals(ws) == []


def test_a_message_to_a_worker_without_a_dispatch_is_refused_and_chat_elsewhere_is_not(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    chat = andy.send_message("Status update: all green.", "120363000000000000@g.us")
    andy.send_message("please fix the login bug", "jarvis-worker-2@nanoclaw")
    with running_host(ws):
        (refused,) = wait_for_refusals(ws, 1)
        wait_consumed(chat)
    assert refused["code"] == "not_a_dispatch"
    assert "A message to jarvis-worker-2 must hold a dispatch" in refused["message"]
    assert rows(conn, "SELECT run_id FROM runs") == []


def test_rework_under_one_request_and_a_retry_after_failure_as_nanoclaw_does(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    failing = documented_dispatch("task-2", input="Break the contract. sim:fail_contract")
    andy.dispatch(failing)
    with running_host(ws) as host:
        wait_for_states(conn, {"task-2": "failed_contract"}, HANG_GUARD_S, host=host)
        # The same run id again after a failure: a retry of it, not a no-op.
        andy.dispatch(documented_dispatch("task-2", branch="jarvis-dispatch-contract"))
        wait_until(lambda: run_row(conn, "task-2")["retry_count"] == 1, HANG_GUARD_S,
                   "task-2 to be retried")  # fmt: skip
        wait_for_states(conn, {"task-2": "review_requested"}, HANG_GUARD_S, host=host)
        # A rework: a new run of the same request, following the first.
        rework = documented_dispatch("task-2-rework", parent_run_id="task-2")
        andy.dispatch(rework)
        wait_for_states(conn, {"task-2-rework": "review_requested"}, HANG_GUARD_S, host=host)
        # The same run id while it is under review: a duplicate, refused with why.
        andy.dispatch(documented_dispatch("task-2"))
        (refused,) = wait_for_refusals(ws, 1)
    assert refused["code"] == "dispatch_duplicate"
    assert "task-2 already exists and is review_requested" in refused["message"]
    assert {r["request_id"] for r in rows(conn, "SELECT request_id FROM runs")} == {
        "req-20260302-001"
    }
    assert run_row(conn, "task-2-rework")["parent_run_id"] == "task-2"


def test_an_invalid_dispatch_is_refused_with_every_fields_problem(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    andy.dispatch(documented_dispatch("task-3", branch="feature-x", acceptance_tests=[]))
    with running_host(ws):
        (refused,) = wait_for_refusals(ws, 1)
    assert refused["code"] == "dispatch_invalid"
    message = refused["message"]
    assert message.startswith("The dispatch is invalid.")
    assert "branch must be 'jarvis-<feature>'" in message and "acceptance_tests" in message


@pytest.mark.parametrize(
    "doc",
    [
        {"type": "schedule_task", "taskId": "task-1773741600000-a1b2c3", "prompt": "Check CI",
         "schedule_type": "cron", "schedule_value": "0 9 * * *", "context_mode": "group",
         "targetJid": "120363000000000000@g.us", "createdBy": "main",
         "timestamp": "2026-03-17T10:00:00.000Z"},
        {"type": "pause_task", "taskId": "task-1773741600000-a1b2c3", "groupFolder": "main",
         "isMain": True, "timestamp": "2026-03-17T10:00:00.000Z"},
        {"type": "refresh_groups"},
    ],
)  # fmt: skip
def test_a_nanoclaw_task_type_jarvis_does_not_do_is_refused_by_name(
    ws: Path, store: SqliteStore, doc: dict[str, Any]
) -> None:
    Coordinator(ws / "data" / "ipc", lane="main").task(doc)
    with running_host(ws):
        (refused,) = wait_for_refusals(ws, 1)
    assert refused["code"] == "unsupported_task_type"
    assert refused["message"].startswith(f"{doc['type']} is a NanoClaw task type")


def test_the_coordinators_steer_reaches_a_running_run(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    andy.dispatch(documented_dispatch("task-4", input="Work slowly. sim:slow"))
    # Thirty-odd events a second or more apart: the run is still at work when the steer lands
    # (the worker looks at its steer file every 100 ms), however busy the machine.
    with running_host(ws, interval="1000,1500") as host:
        wait_for_states(conn, {"task-4": "running"}, HANG_GUARD_S, host=host)
        andy.steer("task-4", "Only touch src/server.ts")
        wait_until(
            lambda: rows(conn, "SELECT 1 FROM steering_events WHERE run_id = 'task-4' "
                               "AND status = 'acked'"),
            HANG_GUARD_S, "the steer to be acknowledged",
            lambda: f"{refusals(ws)} {rows(conn, 'SELECT * FROM steering_events')} {host.log()}",
        )  # fmt: skip
    (steer,) = rows(conn, "SELECT operator, message FROM steering_events")
    assert steer == {"operator": "andy-developer", "message": "Only touch src/server.ts"}
    assert refusals(ws) == []


def blocks_of(ws: Path, lane: str) -> list[dict[str, Any]]:
    try:
        shown = json.loads((ws / "data" / "ipc" / lane / "worker_runs.json").read_text())
    except (OSError, ValueError):
        return []
    found: list[dict[str, Any]] = shown["dispatch_blocks"]
    return found


def test_each_dispatch_block_names_its_target_as_nanoclaws_type_requires(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    andy.dispatch(documented_dispatch("task-5", branch="feature-x"), worker="jarvis-worker-2")
    andy.steer("nobody-7", "stop")  # a steer of no run: it named no chat
    andy.dispatch(documented_dispatch("task-6"))
    with running_host(ws) as host:
        wait_for_states(conn, {"task-6": "review_requested"}, HANG_GUARD_S, host=host)
        andy.steer("task-6", "stop")  # too late: the chat it names is its run's
        wait_until(lambda: len(blocks_of(ws, "andy-developer")) == 3, HANG_GUARD_S,
                   "three dispatch blocks", host.log)  # fmt: skip
    by_code = {b["reason_code"]: b for b in blocks_of(ws, "andy-developer")}
    dispatch, steer = by_code["dispatch_invalid"], by_code["unknown_run"]
    late = by_code["not_running"]
    assert (late["target_jid"], late["target_folder"], late["run_id"]) == (
        "jarvis-worker-1@nanoclaw", "jarvis-worker-1", "task-6"
    )  # fmt: skip
    # DispatchBlockSnapshotEntry (src/container-runner.ts): target_jid is required, in order.
    assert list(dispatch) == ["timestamp", "source_group", "target_jid", "target_folder",
                              "reason_code", "reason_text", "run_id"]  # fmt: skip
    assert (dispatch["target_jid"], dispatch["target_folder"]) == (
        "jarvis-worker-2@nanoclaw", "jarvis-worker-2"
    )  # fmt: skip
    assert dispatch["run_id"] == "task-5"
    assert list(steer) == ["timestamp", "source_group", "target_jid", "reason_code",
                           "reason_text", "run_id"]  # fmt: skip
    assert steer["target_jid"] == "unknown" and steer["run_id"] == "nobody-7"


@pytest.mark.parametrize(
    ("own_chat", "shown"),
    [
        ("120363000000000000@g.us", "120363000000000000@g.us"),
        ("andy-developer@nanoclaw", "andy-developer@nanoclaw"),
        ("ghp_" + "a1B2" * 9 + "@g.us", "ghp_****@g.us"),  # a lane's text: no secret kept
    ],
)
def test_a_dispatch_to_the_coordinators_own_chat_is_blocked_as_nanoclaw_blocks_it(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, own_chat: str, shown: str
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    # send_message without target_group_jid: the coordinator's own chat, its NanoClaw chat id
    # (a WhatsApp group), or the one Jarvis names it by.
    andy.send_message(js_compact(documented_dispatch("task-8")), own_chat)
    with running_host(ws) as host:
        (refused,) = wait_for_refusals(ws, 1)
        wait_until(lambda: blocks_of(ws, "andy-developer"), HANG_GUARD_S,
                   "the block in worker_runs.json", host.log)  # fmt: skip
    assert rows(conn, "SELECT run_id FROM runs") == []
    assert refused["code"] == "dispatch_to_own_chat"
    assert "set target_group_jid to a worker's chat" in refused["message"]
    (block,) = blocks_of(ws, "andy-developer")
    assert (block["target_jid"], block["reason_code"], block["run_id"]) == (
        shown, "dispatch_to_own_chat", "task-8"
    )  # fmt: skip


def test_the_coordinators_missing_required_fields_are_filled_before_validation(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    andy = Coordinator(ws / "data" / "ipc")
    sparse = {"required_fields": ["run_id", " branch ", "", "pr_skipped_reason"]}
    andy.dispatch(documented_dispatch("task-9", output_contract=sparse))
    andy.dispatch(documented_dispatch("task-10", output_contract={"required_fields": []}))
    # What NanoClaw does not fill stays refused: no list at all, or a continue without
    # session_id (NanoClaw never adds it).
    andy.dispatch(documented_dispatch("task-11", output_contract={}))
    andy.dispatch(documented_dispatch("task-12", context_intent="continue", session_id="s-1",
                                      output_contract={"required_fields": ["run_id"]}))  # fmt: skip
    with running_host(ws) as host:
        wait_for_states(conn, {"task-9": ENDS, "task-10": ENDS}, HANG_GUARD_S, host=host)
        refused = wait_for_refusals(ws, 2)
    stored = json.loads(run_row(conn, "task-9")["dispatch_json"])
    assert stored["output_contract"]["required_fields"] == [
        "run_id", "branch", "pr_skipped_reason", "commit_sha", "files_changed", "test_result",
        "risk",
    ]  # fmt: skip
    stored = json.loads(run_row(conn, "task-10")["dispatch_json"])
    assert stored["output_contract"]["required_fields"][-1] == "pr_url"
    by_run = {r["details"]["run_id"]: r for r in refused}
    assert {run_id: r["code"] for run_id, r in by_run.items()} == {
        "task-11": "dispatch_invalid", "task-12": "dispatch_invalid"
    }  # fmt: skip
    assert "session_id" in by_run["task-12"]["message"]


def test_a_dispatch_that_is_not_the_coordinators_keeps_its_list_as_given(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    sparse = {"required_fields": ["run_id", "branch", "pr_url"]}
    Coordinator(ws / "data" / "ipc", lane="main").dispatch(
        documented_dispatch("task-13", output_contract=sparse)
    )
    with running_host(ws):
        (refused,) = wait_for_refusals(ws, 1)
    assert refused["code"] == "dispatch_invalid" and "commit_sha" in refused["message"]
    assert rows(conn, "SELECT run_id FROM runs") == []
