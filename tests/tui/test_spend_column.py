"""The run table's spent column: what each run's agent reported, summed over its attempts.

It shows once any agent of the workspace has reported spending (as the header's "spent"),
where the width leaves the last progress its room: from 105 columns, never at 80.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ipc.payloads import Usage
from jarvis_tui.widgets.run_table import RunTable, RunTableHeader
from tests.tui.conftest import build_store
from tests.tui.helpers import console_on, settle, table, wait_for
from tests.tui.usage_store import build_usage_store, report_usage

#: Folded layout, the table across the whole width: room for the spend, not for lane too.
ROOMY = (110, 30)


@pytest.fixture
def usage_db(tmp_path: Path) -> Path:
    return build_usage_store(tmp_path / "jarvis.db")


def header_line(runs: RunTable) -> str:
    return runs.screen.query_one(RunTableHeader).render().plain


def drawn(runs: RunTable, run_id: str) -> str:
    """The line the table draws for ``run_id`` (it must be on screen)."""
    return runs.render_line(runs.run_ids.index(run_id) - runs.top).text


def spend_cell(runs: RunTable, run_id: str) -> str:
    return runs.get_cell(run_id, "spend").plain


async def test_each_run_shows_what_its_agent_spent_over_every_attempt(usage_db: Path) -> None:
    async with console_on(usage_db, "run-contract", size=ROOMY) as (app, pilot):
        runs = table(app)
        assert runs.selected_run_id == "run-contract"
        line, header = drawn(runs, "run-contract"), header_line(runs)
        figures = "12.3k · $0.04"  # two attempts: 12,345 tokens, $0.0399
        assert figures in line, line
        # The label stands over the figures, both flush right in the column.
        assert header.index("spent") + len("spent") == line.index(figures) + len(figures)
        assert "1.0k · $0.01" in drawn(runs, "run-running")
        assert "3.6k · $0.004" in drawn(runs, "run-review")  # under a cent, not "$0.00"
        assert spend_cell(runs, "run-queued") == ""  # its agent reported nothing
        assert "$" not in drawn(runs, "run-queued")
        # The lane gave way to it; the last progress kept its room.
        assert "lane" not in header and "last progress" in header
        assert "patched the handler" in drawn(runs, "run-running")


async def test_a_report_on_the_next_read_changes_only_that_runs_figure(usage_db: Path) -> None:
    async with console_on(usage_db, "run-running", size=ROOMY) as (app, pilot):
        runs = table(app)
        before = {run_id: runs.get_row(run_id) for run_id in runs.run_ids}
        # The agent's next cumulative figures for attempt 1, and a first report from another.
        report_usage(usage_db, "run-running", 1, 4, Usage(tokens_in=4_000, tokens_out=100,
                                                          cost_usd=0.5))  # fmt: skip
        report_usage(usage_db, "run-failed", 1, 1, Usage(tokens_in=20, cost_usd=0.001))
        await pilot.press("f5")
        await wait_for(pilot, lambda: spend_cell(runs, "run-running") == "4.1k · $0.50")
        assert spend_cell(runs, "run-failed") == "20 · $0.001"  # a tenth of a cent: not nothing
        assert "4.1k · $0.50" in drawn(runs, "run-running")
        for run_id in ("run-queued", "run-review", "run-contract", "run-done"):
            assert runs.get_row(run_id) is before[run_id]  # untouched runs keep their cells


async def test_at_80_columns_the_spend_gives_way_to_the_last_progress(usage_db: Path) -> None:
    async with console_on(usage_db, "run-running", size=(80, 24)) as (app, pilot):
        runs = table(app)
        assert spend_cell(runs, "run-running") == "1.0k · $0.01"  # read, not drawn
        header, line = header_line(runs), drawn(runs, "run-running")
        assert "spent" not in header and "$" not in line
        assert "last progress" in header and "patched the" in line
        await pilot.resize_terminal(*ROOMY)
        await wait_for(pilot, lambda: "spent" in header_line(runs))
        assert "1.0k · $0.01" in drawn(runs, "run-running")


async def test_no_spend_column_until_an_agent_reports_spending(tmp_path: Path) -> None:
    db = build_store(tmp_path / "jarvis.db")
    async with console_on(db, "run-running", size=ROOMY) as (app, pilot):
        runs = table(app)
        header = header_line(runs)
        assert "spent" not in header and "lane" in header  # the room is the lane's meanwhile
        assert "jarvis-worker-1" in drawn(runs, "run-running")
        report_usage(db, "run-running", 1, 3, Usage(tokens_in=1_500, cost_usd=0.02))
        await pilot.press("f5")
        await settle(pilot)
        await wait_for(pilot, lambda: "spent" in header_line(runs))
        assert "lane" not in header_line(runs)
        assert "1.5k · $0.02" in drawn(runs, "run-running")
        assert "jarvis-worker-1" not in drawn(runs, "run-running")


async def test_a_computed_cost_is_shown_as_computed(usage_db: Path) -> None:
    # Codex reports no cost: Jarvis priced its tokens, and the cell says the figure is its own.
    used = Usage(tokens_in=2_000, tokens_out=100, cost_usd=0.0035, cost_computed=True)
    report_usage(usage_db, "run-failed", 1, 1, used)
    async with console_on(usage_db, "run-failed", size=ROOMY) as (app, pilot):
        runs = table(app)
        assert spend_cell(runs, "run-failed") == "2.1k · ≈$0.004"  # under a cent, said so
        assert "≈" not in spend_cell(runs, "run-running")
