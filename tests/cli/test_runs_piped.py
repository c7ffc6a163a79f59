"""``jarvis runs`` into a pipe prints every value whole: cut to 80 columns it said "l…" for a
lane and "c…" for what a run was doing, which no script or grep could use. A terminal still
gets a table that fits it."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run
from tests.jarvis_cli import jarvis
from tests.processes import PtyProcess

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LANE = "jarvis-worker-with-a-long-lane-name"
SAID = "compiling the dashboard's sidebar after rebasing on main, then running the whole suite"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    try:
        make_run(store, "task-with-a-rather-long-run-id-0001", RunState.RUNNING, lane=LANE)
    finally:
        store.close()
    db = sqlite3.connect(ws / "jarvis.db")
    with db:
        db.execute("UPDATE runs SET last_progress_summary = ?", [SAID])
    db.close()
    return ws


def test_a_pipe_gets_every_value_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    done = jarvis("runs", "--workspace", workspace(tmp_path))
    assert done.code == 0, done
    assert LANE in done.stdout and SAID in done.stdout
    assert "task-with-a-rather-long-run-id-0001" in done.stdout and "…" not in done.stdout
    row = next(line for line in done.stdout.splitlines() if LANE in line)
    assert SAID in row  # one line a run, for grep and cut


def test_a_terminal_still_gets_a_table_that_fits_it(tmp_path: Path) -> None:
    import sys

    ws = workspace(tmp_path)
    argv = [sys.executable, "-m", "jarvis_cli", "runs", "--workspace", str(ws)]
    with PtyProcess(argv, cols=80, rows=30, env=dict(os.environ, TERM="xterm")) as terminal:
        assert terminal.wait() == 0
        text = ANSI.sub("", terminal.output.decode(errors="replace"))
    widest = max(len(line.rstrip("\r")) for line in text.split("\n"))
    assert widest <= 80 and "…" in text


def test_lanes_into_a_pipe_are_whole_one_line_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    ws = workspace(tmp_path)
    reason = "release freeze until the tag is cut and the changelog is reviewed by the team"
    assert jarvis("lane", "pause", LANE, "--reason", reason, "--workspace", ws).code == 0
    done = jarvis("lane", "list", "--workspace", ws)
    assert done.code == 0, done
    row = next(line for line in done.stdout.splitlines() if LANE in line)
    assert reason in row  # folded into 80 columns, the lane's name was split over two lines
