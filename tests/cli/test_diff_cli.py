"""``jarvis diff`` and ``jarvis show``'s diff size, on a run whose commits are in a real
repository: the files, the patch streamed, JSON, refusals, and worker text that stays text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.cli.conftest import jarvis
from tests.cli.test_inert_output import ARG as EVERY_CONTROL
from tests.cli.test_inert_output import problems, run_raw
from tests.core.store_helpers import make_run
from tests.diffrepo import FAKE_KEY, HOSTILE, build_diff_repo, dated_commit, record_diff


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with ``r-review`` (a checked diff), ``r-running`` (none yet)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    repo, base, head = build_diff_repo(tmp_path / "repo")
    store = SqliteStore(ws / "jarvis.db")
    try:
        make_run(store, "r-review", RunState.REVIEW_REQUESTED)
        make_run(store, "r-running", RunState.RUNNING)
        record_diff(store, "r-review", repo, base, head)
    finally:
        store.close()
    return ws


def test_text_lists_the_files_then_streams_the_patch(ws: Path) -> None:
    result = jarvis("diff", "r-review", "--workspace", ws)
    assert result.code == 0, result.stderr
    out = result.stdout
    assert out.startswith("run r-review  attempt 1  ")
    assert "4 files changed, +68 -2" in out
    lines = out.splitlines()
    assert ["M", "+2", "-2", "src/app.py"] in [line.split() for line in lines]
    assert "diff --git a/scripts/deploy.sh b/scripts/deploy.sh" in lines
    assert "+rsync -a build/ prod:/srv/app/" in lines
    # Every file is listed before the patch starts.
    listed = lines.index(next(line for line in lines if line.split()[-1:] == ["src/app.py"]))
    assert listed < lines.index("diff --git a/docs/long.md b/docs/long.md")


def test_stat_stops_after_the_files(ws: Path) -> None:
    result = jarvis("diff", "r-review", "--stat", "--workspace", ws)
    assert result.code == 0
    assert "src/app.py" in result.stdout and "diff --git" not in result.stdout


def test_json_is_one_object_with_the_files_and_the_patch(ws: Path) -> None:
    result = jarvis("diff", "r-review", "--json", "--workspace", ws)
    assert result.code == 0
    out = result.json()
    assert set(out) == {"run_id", "attempt", "base", "head", "files", "patch", "refusal"}
    assert out["run_id"] == "r-review" and len(out["base"]) == len(out["head"]) == 40
    assert out["files"][0] == {"path": "docs/long.md", "status": "A", "additions": 60,
                               "deletions": 0}  # fmt: skip
    patch = out["patch"].splitlines()
    assert patch[0] == "diff --git a/docs/long.md b/docs/long.md"
    assert "+" + HOSTILE in patch  # JSON escapes it; the text is the file's
    assert FAKE_KEY not in out["patch"] and "+key = 'sk-a****'" in patch
    stat = jarvis("diff", "r-review", "--json", "--stat", "--workspace", ws).json()
    assert "patch" not in stat and stat["files"] == out["files"]


def test_a_run_without_a_diff_or_that_does_not_exist_exits_1_with_a_sentence(ws: Path) -> None:
    result = jarvis("diff", "r-running", "--workspace", ws)
    assert result.code == 1
    said = " ".join(result.stdout.split())
    assert said.startswith("✗ no_diff Run r-running has no checked commit yet: ")
    out = jarvis("diff", "r-running", "--json", "--workspace", ws)
    assert out.code == 1 and out.json()["refusal"]["code"] == "no_diff"
    gone = jarvis("diff", "nope", "--json", "--workspace", ws)
    assert gone.code == 1
    assert gone.json() == {
        "run_id": "nope",
        "refusal": {"code": "not_found", "message": "There is no run nope."},
    }


def test_show_json_carries_the_diff_size(ws: Path) -> None:
    run = jarvis("show", "r-review", "--json", "--workspace", ws).json()["run"]
    assert run["diff_stat"] == {"files": 4, "additions": 68, "deletions": 2}
    none = jarvis("show", "r-running", "--json", "--workspace", ws).json()["run"]
    assert none["diff_stat"] is None
    readable = jarvis("show", "r-review", "--workspace", ws).stdout
    assert "  diff: 4 file(s) +68 -2  (jarvis diff r-review)" in readable
    assert "diff:" not in jarvis("show", "r-running", "--workspace", ws).stdout


def test_the_diff_is_read_from_the_repository_after_its_worktree_is_gone(
    tmp_path: Path, ws: Path
) -> None:
    assert not (tmp_path / "checkouts" / "r-review").exists()  # never made, as if removed
    assert jarvis("diff", "r-review", "--stat", "--workspace", ws).code == 0


@pytest.fixture
def hostile_ws(tmp_path: Path) -> Path:
    """A run whose commit adds a file holding every control, escapes, markup and a key."""
    ws = tmp_path / "ws"
    ws.mkdir()
    repo, base, _ = build_diff_repo(tmp_path / "repo")
    text = f"{EVERY_CONTROL}\n{HOSTILE}\ntoken = {FAKE_KEY}\n[bold]x[/]\n"
    head = dated_commit(repo, {f"odd\x1b[31m{EVERY_CONTROL[-20:]}.txt": text}, "hostile")
    store = SqliteStore(ws / "jarvis.db")
    try:
        make_run(store, "r1", RunState.REVIEW_REQUESTED)
        record_diff(store, "r1", repo, base, head)
    finally:
        store.close()
    return ws


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["readable", "colour", "json"])
def test_worker_text_in_the_diff_reaches_no_terminal_as_a_control(
    hostile_ws: Path, mode: str
) -> None:
    args: list[str | Path] = ["diff", "r1", "--workspace", hostile_ws]
    if mode == "json":
        args.append("--json")
    done = run_raw(args, colour=mode == "colour")
    assert done.returncode == 0, done.stderr
    assert problems(done.stdout, colour=mode == "colour") == []
    assert problems(done.stderr, colour=False) == []
    out = done.stdout.decode()
    assert FAKE_KEY not in out and FAKE_KEY[12:40] not in out
    if mode == "json":
        patch = json.loads(out)["patch"]
        assert "[bold]x[/]" in patch and "\x1b[2J" in patch  # the text, as data
    else:
        assert "+[bold]x[/]" in out  # markup shown as typed
        assert "\\x1b[2J" in out  # an escape shown, never sent
