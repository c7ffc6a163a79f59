"""The run commands end to end, as a script or an operator would use them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.conftest import jarvis
from tests.conftest import SAMPLES

FIX = SAMPLES / "dispatches/valid-backend-fix.json"
RUN = "task-20260222-014"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tmp_path / "ws"


def j(ws: Path, *args: str | Path, stdin: bytes | None = None) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = jarvis(*args, "--workspace", ws, "--json", stdin=stdin)
    return result.code, result.json()


def fail_run(ws: Path, run_id: str) -> None:
    """Stand in for the host: start the run and fail it, as the host will."""
    db = sqlite3.connect(ws / "jarvis.db")
    with db:
        for to in ("running", "failed"):
            db.execute(
                "UPDATE runs SET state = ?, version = version + 1 WHERE run_id = ?", [to, run_id]
            )
            db.execute(
                "INSERT INTO journal (run_id, kind, payload, actor, at) "
                "VALUES (?, 'transition', ?, 'host', 'x')",
                [run_id, json.dumps({"to": to})],
            )
    db.close()


def test_full_operator_flow(ws: Path) -> None:
    code, out = j(ws, "dispatch", FIX, "--operator", "alice")
    assert code == 0 and out["outcome"] == "enqueued" and out["run_id"] == RUN
    assert out["errors"] == [] and out["run"]["state"] == "queued"

    code, out = j(ws, "runs")
    assert code == 0
    (row,) = out["runs"]
    assert {"run_id", "lane", "task_type", "state", "retry_count", "overridden", "updated_at",
            "last_progress_summary"} <= set(row)  # fmt: skip

    code, out = j(ws, "cancel", RUN, "--reason", "wrong base branch", "--operator", "bob")
    assert code == 0 and out["ok"] and out["run"]["state"] == "failed" and out["refusal"] is None

    code, out = j(ws, "retry", RUN, "--operator", "carol")
    assert code == 0 and out["run"]["retry_count"] == 1 and out["run"]["state"] == "queued"

    code, out = j(ws, "show", RUN)
    assert out["run"]["retry_fresh"] == 0  # the next attempt goes on from the branch

    code, out = j(ws, "retry", RUN)
    assert code == 1 and not out["ok"]
    assert out["refusal"]["code"] == "illegal_transition"
    assert out["refusal"]["message"].startswith(f"Run {RUN} is queued;")

    fail_run(ws, RUN)
    code, out = j(ws, "override", RUN, "--reason", "verified by hand", "--operator", "dana")
    assert code == 0 and out["run"]["state"] == "done" and out["run"]["overridden"] is True

    code, out = j(ws, "show", RUN)
    assert code == 0
    run = out["run"]
    assert run["override_reason"] == "verified by hand" and run["overridden_by"] == "dana"
    assert [(a["actor"], a["action"]) for a in run["audit"]] == [
        ("alice", "dispatch"), ("bob", "cancel"), ("carol", "retry"), ("dana", "override"),
    ]  # fmt: skip
    assert run["dispatch"]["run_id"] == RUN
    assert {"gates", "steers", "events", "failures"} <= set(run)


def test_approve_refused_outside_review(ws: Path) -> None:
    j(ws, "dispatch", FIX)
    code, out = j(ws, "approve", RUN)
    assert code == 1 and out["refusal"]["code"] == "illegal_transition"


def test_dispatch_refusals_exit_1(ws: Path) -> None:
    code, out = j(ws, "dispatch", "-", stdin=b"fix the bug please")
    assert code == 1 and out["outcome"] == "invalid" and out["errors"][0]["code"] == "not_json"
    code, out = j(ws, "dispatch", FIX, "--from", "andy-bot")
    assert code == 1 and out["outcome"] == "unauthorized"
    assert j(ws, "dispatch", FIX, "--idempotency-key", "k1")[0] == 0
    code, out = j(ws, "dispatch", FIX, "--idempotency-key", "k1")
    assert code == 0 and out["outcome"] == "deduplicated"
    # Without the key, the run id decides: it is taken (its request_id identifies no submission).
    code, out = j(ws, "dispatch", FIX)
    assert code == 1 and out["outcome"] == "duplicate"


def test_steer_refused_unless_running(ws: Path) -> None:
    j(ws, "dispatch", FIX)
    code, out = j(ws, "steer", RUN, "focus on tests")
    assert code == 1 and out["refusal"]["code"] == "not_running"


def test_stale_expect_version(ws: Path) -> None:
    j(ws, "dispatch", FIX)
    code, out = j(ws, "cancel", RUN, "--reason", "x", "--expect-version", "7")
    assert code == 1 and out["refusal"]["code"] == "stale_version"


def test_show_unknown_run(ws: Path) -> None:
    j(ws, "dispatch", FIX)
    code, out = j(ws, "show", "nope")
    assert code == 1 and out == {
        "run": None,
        "refusal": {"code": "not_found", "message": "There is no run nope."},
    }


def test_runs_filters(ws: Path) -> None:
    j(ws, "dispatch", FIX)
    ui = SAMPLES / "dispatches/valid-ui-dashboard.json"
    jarvis("dispatch", ui, "--to", "jarvis-worker-2", "--workspace", ws)
    j(ws, "cancel", RUN, "--reason", "x")
    assert [r["run_id"] for r in j(ws, "runs", "--state", "failed")[1]["runs"]] == [RUN]
    assert len(j(ws, "runs", "--state", "failed,queued")[1]["runs"]) == 2
    assert [r["lane"] for r in j(ws, "runs", "--lane", "jarvis-worker-2")[1]["runs"]] == [
        "jarvis-worker-2"
    ]
    assert len(j(ws, "runs", "--limit", "1")[1]["runs"]) == 1
    result = jarvis("runs", "--state", "broken", "--workspace", ws, "--json")
    assert result.code == 2 and result.json()["error"]["code"] == "unknown_state"


def test_journal_lines_and_since(ws: Path) -> None:
    j(ws, "dispatch", FIX)
    j(ws, "cancel", RUN, "--reason", "x")
    result = jarvis("journal", "--workspace", ws, "--json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["kind"] for e in lines] == ["created", "transition"]
    assert lines[1]["payload"]["to"] == "failed"
    later = jarvis("journal", "--since", str(lines[0]["seq"]), "--workspace", ws, "--json")
    assert [json.loads(x)["seq"] for x in later.stdout.splitlines()] == [lines[1]["seq"]]


def test_journal_follow_sees_a_change_from_another_process(ws: Path) -> None:
    import sys

    from tests.processes import PipedProcess

    j(ws, "dispatch", FIX)
    command = [sys.executable, "-m", "jarvis_cli", "journal", "--follow", "--json"]
    with PipedProcess([*command, "--workspace", str(ws)]) as follower:
        first = json.loads(follower.next_line("the journal's first row"))
        assert first["kind"] == "created"
        j(ws, "cancel", RUN, "--reason", "seen live")
        second = json.loads(follower.next_line("the cancel, followed live"))
        assert second["kind"] == "transition" and second["payload"]["reason"] == "seen live"


def test_a_corrupt_store_is_a_clear_io_error(ws: Path) -> None:
    ws.mkdir()
    (ws / "jarvis.db").write_bytes(b"this is not a database" * 100)
    result = jarvis("runs", "--workspace", ws, "--json")
    assert result.code == 2 and result.json()["error"]["code"] == "store_corrupt"
    assert "Traceback" not in result.stderr


def test_retry_fresh_starts_the_next_attempt_from_the_base(ws: Path) -> None:
    code, _ = j(ws, "dispatch", FIX)
    fail_run(ws, RUN)
    code, out = j(ws, "retry", RUN, "--fresh")
    assert code == 0 and out["run"]["state"] == "queued"
    assert j(ws, "show", RUN)[1]["run"]["retry_fresh"] == 1
