"""What the console shows fits the terminal it is given, from 60×20 to 160×48 and beyond: the
key bar keeps help and quit, the header keeps the attention count and every state's count, the
run table keeps room for the last progress, and the header's read time keeps moving."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.text import Text

from core.lifecycle import RunState
from jarvis_tui.state_look import STATE_LOOK
from jarvis_tui.widgets.key_bar import KeyBar
from jarvis_tui.widgets.run_table import RunTableHeader
from jarvis_tui.widgets.status_header import StatusHeader
from tests.tui.conftest import ticking_clock
from tests.tui.helpers import RecordingApp, console_on, settle, table, wait_for

SIZES = [(60, 20), (80, 24), (100, 30), (160, 48), (240, 60)]


def lines_of(rendered: object) -> list[str]:
    """The lines of what a widget rendered (a Rich `Text` or Textual `Content`)."""
    plain = getattr(rendered, "plain", None)
    assert isinstance(plain, str), rendered
    return plain.split("\n")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_key_bar_keeps_help_and_quit(store_db: Path, size: tuple[int, int]) -> None:
    async with console_on(store_db, "run-failed", size=size) as (app, pilot):
        bar = app.main.query_one(KeyBar)
        line = bar.render()
        assert isinstance(line, Text)
        assert line.cell_len <= size[0]
        assert "? Help" in line.plain and "q Quit" in line.plain, line.plain
        assert " r Retry " in line.plain  # the run's own keys come first
        # Every key shown is whole: no label is cut at the edge.
        for description, _enabled in bar.keys.values():
            assert f" {description} " in line.plain + " "


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_header_keeps_the_attention_count_and_every_state(
    store_db: Path, size: tuple[int, int]
) -> None:
    async with console_on(store_db, "run-failed", size=size) as (app, pilot):
        header = app.main.query_one(StatusHeader)
        first, second = lines_of(header.render())  # two lines: neither wrapped into the next
        width = header.size.width
        assert cell_len(first) <= width and cell_len(second) <= width, (first, second)
        assert first.startswith("jarvis ") and "no host" in first
        assert second.startswith("! 4 need a human")
        for state in RunState:
            symbol = STATE_LOOK[state.value][0]
            assert f"{symbol} " in second, (state, second)
        assert second.count(" 1") >= len(RunState)  # one run in each state


@pytest.mark.parametrize("size", [(160, 48), (240, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_run_table_leaves_room_for_the_last_progress(
    store_db: Path, size: tuple[int, int]
) -> None:
    async with console_on(store_db, "run-running", size=size) as (app, pilot):
        runs = table(app)
        drawn = [runs.render_line(y).text for y in range(runs.row_count)]
        line = next(text for text in drawn if text.startswith("run-running"))
        assert "patched the handler" in line, line
        (header,) = lines_of(app.main.query_one(RunTableHeader).render())
        assert "last progress" in header and cell_len(header) <= runs.size.width


async def test_the_run_table_fits_80_columns_with_its_deciding_columns(store_db: Path) -> None:
    async with console_on(store_db, "run-running", size=(80, 24)) as (app, pilot):
        runs = table(app)
        line = runs.render_line(runs.cursor_row - runs.top).text
        assert line.startswith("run-running") and "▶ running" in line and "✓1 ⊗1" in line
        assert len(line) == runs.size.width


async def test_the_read_time_moves_on_an_idle_workspace(store_db: Path) -> None:
    moments: Iterator[datetime] = ticking_clock()  # a second later at every call
    app = RecordingApp(
        store_db, live=True, clock=lambda: next(moments), operator="test", poll_interval=0.05
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        header = app.main.query_one(StatusHeader)

        def read_at() -> str:
            return lines_of(header.render())[0].rpartition("read ")[2]

        first = read_at()
        assert first
        await wait_for(pilot, lambda: read_at() != first)  # nothing in the store changed
        second = read_at()
        await wait_for(pilot, lambda: read_at() != second)
