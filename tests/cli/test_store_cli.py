"""Every command on a missing, broken, read-only or failing store: a sentence and a stable code,
exit 2, never a traceback and never a verdict on the input; reading never creates anything."""

from __future__ import annotations

import json
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.store.sqlite_store import SqliteStore
from jarvis_cli import run
from tests.broken_stores import BREAK, OPEN_CODE, good_store
from tests.cli.conftest import jarvis
from tests.conftest import SAMPLES
from tests.core.test_store_opening import fingerprint

FIX = SAMPLES / "dispatches/valid-backend-fix.json"
CRITERION = json.dumps({"type": "file_exists", "path": "a.txt", "description": "a.txt exists"})

#: Commands that only read a workspace.
READERS: dict[str, tuple[str, ...]] = {
    "runs": ("runs",),
    "show": ("show", "run-001"),
    "journal": ("journal",),
    "criteria": ("criteria", "run-001"),
}
#: Commands that change runs in an existing workspace, and never create one.
ACTORS: dict[str, tuple[str, ...]] = {
    "cancel": ("cancel", "run-001", "--reason", "wrong branch"),
    "retry": ("retry", "run-001"),
    "approve": ("approve", "run-001"),
    "override": ("override", "run-001", "--reason", "checked by hand"),
    "steer": ("steer", "run-001", "focus"),
    "criteria_add": ("criteria", "run-001", "--add", CRITERION),
    "verify": ("verify", "run-001"),
}
#: Everything that opens a workspace's store, the creating `dispatch` included.
OPENERS = {**READERS, **ACTORS, "dispatch": ("dispatch", str(FIX))}


def no_traceback(result: Any) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


def error_of(result: Any) -> dict[str, str]:
    assert result.code == 2, (result.stdout, result.stderr)
    no_traceback(result)
    error: dict[str, str] = result.json()["error"]
    assert set(error) == {"code", "message"} and error["message"].endswith(".")
    return error


# -- reading never creates ----------------------------------------------------------------------


@pytest.mark.parametrize("command", [*READERS, *ACTORS])
def test_a_command_on_a_missing_workspace_creates_nothing(tmp_path: Path, command: str) -> None:
    deep = tmp_path / "nonexistent" / "deep" / "ws"
    error = error_of(jarvis(*OPENERS[command], "--workspace", deep, "--json"))
    assert error["code"] == "no_workspace" and str(deep) in error["message"]
    assert not (tmp_path / "nonexistent").exists()
    # A directory that holds no store is not a workspace either, and gets no store.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert error_of(jarvis(*OPENERS[command], "--workspace", empty, "--json"))["code"] == (
        "no_workspace"
    )
    assert list(empty.iterdir()) == []


def test_readable_output_of_a_missing_workspace_is_one_sentence(tmp_path: Path) -> None:
    result = jarvis("runs", "--workspace", tmp_path / "nope")
    assert result.code == 2 and result.stdout == ""
    assert (
        result.stderr.startswith("jarvis: There is no workspace") and result.stderr.count("\n") == 1
    )


def test_dispatch_creates_a_workspace_and_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "new" / "ws"
    first = jarvis("dispatch", FIX, "--workspace", ws, "--json")
    assert first.code == 0 and first.json()["outcome"] == "enqueued"
    assert "created" in first.stderr and str(ws / "jarvis.db") in first.stderr
    again = jarvis("dispatch", SAMPLES / "dispatches/valid-ui-dashboard.json", "--workspace", ws)
    assert again.code == 0 and "created" not in again.stderr
    listed = jarvis("runs", "--workspace", ws, "--json")
    assert listed.code == 0 and len(listed.json()["runs"]) == 2


# -- broken stores ------------------------------------------------------------------------------


