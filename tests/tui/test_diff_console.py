"""The console's diff (``d``): keys, then what the screen holds. Real repositories, real git."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from jarvis_tui.modals.diff_screen import DiffScreen
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.widgets.diff_view import MAX_PAGES, PAGE_LINES, DiffView
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.gate_panel import GatePanel
from tests.diffrepo import FAKE_KEY
from tests.tui.diff_store import UNCLAIMED, build_diff_store
from tests.tui.helpers import RecordingApp, console_on, settle, wait_for


@pytest.fixture
def diff_db(tmp_path: Path) -> Path:
    return build_diff_store(tmp_path / "jarvis.db")


def screen_of(app: RecordingApp) -> DiffScreen:
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    return screen


async def open_diff(pilot: Pilot[Any]) -> DiffScreen:
    """Press ``d`` and wait until the diff is open and its lines counted."""
    app = pilot.app
    await pilot.press("d")
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, DiffScreen)
            and app.screen.opening is not None
            and (app.screen.index is not None or app.screen.opening.source is None)
        ),
    )
    await pages_read(pilot)
    return screen_of(pilot.app)  # type: ignore[arg-type]


async def pages_read(pilot: Pilot[Any]) -> None:
    """Wait until every page the view asked for has arrived and is drawn."""
    screen = pilot.app.screen
    assert isinstance(screen, DiffScreen)
    await pilot.pause()
    await wait_for(pilot, lambda: not screen.diff_view.wanted)
    await settle(pilot)


def status(screen: DiffScreen) -> str:
    return str(screen.query_one("#diff-status").render())


def on_screen(view: DiffView) -> list[str]:
    """The rows the view draws now, as text (the scroll bar's column left out)."""
    rows = []
    for y in range(view.size.height):
        strip = view.render_line(y)
        rows.append("".join(segment.text for segment in strip)[:-1].rstrip())
    return rows


async def test_d_opens_the_runs_files_then_its_patch_and_escape_closes(diff_db: Path) -> None:
    async with console_on(diff_db, "run-review", size=(100, 30)) as (app, pilot):
        screen = await open_diff(pilot)
        assert screen.run_id == "run-review"
        rows = on_screen(screen.diff_view)
        assert rows[0] == "4 files changed  +68 -2"
        assert rows[1].split() == ["A", "+60", "-0", "docs/long.md"]
        assert rows[4].split() == ["M", "+2", "-2", "src/app.py"]
        assert rows[6] == "diff --git a/docs/long.md b/docs/long.md"
        title = str(screen.query_one("#diff-title").render())
        assert title.startswith("Diff of run run-review  attempt 1 · ")
        assert screen.index is not None and screen.diff_view.total == screen.index.lines
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_a_run_without_a_diff_says_why_in_one_sentence(diff_db: Path) -> None:
    async with console_on(diff_db, "run-running", size=(80, 24)) as (app, pilot):
        screen = await open_diff(pilot)
        rows = on_screen(screen.diff_view)
        said = " ".join(row for row in rows if row)  # wrapped to the width, one sentence
        assert said == (
            "Run run-running has no checked commit yet: a diff is shown once a completion of "
            "it has been checked against git."
        )
        assert not screen.diff_view.patch
        await pilot.press("slash", "n", "f")  # nothing to search or go to: no harm
        assert screen.is_current
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_worker_text_in_the_diff_is_shown_inert_and_masked(diff_db: Path) -> None:
    async with console_on(diff_db, "run-review", size=(160, 48)) as (app, pilot):
        screen = await open_diff(pilot)
        await pilot.press("slash", *"pwned", "enter")
        await wait_for(pilot, lambda: bool(screen.matches))
        await pages_read(pilot)
        text = "\n".join(on_screen(screen.diff_view))
        assert "\x1b" not in text and "\x07" not in text
        assert "+\\x1b]0;pwned\\x07\\x1b[2J\\x1b]8;;http://evil.test" in text
        assert "[bold]x[/]" in text  # markup shown as typed, never read as styling
        assert FAKE_KEY not in text and "+key = 'sk-a****'" in text
        assert "+       indented by a tab" in text  # the tab as a terminal would lay it out


async def test_a_large_diff_is_read_a_page_at_a_time_as_it_scrolls(tmp_path: Path) -> None:
    db = build_diff_store(tmp_path / "jarvis.db", long_lines=3000)
    async with console_on(db, "run-review", size=(80, 24)) as (app, pilot):
        screen = await open_diff(pilot)
        view = screen.diff_view
        assert screen.index is not None and screen.index.lines > 3000
        assert list(view.pages) == [0] and view.pages_read == 1  # the opening's page only
        await pilot.press("pagedown", "pagedown")
        await pages_read(pilot)
        assert list(view.pages) == [0] and view.top == 2 * (view.size.height - 1)
        await pilot.press("end")
        await pages_read(pilot)
        last = (screen.index.lines - 1) // PAGE_LINES
        # The end's pages were read, and none of the fifteen between.
        assert set(view.pages) <= {0, last - 1, last} and last in view.pages
        assert view.pages_read <= 3
        assert on_screen(view)[-1] == "+    return VALUE + 1"  # the patch's last line
        await pilot.press("home")
        await pilot.pause()
        assert view.top == 0 and on_screen(view)[0] == "4 files changed  +3,008 -2"


async def test_a_row_whose_page_is_not_read_yet_says_loading(tmp_path: Path) -> None:
    db = build_diff_store(tmp_path / "jarvis.db", long_lines=3000)
    async with console_on(db, "run-review", size=(80, 24)) as (app, pilot):
        screen = await open_diff(pilot)
        view = screen.diff_view
        view.read_page = None  # nothing answers: what is drawn meanwhile
        await pilot.press("end")
        await pilot.pause()
        assert "loading…" in on_screen(view)


def test_the_view_keeps_a_bounded_number_of_pages() -> None:
    view = DiffView()
    view.start_patch()
    for page in range(MAX_PAGES + 10):
        view.add_page(page, [f"+{page}"] * PAGE_LINES, True)
    assert len(view.pages) == MAX_PAGES
    assert min(view.pages) == 10  # the least recently drawn went first
    assert view.known_end == (MAX_PAGES + 10) * PAGE_LINES and view.more


async def test_slash_searches_n_and_shift_n_go_between_matches_escape_closes(
    diff_db: Path,
) -> None:
    async with console_on(diff_db, "run-review", size=(100, 30)) as (app, pilot):
        screen = await open_diff(pilot)
        view = screen.diff_view
        await pilot.press("slash")
        assert screen.has_class("-searching")
        assert isinstance(screen.focused, FilterLine), screen.focused
        await pilot.press(*"OF THE long FILE", "enter")  # its n is text, not a key
        await wait_for(pilot, lambda: bool(screen.matches))
        assert not screen.has_class("-searching")
        assert screen.focused is view  # type: ignore[comparison-overlap]  # it moved on enter
        assert len(screen.matches) == 60 and screen.match == 0
        first = screen.matches[0]
        assert view.current == first and view.top <= first < view.top + view.size.height
        await pages_read(pilot)
        assert "match 1 of 60 for OF THE long FILE" in status(screen)
        await pilot.press("n", "n")
        assert screen.match == 2 and view.current == screen.matches[2]
        await pilot.press("N")
        assert screen.match == 1
        await pilot.press("N", "N")
        assert screen.match == 59  # around the start to the last
        await pages_read(pilot)
        assert on_screen(view)[view.current - view.top] == "+line 60 of the long file"
        # Escape closes an open search first, then the diff.
        await pilot.press("slash", "x", "escape")
        assert not screen.has_class("-searching") and screen.is_current
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_a_search_with_no_match_says_so(diff_db: Path) -> None:
    async with console_on(diff_db, "run-review", size=(100, 30)) as (app, pilot):
        screen = await open_diff(pilot)
        await pilot.press("slash", *"no such text", "enter")
        await wait_for(pilot, lambda: screen.search is not None)
        assert screen.matches == []
        assert "no match for no such text" in status(screen)
        # A secret's value finds nothing: only what is shown is searched.
        await pilot.press("slash", *FAKE_KEY[:24], "enter")
        await wait_for(
            pilot, lambda: screen.search is not None and screen.search.needle == FAKE_KEY[:24]
        )
        assert screen.matches == []


async def test_f_goes_to_the_first_hunk_of_the_file_a_finding_names(diff_db: Path) -> None:
    async with console_on(diff_db, "run-contract", size=(100, 30)) as (app, pilot):
        screen = await open_diff(pilot)
        assert screen.opening is not None and screen.opening.findings == [UNCLAIMED]
        assert any("⚠ finding" in row and UNCLAIMED in row for row in on_screen(screen.diff_view))
        await pilot.press("f")
        await pages_read(pilot)
        view = screen.diff_view
        assert view.current is not None
        rows = on_screen(view)
        assert rows[view.current - view.top] == "@@ -0,0 +1,3 @@"
        assert f"diff --git a/{UNCLAIMED} b/{UNCLAIMED}" in rows[: view.current - view.top]
        assert f"finding 1 of 1: {UNCLAIMED}" in status(screen)


async def test_f_on_a_run_with_no_finding_says_so(diff_db: Path) -> None:
    async with console_on(diff_db, "run-review", size=(100, 30)) as (app, pilot):
        screen = await open_diff(pilot)
        await pilot.press("f")
        assert screen.diff_view.current is None
        assert "no finding of this run's gates names a file in its diff" in status(screen)


async def test_the_palette_and_the_gate_panel_offer_the_diff(diff_db: Path) -> None:
    async with console_on(diff_db, "run-review", size=(160, 48)) as (app, pilot):
        panel = app.main.query_one(GatePanel).text.plain
        assert "d diff 4 files +68 -2" in panel
        app.main.action_diff()
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("escape")
