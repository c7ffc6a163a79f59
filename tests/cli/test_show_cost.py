"""``jarvis show`` says when a run's cost was computed by Jarvis (its agent reported none, and
the tokens were priced: ``[prices]``), in text and in JSON."""

from __future__ import annotations

from pathlib import Path

from core.ipc.payloads import Usage
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    try:
        make_run(store, "r-codex", RunState.RUNNING)
        make_run(store, "r-claude", RunState.RUNNING)
        with store.transaction() as tx:
            used = Usage(tokens_in=30_000, tokens_out=1_000, cost_usd=0.0475)
            tx.record_usage("r-codex", 1, 1, used.model_copy(update={"cost_computed": True}))
            tx.record_usage("r-claude", 1, 1, used)
    finally:
        store.close()
    return ws


def test_a_computed_cost_is_shown_as_computed(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    shown = jarvis("show", "r-codex", "--workspace", ws)
    assert shown.code == 0 and "30.0k in · 1.0k out · ≈$0.05" in shown.stdout, shown.stdout
    usage = jarvis("show", "r-codex", "--json", "--workspace", ws).json()["run"]["usage"]
    assert usage["cost_computed"] is True and usage["cost_usd"] == 0.0475
    # A cost the agent reported is shown as it is.
    reported = jarvis("show", "r-claude", "--workspace", ws).stdout
    assert "· $0.05" in reported and "≈" not in reported
    assert jarvis("show", "r-claude", "--json", "--workspace", ws).json()["run"]["usage"][
        "cost_computed"
    ] is False  # fmt: skip
