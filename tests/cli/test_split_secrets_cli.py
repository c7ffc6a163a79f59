"""The CLI masks worker text as it shows it, not only as the host stores it.

A store written by an engine older than a masking rule holds worker text as the worker wrote it:
here, an AWS key id and a GitHub token split by colour codes and a title sequence, in a progress
summary, a journal entry, a completion field, a gate's detail and a refused file's message.
`jarvis show`, `runs`, `journal` and `errors`, readable and ``--json``, must mask them as they
print them: no piece of either secret past the four characters a mask keeps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SPLIT_AWS = f"{AWS[:8]}\x1b[0m{AWS[8:]}"
SPLIT_GITHUB = f"{GITHUB[:10]}\x1b]0;x\x07{GITHUB[10:]}"
PIECES = (AWS[4:8], AWS[8:], GITHUB[4:10], GITHUB[10:])
RUN = "run-old-rows"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("COLUMNS", "400")  # readable output wide enough to hold every summary
    store = SqliteStore(root / "jarvis.db")
    try:
        make_run(store, RUN, RunState.RUNNING)
        summary = f"{SPLIT_AWS} via {SPLIT_GITHUB}"
        with store.transaction() as tx:
            tx.add_progress_event(RUN, 1, 1, "0001.json", timestamp="2026-11-22T00:00:00.000Z",
                                  at_utc="2026-11-22T00:00:00.000Z", phase="testing",
                                  summary=summary, tool_used=f"curl {SPLIT_GITHUB}")  # fmt: skip
            tx.touch_run(
                RUN,
                changes={"last_progress_summary": summary, "test_summary": f"ok {SPLIT_AWS}"},
                kind="progress",
                payload={"attempt": 1, "seq": 1, "phase": "testing", "summary": summary},
                actor="jarvis-worker-1",
            )
            tx.add_gate_result(RUN, 1, "tests_pass", False, f"failed: {SPLIT_GITHUB}")
            tx.execute(
                "INSERT INTO quarantined_files (reason_file, run_id, named_run, lane, code, "
                "message, original_path, stored_as, outcome, quarantined_at) VALUES "
                "('r.reason.json', ?, ?, 'jarvis-worker-1', 'not_json', ?, 'a.json', "
                "'errors/a.json', 'moved', '2026-11-22T00:00:01.000000Z')",
                [RUN, RUN, f"The document quotes {SPLIT_AWS}."],
            )
    finally:
        store.close()
    return root


@pytest.mark.parametrize(
    "command", [("show", RUN), ("runs",), ("journal",), ("errors",)], ids=" ".join
)
@pytest.mark.parametrize("form", [(), ("--json",)], ids=["readable", "json"])
def test_old_rows_are_masked_as_shown(
    ws: Path, command: tuple[str, ...], form: tuple[str, ...]
) -> None:
    ran = jarvis(*command, "--workspace", ws, *form)
    assert ran.code == 0, ran.stderr
    shown = [piece for piece in PIECES if piece in ran.stdout]
    assert not shown, f"{' '.join(command)} shows {shown}"
    assert "AKIA****" in ran.stdout
    if command != ("errors",):
        assert "ghp_****" in ran.stdout
