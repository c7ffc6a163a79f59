"""What retention did, as the command line tells it, on both backends: `jarvis show` sums what
was removed of a run; `jarvis journal` from below the horizon says history was cut;
`jarvis store stats` counts what the store holds and what a policy would remove."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.api import RunStore
from tests.backends import StepClock
from tests.cli.conftest import jarvis
from tests.core.store_helpers import make_run
from tests.store.test_retention import DAY_S, add_events, drain

LANE = "jarvis-worker-1"


@pytest.fixture
def ws(any_store: RunStore, clock: StepClock, tmp_path: Path) -> tuple[Path, str]:
    """A workspace whose store has a finished run ten days old (1,200 events), a live one as
    old, a finished one of today, and receipts old and new (one of a file still on disk)."""
    # The command line reads the store on the real clock: the old runs are eleven days old.
    clock.at = datetime.now(UTC) - timedelta(days=11)
    root = tmp_path / "ws"
    (root / "data" / "ipc" / LANE / "progress").mkdir(parents=True)
    make_run(any_store, "old-running", RunState.RUNNING)
    add_events(any_store, "old-running", 30)
    make_run(any_store, "old-done", RunState.DONE)
    add_events(any_store, "old-done", 1200)
    with any_store.transaction() as tx:
        for name in ("a", "b", "on-disk"):
            tx.put_receipt(f"{LANE}/progress/{name}.json:{'0' * 64}", LANE, "progress")
    (root / "data" / "ipc" / LANE / "progress" / "on-disk.json").write_text("{}")
    clock.advance(10 * DAY_S)
    make_run(any_store, "new-done", RunState.DONE)
    add_events(any_store, "new-done", 5)
    location = str(any_store.path) if any_store.path is not None else any_store.url  # type: ignore[attr-defined]
    return root, location


def cli(ws: tuple[Path, str], *args: str) -> str:
    result = jarvis(*args, "--workspace", ws[0], "--db", ws[1])
    assert result.code == 0, result.stderr
    return result.stdout


def test_show_says_what_retention_removed_of_a_run(
    any_store: RunStore, ws: tuple[Path, str]
) -> None:
    assert json.loads(cli(ws, "show", "old-done", "--json"))["run"]["retention"] is None
    row = any_store.get_run("old-done")
    drain(any_store, "progress", 7)
    drain(any_store, "journal", 7)
    run = json.loads(cli(ws, "show", "old-done", "--json"))["run"]
    removed = run["retention"]["progress_events"]
    assert removed["removed"] == 1200 and removed["keep_days"] == 7
    assert run["retention"]["journal_entries"]["removed"] > 0
    assert run["events"] == [] and any_store.get_run("old-done") == row  # the run row stays
    text = cli(ws, "show", "old-done")
    day = removed["until"][:10]
    assert f"1,200 progress events up to {day} removed by retention (keep 7 days)" in text
    assert json.loads(cli(ws, "show", "old-running", "--json"))["run"]["retention"] is None


def test_the_journal_from_below_the_horizon_says_history_was_cut(
    any_store: RunStore, ws: tuple[Path, str]
) -> None:
    drain(any_store, "journal", 7)
    horizon = any_store.journal_horizon()
    lines = [json.loads(line) for line in cli(ws, "journal", "--json").splitlines()]
    assert lines[0] == {"history_cut": {"since": 0, "horizon": horizon}}
    assert {e["run_id"] for e in lines[1:]} == {"old-running", "new-done"}
    result = jarvis("journal", "--workspace", ws[0], "--db", ws[1])
    assert f"before {horizon} may have been removed by retention" in result.stderr
    after = cli(ws, "journal", "--json", "--since", str(horizon - 1)).splitlines()
    assert after and all("history_cut" not in json.loads(line) for line in after)


def test_store_stats_counts_what_the_store_holds_and_what_a_policy_would_remove(
    any_store: RunStore, ws: tuple[Path, str]
) -> None:
    stats = json.loads(cli(ws, "store", "stats", "--json"))
    tables = stats["tables"]
    for name in ("runs", "progress_events", "journal", "ipc_receipts"):
        assert tables[name]["rows"] == any_store.row_count(name)
        assert tables[name]["bytes"] > 0
    assert tables["progress_events"]["rows"] == 1235
    assert stats["bytes_per_event"] == pytest.approx(
        sum(
            tables[t]["bytes"] / tables[t]["rows"]
            for t in ("progress_events", "journal", "ipc_receipts")
        ),
        abs=0.2,
    )
    assert stats["policy"] == {
        "keep_days": {"progress": None, "journal": None, "receipts": None}, "from": "jarvis.toml"
    }  # fmt: skip
    assert stats["would_remove"] == {"progress_events": None, "journal": None, "ipc_receipts": None}
    old_journal = any_store.row_count("journal") - len(
        any_store.rows("SELECT seq FROM journal WHERE run_id != 'old-done'")
    )
    preview = json.loads(cli(ws, "store", "stats", "--json", "--keep-days", "7"))
    assert preview["policy"]["from"] == "--keep-days"
    # The old finished run's events and entries; the receipts whose file is gone.
    assert preview["would_remove"] == {
        "progress_events": 1200, "journal": old_journal, "ipc_receipts": 2
    }  # fmt: skip
    (ws[0] / "jarvis.toml").write_text("[store]\nkeep_days = 30\nprogress_keep_days = 7\n")
    configured = json.loads(cli(ws, "store", "stats", "--json"))
    assert configured["policy"]["keep_days"] == {"progress": 7, "journal": 30, "receipts": 30}
    assert configured["would_remove"] == {"progress_events": 1200, "journal": 0, "ipc_receipts": 0}
    drain(any_store, "progress", 7)
    after = json.loads(cli(ws, "store", "stats", "--json"))
    assert after["tables"]["progress_events"]["rows"] == 35
    assert after["would_remove"]["progress_events"] == 0
    text = cli(ws, "store", "stats")
    assert "policy (jarvis.toml): progress 7 days, journal 30 days, receipts 30 days" in text
    assert "an event:" in text


@pytest.mark.parametrize("value", ["-1", "36501", "two"])
def test_a_bad_keep_days_is_a_usage_error(ws: tuple[Path, str], value: str) -> None:
    result = jarvis("store", "stats", "--keep-days", value, "--json", "--workspace", ws[0],
                    "--db", ws[1])  # fmt: skip
    assert result.code == 2 and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "usage"


def test_a_bad_policy_is_a_sentence_not_a_traceback(ws: tuple[Path, str]) -> None:
    (ws[0] / "jarvis.toml").write_text("[store]\nkeep_days = -3\n")
    result = jarvis("store", "stats", "--json", "--workspace", ws[0], "--db", ws[1])
    assert result.code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "config_unusable" and "store.keep_days" in error["message"]
