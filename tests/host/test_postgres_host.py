"""A workspace whose store is PostgreSQL (`[store] url`): the real host serves it, the command
line and the console read and act on it, and nothing is written to a jarvis.db."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.store.location import open_store
from core.store.postgres_store import PostgresStore
from jarvis_tui.modals.reason_dialog import ReasonDialog
from tests.host.hostkit import (
    STEERABLE_INTERVAL,
    cli,
    dispatch,
    running_host,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S
from tests.tui.helpers import make_app, select, settle, wait_for


def states(store: PostgresStore) -> dict[str, str]:
    return {r["run_id"]: r["state"] for r in store.runs_by_id(None)}


def test_a_host_on_postgresql_runs_the_fleet_and_the_cli_and_console_act_on_it(
    ws: Path, pg_url: str
) -> None:
    # hang-1 says one thing, then waits for its cancel however long the rest takes (a run that
    # ends by itself may end before a busy machine gets to the console's key).
    write_config(ws, no_output_s=3600)
    with (ws / "jarvis.toml").open("a") as config:
        config.write(f'[store]\nurl = "{pg_url}"\n')
    store = open_store(pg_url)
    assert isinstance(store, PostgresStore)
    for run_id in ("ok-1", "ok-2"):
        dispatch(store, run_id)
    dispatch(store, "hang-1", scenario="hang")
    with running_host(ws, interval=STEERABLE_INTERVAL) as host:
        wait_until(
            lambda: (
                {k: v for k, v in states(store).items() if k.startswith("ok")}
                == {"ok-1": "review_requested", "ok-2": "review_requested"}
            ),
            HANG_GUARD_S,
            "the ok runs to reach review on PostgreSQL",
            host.log,
        )
        wait_until(lambda: states(store)["hang-1"] == "running", HANG_GUARD_S, "hang-1 running")
        # The command line finds the store through jarvis.toml, as the host did.
        code, listed = cli(ws, "runs")
        assert code == 0 and {r["run_id"] for r in listed["runs"]} == {"ok-1", "ok-2", "hang-1"}
        code, approved = cli(ws, "approve", "ok-1")
        assert code == 0, approved

        async def console() -> None:
            # The console reads the fleet from PostgreSQL and its keys act on it there.
            app = make_app(ws / "jarvis.db", store_at=pg_url)
            async with app.run_test(size=(120, 30)) as pilot:
                await settle(pilot)
                assert set(app.main.model.rows) == {"ok-1", "ok-2", "hang-1"}
                await select(pilot, "hang-1")
                await pilot.press("x")
                await wait_for(pilot, lambda: isinstance(app.screen, ReasonDialog))
                await pilot.press(*"not needed", "enter")
                await wait_for(pilot, lambda: states(store)["hang-1"] == "failed")

        asyncio.run(console())
    assert states(store) == {"ok-1": "done", "ok-2": "review_requested", "hang-1": "failed"}
    assert "not needed" in (store.get_run("hang-1") or {})["state_reason"]
    assert not (ws / "jarvis.db").exists()
    store.close()
