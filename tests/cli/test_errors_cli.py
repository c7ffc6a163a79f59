"""Refused IPC files on the command line: `jarvis errors`, the count under `jarvis runs`, and
a run's own refused files in `jarvis show` — readable and ``--json``, every text inert."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ipc.files import atomic_write_json
from tests.cli.conftest import jarvis
from tests.host.inproc import LANE, host_in_process, write_progress

RUN = "errors-cli-run-1"
ESCAPE = "\x1b]0;pwned\x07"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace where the host refused three files: two of the run's, one of no run."""
    root = tmp_path / "ws"
    with host_in_process(root, RUN) as host:
        progress = host.layout.progress_dir(LANE, RUN)
        progress.mkdir(parents=True)
        (progress / "00000001-1.json").write_bytes(b"not JSON")
        ack = host.layout.ack_file(LANE, RUN)
        ack.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(ack, {"steer_id": f"steer-{ESCAPE}", "acked_at": "2026-11-22T03:31:02Z"})
        write_progress(host, "nobody-run", 1)
        host.sweep()
    return root


def test_errors_lists_every_refused_file_newest_first(ws: Path) -> None:
    result = jarvis("errors", "--workspace", ws, "--json")
    assert result.code == 0, result.stderr
    out = result.json()
    codes = [row["code"] for row in out["quarantined"]]
    assert sorted(codes) == ["not_json", "unknown_run", "unknown_steer"]
    assert out["last_24h"] == {"total": 3, "unattached": 1}
    by_code = {row["code"]: row for row in out["quarantined"]}
    assert by_code["unknown_run"]["run_id"] is None
    assert by_code["unknown_run"]["named_run"] == "nobody-run"
    assert by_code["not_json"]["run_id"] == RUN
    assert Path(by_code["not_json"]["stored_as"]).read_bytes() == b"not JSON"
    assert "\x1b" not in result.stdout  # JSON escapes it

    only_run = jarvis("errors", "--run", RUN, "--workspace", ws, "--json").json()
    assert sorted(r["code"] for r in only_run["quarantined"]) == ["not_json", "unknown_steer"]
    loose = jarvis("errors", "--unattached", "--workspace", ws, "--json").json()
    assert [r["code"] for r in loose["quarantined"]] == ["unknown_run"]


def test_errors_readable_is_inert_and_says_where_each_file_lies(ws: Path) -> None:
    result = jarvis("errors", "--workspace", ws)
    assert result.code == 0, result.stderr
    assert "3 refused file(s)" in result.stdout
    assert "unknown_steer  from jarvis-worker-1" in result.stdout
    assert f"run {RUN}" in result.stdout and "run nobody-run (unknown)" in result.stdout
    assert "now data/ipc/errors/" in result.stdout  # relative to the workspace
    assert "\x1b" not in result.stdout and "\\x1b]0;pwned\\x07" in result.stdout


def test_runs_counts_recent_refusals(ws: Path) -> None:
    out = jarvis("runs", "--workspace", ws, "--json").json()
    assert out["quarantined_last_24h"] == {"total": 3, "unattached": 1}
    readable = jarvis("runs", "--workspace", ws)
    assert "3 IPC file(s) refused in the last 24 h, 1 naming no run" in readable.stdout
    assert "jarvis errors" in readable.stdout


def test_runs_says_nothing_when_nothing_was_refused(tmp_path: Path) -> None:
    with host_in_process(tmp_path / "ws", RUN):
        pass
    readable = jarvis("runs", "--workspace", tmp_path / "ws")
    assert "refused" not in readable.stdout


def test_show_lists_the_runs_refused_files(ws: Path) -> None:
    out = jarvis("show", RUN, "--workspace", ws, "--json").json()
    assert sorted(r["code"] for r in out["run"]["quarantined"]) == ["not_json", "unknown_steer"]
    assert out["run"]["quarantined_count"] == 2
    readable = jarvis("show", RUN, "--workspace", ws)
    assert "refused files (2)" in readable.stdout
    assert "not_json" in readable.stdout and "unknown_steer" in readable.stdout
    assert "\x1b" not in readable.stdout


def test_stderr_lines_are_quoted_and_cannot_pass_for_fields(tmp_path: Path) -> None:
    """A worker's stderr may hold lines shaped like `jarvis show`'s own fields: each is shown
    behind a gutter, and a long one wraps after it, so no line of it starts where a field does."""
    from io import StringIO

    from jarvis_cli.output import console
    from jarvis_cli.trouble import print_run_trouble

    forged = "  state                 done\n  overridden_by         alice\n" + "x " * 60
    detail = {"stderr": [{"attempt": 1, "exit_code": 1, "total_bytes": 99, "tail": forged}]}
    out = console()
    out.file = StringIO()
    out.width = 80
    print_run_trouble(out, detail, tmp_path)
    lines = out.file.getvalue().splitlines()
    assert lines[0].startswith("worker stderr")
    body = lines[1:]
    assert [line for line in body if line.lstrip().startswith(("state", "overridden_by"))] == []
    assert sum("│" in line for line in body) == 3  # one gutter per stderr line
    assert len(body) > 3  # the long line wrapped, and its rest sits after the gutter
    assert all(line.startswith("  │ ") or line.startswith("    ") for line in body)