@pytest.mark.parametrize("broken", list(BREAK))
def test_every_command_on_a_broken_store_is_a_sentence_and_exit_2(
    tmp_path: Path, broken: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    db = ws / "jarvis.db"
    BREAK[broken](db)
    before = fingerprint(db)
    for command, argv in OPENERS.items():
        error = error_of(jarvis(*argv, "--workspace", ws, "--json"))
        assert error["code"] == (OPEN_CODE[broken] or "store_corrupt"), command
        assert str(db) in error["message"], command
        readable = jarvis(*argv, "--workspace", ws)
        assert readable.code == 2 and readable.stdout == "", command
        no_traceback(readable)
        assert readable.stderr.startswith("jarvis: The store") or readable.stderr.startswith(
            f"jarvis: {db}"
        ), command
    assert fingerprint(db) == before


def test_a_zero_byte_store_says_history_is_missing_and_is_never_written(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "jarvis.db").write_bytes(b"")
    for argv in (("runs",), ("dispatch", str(FIX))):
        error = error_of(jarvis(*argv, "--workspace", ws, "--json"))
        assert error["code"] == "store_empty" and "history is missing" in error["message"]
    assert (ws / "jarvis.db").stat().st_size == 0
    # No log, index or scratch store beside it either (dispatch may have made the IPC tree).
    assert sorted(p.name for p in ws.iterdir() if p.name != "data") == ["jarvis.db"]


# -- read-only workspaces -----------------------------------------------------------------------


def _workspace_with_a_run(ws: Path) -> None:
    ws.mkdir(parents=True)
    assert jarvis("dispatch", FIX, "--workspace", ws).code == 0


def _reads_work(result_of: Any, ws: Path) -> None:
    runs = result_of("runs", "--workspace", ws, "--json")
    assert runs.code == 0, runs.stderr
    (row,) = runs.json()["runs"]
    shown = result_of("show", row["run_id"], "--workspace", ws, "--json")
    assert shown.code == 0 and shown.json()["run"]["run_id"] == row["run_id"]
    journal = result_of("journal", "--workspace", ws, "--json")
    assert journal.code == 0 and json.loads(journal.stdout.splitlines()[0])["kind"] == "created"
    listing = result_of("criteria", row["run_id"], "--workspace", ws, "--json")
    assert listing.code == 0 and listing.json()["ok"]
    readable = result_of("show", row["run_id"], "--workspace", ws)
    assert readable.code == 0 and row["run_id"] in readable.stdout
    cancel = result_of("cancel", row["run_id"], "--reason", "x", "--workspace", ws, "--json")
    assert cancel.code == 2 and cancel.json()["error"]["code"] in {
        "store_read_only",
        "workspace_unusable",
    }
    no_traceback(cancel)


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A workspace, and the same directory mounted read-only (where mounting is allowed)."""
    source = tmp_path / "source"
    view = tmp_path / "view"
    _workspace_with_a_run(source)
    view.mkdir()
    mounted = subprocess.run(["mount", "--bind", source, view], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
    try:
        ro = subprocess.run(["mount", "-o", "remount,bind,ro", view], capture_output=True)
        if ro.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {ro.stderr.decode().strip()}")
        yield source, view
    finally:
        subprocess.run(["umount", view], check=True)


def test_a_read_only_mount_can_be_read_by_root(read_only_mount: tuple[Path, Path]) -> None:
    source, view = read_only_mount
    with pytest.raises(OSError):
        (view / "probe").write_text("x")  # really read-only, even for root
    _reads_work(jarvis, view)
    assert sorted(p.name for p in source.iterdir()) == ["data", "jarvis.db"]


def test_a_read_only_mount_sees_a_live_writers_latest_commit(
    read_only_mount: tuple[Path, Path],
) -> None:
    source, view = read_only_mount
    writer = SqliteStore(source / "jarvis.db")  # holds the log open, as a running host does
    try:
        (run_id,) = [r["run_id"] for r in writer.list_runs()]
        assert jarvis("cancel", run_id, "--reason", "seen", "--workspace", source).code == 0
        shown = jarvis("show", run_id, "--workspace", view, "--json")
        assert shown.code == 0 and shown.json()["run"]["state"] == "failed"
    finally:
        writer.close()


ROOT = Path(__file__).resolve().parents[2]


def _drop_to_nobody() -> None:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def _nobody_python() -> str | None:
    """An interpreter of this Python version that an unprivileged user can run and read.

    This one may live under a private home (pyenv under /root); the system's, of the same
    version, can load the same packages.
    """
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (sys.executable, f"/usr/bin/python{version}"):
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sqlite3, __future__"],
                capture_output=True,
                preexec_fn=_drop_to_nobody,
            )
        except OSError:  # not executable by that user
            continue
        if probe.returncode == 0:
            return candidate
    return None


def as_nobody(*args: str | Path) -> Any:
    """Run the command line as an unprivileged user, for whom file permissions hold."""
    python = _nobody_python()
    if python is None:
        pytest.skip("no Python here that an unprivileged user can run")
    packages = [p for p in sys.path if p.endswith("site-packages")]
    code = (
        "import site, sys\n"
        f"for p in {packages!r}: site.addsitedir(p)\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from jarvis_cli import run\n"
        "sys.exit(run(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [python, "-c", code, *map(str, args)],
        capture_output=True,
        timeout=60,
        cwd="/",
        preexec_fn=_drop_to_nobody,
        env={**os.environ, "HOME": "/nonexistent", "JARVIS_OPERATOR": "auditor"},
    )

    class Result:
        def __init__(self) -> None:
            self.code = proc.returncode
            self.stdout = proc.stdout.decode()
            self.stderr = proc.stderr.decode()

        def json(self) -> Any:
            (line,) = self.stdout.strip().splitlines()
            return json.loads(line)

    return Result()


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_an_auditor_who_may_only_read_can_list_show_and_read_the_journal() -> None:
    # Not under tmp_path: pytest's base directory is private to root.
    base = Path(tempfile.mkdtemp(prefix="jarvis-ro-"))
    try:
        ws = base / "ws"
        _workspace_with_a_run(ws)
        for path in (base, ws, ws / "data"):
            path.chmod(0o755)
        (ws / "jarvis.db").chmod(0o644)
        probe = as_nobody("runs", "--workspace", ws / "nope", "--json")
        assert probe.code == 2 and probe.json()["error"]["code"] == "no_workspace", probe.stderr
        _reads_work(as_nobody, ws)
        assert sorted(p.name for p in ws.iterdir()) == ["data", "jarvis.db"]
    finally:
        shutil.rmtree(base)


# -- faults while in use ------------------------------------------------------------------------


def run_in_process(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> Any:
    code = run([str(a) for a in argv])
    out = capsys.readouterr()

    class Result:
        def __init__(self) -> None:
            self.code = code
            self.stdout = out.out
            self.stderr = out.err

        def json(self) -> Any:
            (line,) = self.stdout.strip().splitlines()
            return json.loads(line)

    return Result()


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store opened from now on may not grow its file (SQLITE_FULL, as on a full disk)."""
    opened = SqliteStore.__init__

    def opening(self: SqliteStore, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        (pages,) = self.db.execute("PRAGMA page_count").fetchone()
        self.db.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(SqliteStore, "__init__", opening)


def test_dispatch_on_a_full_disk_is_an_io_error_not_a_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], full_disk: None
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    good_store(ws / "jarvis.db", runs=1)
    # A task long enough to need new pages, whatever room the last ones have left.
    doc = json.loads(FIX.read_text())
    doc["input"] = "Fix the retry counter. " * 2000
    big = tmp_path / "big.json"
    big.write_text(json.dumps(doc))
    result = run_in_process(capsys, "dispatch", big, "--workspace", ws, "--json")
    assert result.code == 2 and result.json() == {
        "error": {"code": "disk_full", "message": result.json()["error"]["message"]}
    }
    assert "is full" in result.json()["error"]["message"]
    readable = run_in_process(capsys, "dispatch", big, "--workspace", ws)
    assert readable.code == 2 and readable.stdout == ""
    assert readable.stderr.startswith("jarvis: The disk holding the store")


def test_a_lock_held_past_the_busy_timeout_is_an_io_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import jarvis_cli.opening as runs_cli

    ws = tmp_path / "ws"
    _workspace_with_a_run(ws)
    monkeypatch.setattr(runs_cli, "BUSY_TIMEOUT_S", 0.0)
    holder = sqlite3.connect(ws / "jarvis.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        (row,) = run_in_process(capsys, "runs", "--workspace", ws, "--json").json()["runs"]
        result = run_in_process(
            capsys, "cancel", row["run_id"], "--reason", "x", "--workspace", ws, "--json"
        )
    finally:
        holder.rollback()
        holder.close()
    assert result.code == 2 and result.json()["error"]["code"] == "store_busy"


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real, nearly full file system (a small tmpfs), where mounting is allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", mount], check=True)


def test_dispatch_on_a_really_full_disk_is_an_io_error(tiny_disk: Path) -> None:
    ws = tiny_disk / "ws"
    assert jarvis("dispatch", FIX, "--workspace", ws).code == 0
    # Fill what is left, so the next dispatch's writes find no room.
    with (tiny_disk / "filler").open("wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError:
            pass
    ui = SAMPLES / "dispatches/valid-ui-dashboard.json"
    result = jarvis("dispatch", ui, "--workspace", ws, "--json")
    error = error_of(result)
    assert error["code"] == "disk_full" and "is full" in error["message"]
    # What is there can still be read: an operator needs it most when the disk is full.
    listed = jarvis("runs", "--workspace", ws, "--json")
    assert listed.code == 0 and len(listed.json()["runs"]) == 1


def test_following_the_journal_of_a_read_only_mount_sees_later_commits(
    read_only_mount: tuple[Path, Path],
) -> None:
    source, view = read_only_mount
    # No writer is connected: the follower opens the file as it is, and must open it again to
    # see what a writer that starts later commits.
    follower = subprocess.Popen(
        [sys.executable, "-m", "jarvis_cli", "journal", "--follow", "--json",
         "--workspace", str(view)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    output = follower.stdout
    assert output is not None

    def read() -> None:
        for line in output:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        first = json.loads(lines.get(timeout=60))
        assert first["kind"] == "created"
        cancel = jarvis("cancel", first["run_id"], "--reason", "later", "--workspace", source)
        assert cancel.code == 0
        # A generous wait for the line, only so that a follower that never sees it fails.
        second = json.loads(lines.get(timeout=60))
        assert second["kind"] == "transition" and second["payload"]["reason"] == "later"
    finally:
        follower.terminate()
        follower.wait(timeout=60)
