"""``jarvis logs``: the end of a worker's log, inert and masked, and following it live.

The logs are written as the host writes them (`RotatingLog` into ``logs/<run>/attempt-<N>/``);
following runs the real entry point in a process of its own, while this test writes the log
and moves the run, as a worker and a host would.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from core.lifecycle import Action, RunState
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from core.worker_logs import RotatingLog, attempt_dir
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run
from tests.processes import PipedProcess

FAKE_KEY = "sk-ant-api03-" + "Ab3dE5fG7h" * 9
HOSTILE = "\x1b]0;pwned\x07\x1b[2J [bold]x[/] \x1b[31mred\x1b[0m \u202eevil"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    store = SqliteStore(root / "jarvis.db")
    try:
        make_run(store, "run-done", RunState.FAILED)
        make_run(store, "run-live", RunState.RUNNING)
        make_run(store, "run-new", RunState.QUEUED)
    finally:
        store.close()
    first = attempt_dir(root, "run-done", 1)
    first.mkdir(parents=True)
    lines = [f"step {n}" for n in range(1, 151)]
    (first / "stdout.log").write_text("\n".join([*lines, HOSTILE, f"key={FAKE_KEY}"]) + "\n")
    (first / "stderr.log").write_text("Traceback (most recent call last):\nValueError: boom\n")
    return root


def test_the_last_lines_as_json(ws: Path) -> None:
    result = jarvis("logs", "run-done", "--lines", "3", "--workspace", ws, "--json")
    assert result.code == 0
    answer = result.json()
    assert answer == {
        "run_id": "run-done",
        "attempt": 1,
        "stream": "stdout",
        "lines": ["step 150", "\x1b]0;pwned\x07 [bold]x[/] red \u202eevil", "key=sk-a****"],
        "truncated": True,
    }
    # The JSON itself carries no control a terminal would act on.
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    everything = jarvis("logs", "run-done", "--lines", "1000", "--workspace", ws, "--json")
    assert len(everything.json()["lines"]) == 152 and not everything.json()["truncated"]


def test_text_is_inert_masked_and_only_the_logs_lines_on_stdout(ws: Path) -> None:
    result = jarvis("logs", "run-done", "--lines", "2", "--workspace", ws)
    assert result.code == 0
    assert result.stdout == (
        "\\x1b]0;pwned\\x07 [bold]x[/] red \\u202eevil\n"  # shown, not acted on; markup as typed
        "key=sk-a****\n"
    )
    assert FAKE_KEY not in result.stdout + result.stderr
    assert result.stderr == "jarvis: run run-done, attempt 1, stdout (its last 2 lines)\n"


def test_stderr_and_an_attempt_are_chosen_by_flags(ws: Path) -> None:
    result = jarvis("logs", "run-done", "--stderr", "--attempt", "1", "--workspace", ws, "--json")
    assert result.code == 0
    assert result.json()["lines"] == ["Traceback (most recent call last):", "ValueError: boom"]
    assert result.json()["stream"] == "stderr" and not result.json()["truncated"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run-gone"], "not_found", "There is no run run-gone."),
        (["run-new"], "no_logs", "Run run-new has no logs yet: no attempt of it has started."),
        (["run-done", "--attempt", "2"], "no_logs",
         "Run run-done has no logs for attempt 2; it has logs for attempt 1."),
    ],
)  # fmt: skip
def test_a_run_without_logs_exits_1_with_a_sentence(
    ws: Path, args: list[str], code: str, message: str
) -> None:
    result = jarvis("logs", *args, "--workspace", ws, "--json")
    assert result.code == 1
    assert result.json() == {"run_id": args[0], "refusal": {"code": code, "message": message}}
    readable = jarvis("logs", *args, "--workspace", ws)
    assert readable.code == 1 and code in readable.stdout
    assert " ".join(readable.stdout.split()).endswith(message)


@pytest.mark.parametrize("flag", [["--lines", "-1"], ["--attempt", "0"]])
def test_a_bad_number_is_a_usage_error(ws: Path, flag: list[str]) -> None:
    result = jarvis("logs", "run-done", *flag, "--workspace", ws, "--json")
    assert result.code == 2 and result.json()["error"]["code"] == "usage"


def follow(ws: Path, run_id: str, *extra: str) -> PipedProcess:
    command = [sys.executable, "-m", "jarvis_cli", "logs", run_id, "--follow", "--json"]
    return PipedProcess([*command, "--poll", "0.01", "--workspace", str(ws), *extra])


def test_follow_prints_lines_another_process_writes_across_renames_until_the_run_ends(
    ws: Path,
) -> None:
    folder = attempt_dir(ws, "run-live", 1)
    folder.mkdir(parents=True)
    log = RotatingLog(folder / "stdout.log", limit=200, keep=3)
    log.write(b"first\nsecond\n")
    with follow(ws, "run-live", "--lines", "1") as follower:
        assert json.loads(follower.next_line("the last line")) == {
            "run_id": "run-live", "attempt": 1, "stream": "stdout", "line": "second",
        }  # fmt: skip
        for batch in range(5):
            # About two files a batch: renamed aside while followed, every line still seen.
            log.write(b"".join(f"batch {batch} line {n:02d}\n".encode() for n in range(20)))
            for n in range(20):
                line = json.loads(follower.next_line(f"batch {batch} line {n}"))["line"]
                assert line == f"batch {batch} line {n:02d}"
        log.write(f"token {FAKE_KEY}\nno line feed at the end".encode())
        assert json.loads(follower.next_line("the token's line"))["line"] == "token sk-a****"
        store = SqliteStore(ws / "jarvis.db")
        try:
            host_move(store, "run-live", Action.FAIL)  # the run ends: the follow ends with it
        finally:
            store.close()
        assert follower.wait() == 0
        last = json.loads(follower.next_line("the unfinished line"))
        assert last["line"] == "no line feed at the end"
        assert follower.stderr == "" and log.rotations >= 8
    log.close()


def test_following_a_run_that_has_ended_prints_its_end_and_stops(ws: Path) -> None:
    with follow(ws, "run-done", "--lines", "2", "--stderr") as follower:
        assert follower.wait() == 0
        lines = [json.loads(line)["line"] for line in follower.stdout.splitlines()]
        assert lines == ["Traceback (most recent call last):", "ValueError: boom"]


def test_ctrl_c_ends_a_follow_quietly_with_exit_0(ws: Path) -> None:
    folder = attempt_dir(ws, "run-live", 1)
    folder.mkdir(parents=True)
    (folder / "stdout.log").write_text("working\n")
    command = [sys.executable, "-m", "jarvis_cli", "logs", "run-live", "--follow"]
    with PipedProcess([*command, "--workspace", str(ws)]) as follower:
        assert follower.next_line("the last line") == "working"
        follower.wait_for_stderr(b"following", "the follow's start")
        follower.send_signal(signal.SIGINT)
        assert follower.wait() == 0
        assert "Traceback" not in follower.stderr and "KeyboardInterrupt" not in follower.stderr
