"""A worker's logs on disk: rotated within bounds, read from the end, followed as written.

Small limits stand in for the host's 2 MB so that many renames happen in a few kilobytes; the
host's own limits are exercised in tests/host/test_worker_logs_host.py. Nothing here waits for a
while: the writers hand over to the followers on conditions, and every bound is counted.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.api import RunStore
from core.worker_logs import (
    LOG_LIMIT_BYTES,
    LOG_ROTATIONS,
    MAX_LINE_CHARS,
    ROTATED_PAST,
    TRUNCATED,
    WINDOW_BYTES,
    LogFiles,
    LogFollower,
    LogLine,
    LogRefusal,
    RotatingLog,
    attempt_dir,
    attempt_is_running,
    find_log,
    follow_log,
    log_attempts,
    rotated,
    shown_line,
    tail_log,
)
from tests.core.store_helpers import make_run
from tests.processes import HANG_GUARD_S

LIMIT = 1000
FAKE_KEY = "sk-ant-api03-" + "Ab3dE5fG7h" * 9


def stream_bytes(folder: Path, name: str = "stdout.log") -> int:
    """Bytes of one stream's files on disk (the dropped count's small file left out)."""
    return sum(rotated(folder / name, i).stat().st_size for i in range(LOG_ROTATIONS + 1)
               if rotated(folder / name, i).exists())  # fmt: skip


def log_in(folder: Path, stream: str = "stdout") -> LogFiles:
    return LogFiles("run-1", 1, stream, folder)  # type: ignore[arg-type]


def numbered(start: int, stop: int) -> bytes:
    return b"".join(f"line {n:06d} {'x' * (n % 37)}\n".encode() for n in range(start, stop))


def texts(lines: list[LogLine]) -> list[str]:
    return [line.text for line in lines if not line.note]


# -- rotation -----------------------------------------------------------------------------------


def test_a_stream_past_its_limit_is_renamed_aside_and_stays_within_its_bound(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)
    log = RotatingLog(tmp_path / "stdout.log", limit=LIMIT, keep=3)
    written = 0
    last = ""
    for n in range(2000):
        line = f"line {n} " + "y" * rng.randint(0, 120) + "\n"
        data = line.encode()
        # Chunks as a pipe hands them over: a line may arrive in pieces, or several at once.
        for piece in (data[: len(data) // 2], data[len(data) // 2 :]):
            log.write(piece)
        written += len(data)
        last = line.rstrip("\n")
        assert stream_bytes(tmp_path) <= LIMIT * (LOG_ROTATIONS + 1)
        assert (tmp_path / "stdout.log").stat().st_size <= LIMIT
    log.close()
    assert written > 20 * LIMIT and log.rotations > 20
    assert {p.name for p in tmp_path.iterdir()} == {
        "stdout.log", "stdout.log.1", "stdout.log.2", "stdout.log.3", "stdout.log.dropped",
    }  # fmt: skip
    tail = tail_log(log_in(tmp_path), 3)
    assert tail.lines[-1] == last  # the latest output is always on disk
    assert tail.truncated
    kept = stream_bytes(tmp_path)
    assert int((tmp_path / "stdout.log.dropped").read_text()) == written - kept


def test_files_are_renamed_at_a_line_end_and_a_line_longer_than_a_file_is_split(
    tmp_path: Path,
) -> None:
    log = RotatingLog(tmp_path / "stdout.log", limit=100, keep=2)
    log.write(b"a" * 60 + b"\n")
    log.write(b"b" * 60 + b"\n")  # does not fit after the first: starts the next file
    assert (tmp_path / "stdout.log.1").read_bytes() == b"a" * 60 + b"\n"
    log.write(b"c" * 250 + b"\n")  # longer than a file: split across three
    log.close()
    whole = b"".join(rotated(tmp_path / "stdout.log", i).read_bytes() for i in (2, 1, 0))
    assert whole.endswith(b"c" * 250 + b"\n")
    assert stream_bytes(tmp_path) <= 100 * 3
    assert tail_log(log_in(tmp_path), 1).lines == ["c" * 250]  # read whole again


def test_a_log_that_cannot_be_written_never_raises(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "gone" / "stdout.log", limit=10)
    log.write(b"output the pipe must still take\n" * 10)
    assert isinstance(log.failed, OSError)
    log.close()


# -- the end of a log ---------------------------------------------------------------------------


def test_the_tail_reads_across_renamed_files_as_one_text(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "stdout.log", limit=LIMIT, keep=3)
    log.write(numbered(0, 200))
    log.close()
    assert (tmp_path / "stdout.log.dropped").exists()
    tail = tail_log(log_in(tmp_path), 50)  # about 1.5 files
    expected = numbered(150, 200).decode().splitlines()
    assert tail.lines == expected
    assert tail.truncated
    everything = tail_log(log_in(tmp_path), 10_000)
    assert everything.lines[-50:] == expected and len(everything.lines) < 200
    assert everything.truncated  # rotation dropped the start


def test_the_tail_of_a_short_log_is_all_of_it(tmp_path: Path) -> None:
    (tmp_path / "stdout.log").write_bytes(b"one\r\ntwo\n\nthree")  # CRLF, a blank line, no end
    tail = tail_log(log_in(tmp_path), 10)
    assert tail.lines == ["one", "two", "", "three"] and not tail.truncated
    assert tail_log(log_in(tmp_path), 2).lines == ["", "three"]
    (tmp_path / "stderr.log").write_bytes(b"")
    empty = tail_log(log_in(tmp_path, "stderr"), 10)
    assert empty.lines == [] and not empty.truncated


def test_the_tail_reads_from_the_end_not_the_whole_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "stdout.log").write_bytes(numbered(0, 100_000))  # about 4 MB
    read = 0
    real = os.pread

    def counted(fd: int, size: int, offset: int) -> bytes:
        nonlocal read
        data = real(fd, size, offset)
        read += len(data)
        return data

    monkeypatch.setattr(os, "pread", counted)
    tail = tail_log(log_in(tmp_path), 20)
    assert tail.lines[-1].startswith("line 099999")
    assert read < 200 * 1024  # the lines asked for and the context before them, not 4 MB


def test_a_very_long_line_is_cut_and_says_how_long_it_was(tmp_path: Path) -> None:
    (tmp_path / "stdout.log").write_bytes(b"z" * 300_000 + b"\nshort\n")
    tail = tail_log(log_in(tmp_path), 5)
    cut, short = tail.lines
    assert cut == "z" * MAX_LINE_CHARS + " … [line cut: 300,000 bytes]"
    assert short == "short"


# -- what a line may hold -------------------------------------------------------------------------

HOSTILE = "\x1b]0;pwned\x07\x1b[2J [bold]x[/] \x1b[31mred\x1b[0m"


def test_lines_are_masked_and_their_controls_shown_inert(tmp_path: Path) -> None:
    (tmp_path / "stdout.log").write_text(
        f"{HOSTILE}\nkey = {FAKE_KEY}\nprogress 10%\rprogress 100%\n\tindented\n", "utf-8"
    )
    hostile, key, progress, indented = tail_log(log_in(tmp_path), 10).lines
    assert FAKE_KEY not in key and key == "key = sk-a****"
    assert progress == "progress 100%"  # as a terminal leaves a redrawn line
    # Colour and cursor codes are dropped; any other control is shown, never acted on.
    shown = shown_line(hostile)
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown == "\\x1b]0;pwned\\x07 [bold]x[/] red"
    assert shown_line(indented) == "        indented"


def test_a_private_key_is_masked_even_when_the_tail_starts_inside_it(tmp_path: Path) -> None:
    body = [f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{n:04d}abcdefghijklmnop" for n in range(30)]
    text = "\n".join(["-----BEGIN PRIVATE KEY-----", *body, "-----END PRIVATE KEY-----", "after"])
    (tmp_path / "stderr.log").write_text(text + "\n", "utf-8")
    lines = tail_log(log_in(tmp_path, "stderr"), 10).lines
    assert lines[-2:] == ["-----END PRIVATE KEY-----", "after"]
    assert all(line == "****" for line in lines[:-2])
    assert not any("MIIE" in line for line in lines)


# -- finding a run's logs -----------------------------------------------------------------------


@pytest.fixture
def failed_run(store: RunStore, tmp_path: Path) -> Iterator[Path]:
    """The workspace of a failed run (named to find_log: a database server's store has none)."""
    make_run(store, "run-1", RunState.FAILED)
    yield tmp_path


def test_an_unknown_run_and_a_run_without_logs_are_refused_with_a_sentence(
    store: RunStore, failed_run: Path
) -> None:
    refused = find_log(store, "run-nope", root=failed_run)
    assert refused == LogRefusal("not_found", "There is no run run-nope.")
    refused = find_log(store, "run-1", root=failed_run)
    assert isinstance(refused, LogRefusal) and refused.code == "no_logs"
    assert refused.message == "Run run-1 has no logs yet: no attempt of it has started."


def test_the_latest_attempt_is_found_unless_one_is_asked_for(
    store: RunStore, failed_run: Path
) -> None:
    for attempt in (1, 2):
        folder = attempt_dir(failed_run, "run-1", attempt)
        folder.mkdir(parents=True)
        (folder / "stdout.log").write_text(f"attempt {attempt}\n")
    (failed_run / "logs" / "run-1" / "attempt-x").mkdir()  # not an attempt's folder
    assert log_attempts(failed_run, "run-1") == [1, 2]
    latest = find_log(store, "run-1", root=failed_run)
    assert isinstance(latest, LogFiles) and latest.attempt == 2 and latest.attempts == (1, 2)
    first = find_log(store, "run-1", attempt=1, stream="stderr", root=failed_run)
    assert isinstance(first, LogFiles)
    assert first.path == failed_run / "logs/run-1/attempt-1/stderr.log"
    assert tail_log(first, 5).lines == []  # a stream that wrote nothing reads as empty
    missing = find_log(store, "run-1", attempt=3, root=failed_run)
    assert missing == LogRefusal(
        "no_logs", "Run run-1 has no logs for attempt 3; it has logs for attempts 1 and 2."
    )


def test_logs_from_before_attempt_folders_read_as_the_latest_attempt(
    store: RunStore, failed_run: Path
) -> None:
    legacy = failed_run / "logs" / "run-1"
    legacy.mkdir(parents=True)
    (legacy / "stdout.log").write_text("written by an older host\n")
    found = find_log(store, "run-1", root=failed_run)
    assert isinstance(found, LogFiles) and found.attempt == 1 and found.folder == legacy
    assert tail_log(found, 1).lines == ["written by an older host"]
    assert isinstance(find_log(store, "run-1", attempt=2, root=failed_run), LogRefusal)


def test_only_the_current_attempt_of_a_running_run_is_running(
    store: RunStore, tmp_path: Path
) -> None:
    make_run(store, "run-2", RunState.RUNNING)
    assert attempt_is_running(store, LogFiles("run-2", 1, "stdout", tmp_path))
    assert not attempt_is_running(store, LogFiles("run-2", 2, "stdout", tmp_path))
    make_run(store, "run-3", RunState.FAILED)
    assert not attempt_is_running(store, LogFiles("run-3", 1, "stdout", tmp_path))


# -- following ----------------------------------------------------------------------------------


class Handover:
    """A writer that waits, on a condition, until the follower has taken what it wrote."""

    def __init__(self) -> None:
        self.taken = 0
        self.changed = threading.Condition()

    def took(self, count: int) -> None:
        with self.changed:
            self.taken += count
            self.changed.notify_all()

    def wait_for(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.taken >= count, HANG_GUARD_S), (
                f"the follower took {self.taken} of {count} lines"
            )


def test_following_yields_every_line_written_across_renames(tmp_path: Path) -> None:
    path = tmp_path / "stdout.log"
    log = RotatingLog(path, limit=LIMIT, keep=3)
    log.write(numbered(0, 10))
    handover = Handover()
    finished = threading.Event()
    total = 600
    # Each batch is about 2.5 files: the follower meets two renames between two of its reads.
    batch = 100

    def writer() -> None:
        try:
            for start in range(10, total, batch):
                log.write(numbered(start, min(total, start + batch)))
                handover.wait_for(min(total, start + batch) - 5)
        finally:
            log.close()
            finished.set()

    thread = threading.Thread(target=writer)
    stop = threading.Event()
    follower = follow_log(log_in(tmp_path), lines=5, stop=stop, done=finished.is_set, poll=0.005)
    got = [next(follower).text for _ in range(5)]  # the log is opened at the first line asked
    handover.took(5)
    thread.start()
    try:
        for line in follower:
            assert not line.note, line
            got.append(line.text)
            handover.took(1)
    finally:
        stop.set()
        thread.join()
    assert got == numbered(5, total).decode().splitlines()  # the last 5, then every new line
    assert log.rotations >= 10


def test_a_line_written_in_pieces_is_handed_out_once_whole(tmp_path: Path) -> None:
    path = tmp_path / "stdout.log"
    path.write_bytes(b"first\nhalf of a")
    follower = LogFollower(log_in(tmp_path), 10)
    try:
        assert texts(follower.opening) == ["first"]
        assert follower.read_available() == []
        with path.open("ab") as handle:
            handle.write(b" line\nand a last one without its end")
        assert texts(follower.read_available()) == ["half of a line"]
        assert texts(follower.finish()) == ["and a last one without its end"]
    finally:
        follower.close()


def test_a_follower_started_before_the_file_exists_reads_it_from_its_start(
    tmp_path: Path,
) -> None:
    follower = LogFollower(log_in(tmp_path), 10)
    try:
        assert follower.opening == [] and follower.read_available() == []
        log = RotatingLog(tmp_path / "stdout.log", limit=LIMIT)
        log.write(b"hello\n")
        assert texts(follower.read_available()) == ["hello"]
        log.close()
    finally:
        follower.close()


def test_a_truncated_log_is_read_again_from_its_start_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "stdout.log"
    path.write_bytes(numbered(0, 20))
    follower = LogFollower(log_in(tmp_path), 0)
    try:
        path.write_bytes(b"anew\n")  # opened for writing again: the same file, cut short
        got = follower.read_available()
        assert got == [LogLine(TRUNCATED, note=True), LogLine("anew")]
    finally:
        follower.close()


def test_a_follower_left_behind_by_many_renames_says_output_may_be_missing(
    tmp_path: Path,
) -> None:
    log = RotatingLog(tmp_path / "stdout.log", limit=LIMIT, keep=3)
    log.write(numbered(0, 10))
    follower = LogFollower(log_in(tmp_path), 0)
    try:
        log.write(numbered(10, 400))  # renamed aside more than three times: its file dropped
        log.close()
        got = follower.finish()
        notes = [line.text for line in got if line.note]
        assert notes == [ROTATED_PAST]
        lines = texts(got)
        assert lines[0] == numbered(10, 11).decode().rstrip("\n")  # the file it had open
        assert lines[-1] == numbered(399, 400).decode().rstrip("\n")  # and the newest
    finally:
        follower.close()


def test_stopping_ends_a_follow_at_once(tmp_path: Path) -> None:
    (tmp_path / "stdout.log").write_bytes(numbered(0, 3))
    stop = threading.Event()
    follower = follow_log(log_in(tmp_path), lines=3, stop=stop, poll=HANG_GUARD_S)
    assert len([next(follower) for _ in range(3)]) == 3
    stop.set()
    assert list(follower) == []


def test_the_host_keeps_two_megabytes_per_file() -> None:
    # What docs/ipc.md promises: 2 MB files, three renamed aside, 8 MB a stream at most.
    assert LOG_LIMIT_BYTES == 2 * 1024 * 1024 and LOG_ROTATIONS == 3
    assert WINDOW_BYTES >= 4 * MAX_LINE_CHARS


def test_a_run_another_hosts_workspace_ran_says_where_its_logs_are(
    store: RunStore, tmp_path: Path
) -> None:
    from core.host.fleet import Lease
    from core.lifecycle import Action
    from core.moves import host_move

    Lease(store, "build-02", Path("/srv/other-ws"), None, 5.0, 60.0, machine="build-02").register()
    make_run(store, "run-2", RunState.QUEUED)
    host_move(store, "run-2", Action.START, holder="build-02")
    refused = find_log(store, "run-2", root=tmp_path)
    assert isinstance(refused, LogRefusal) and refused.code == "elsewhere"
    assert refused.message == (
        "Run run-2 ran on host build-02: its logs are in that host's workspace /srv/other-ws "
        "on build-02 (run `jarvis logs` there)."
    )
    # The same host's own workspace: no logs yet is just that.
    Lease(store, "here", tmp_path, None, 5.0, 60.0).register()
    make_run(store, "run-3", RunState.QUEUED)
    host_move(store, "run-3", Action.START, holder="here")
    mine = find_log(store, "run-3", root=tmp_path)
    assert isinstance(mine, LogRefusal) and mine.code == "no_logs"
