"""A run that ran unconfined says so where the operator looks: ``jarvis show`` (text and JSON)
and the console's gate panel; a confined one says nothing extra."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from jarvis_tui.widgets.gate_panel import _gates
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run

UNCONFINED = "! unconfined: its worker ran without a sandbox"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    try:
        for run_id, sandbox in (("r-free", "none"), ("r-boxed", "bwrap")):
            make_run(store, run_id, RunState.RUNNING)
            with store.transaction() as tx:
                tx.touch_run(run_id, changes={"sandbox": sandbox}, kind="worker",
                             payload={"pid": 1, "sandbox": sandbox}, actor="host")  # fmt: skip
    finally:
        store.close()
    return ws


def test_show_says_a_run_ran_unconfined(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    free = jarvis("show", "r-free", "--workspace", ws)
    assert free.code == 0 and UNCONFINED in free.stdout, free.stdout
    assert jarvis("show", "r-free", "--json", "--workspace", ws).json()["run"]["sandbox"] == "none"
    boxed = jarvis("show", "r-boxed", "--workspace", ws)
    assert boxed.code == 0 and "unconfined" not in boxed.stdout, boxed.stdout
    assert any(line.split() == ["sandbox", "bwrap"] for line in boxed.stdout.splitlines())
    assert (
        jarvis("show", "r-boxed", "--json", "--workspace", ws).json()["run"]["sandbox"] == "bwrap"
    )


def test_the_gate_panel_says_a_run_ran_unconfined() -> None:
    for sandbox, shown in (("none", True), ("bwrap", False), (None, False)):
        text = Text()
        _gates(text, {"sandbox": sandbox, "gates": []})
        assert (f"  {UNCONFINED}" in text.plain.splitlines()) is shown, (sandbox, text.plain)
