"""`jarvis show`'s readable rendering: what a run's agent spent."""

from __future__ import annotations

from pathlib import Path

from core.ipc.payloads import Usage
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run

RUN = "r1"


def test_a_cost_under_a_cent_is_shown_as_what_it_was(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteStore(ws / "jarvis.db")
    make_run(store, RUN, RunState.RUNNING)
    with store.transaction() as tx:
        tx.record_usage(RUN, 1, 1, Usage(tokens_in=3_400, tokens_out=200, cost_usd=0.0042))
    store.close()
    shown = jarvis("show", RUN, "--workspace", ws)
    assert shown.code == 0, shown.stderr
    (used,) = [line for line in shown.stdout.splitlines() if line.startswith("  used")]
    assert used.split() == ["used", "3.4k", "in", "·", "200", "out", "·", "$0.004"], used
    # The JSON keeps the figure whole.
    usage = jarvis("show", RUN, "--workspace", ws, "--json").json()["run"]["usage"]
    assert usage["cost_usd"] == 0.0042
