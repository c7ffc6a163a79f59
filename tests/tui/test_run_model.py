"""The console's window (`RunModel`): a page taken whole, pages added at either end with the
far end trimmed to the bound, where the window's start moves, the runs kept beside it, and the
runs last seen needing a human."""

from __future__ import annotations

from typing import Any

from core.service.window import WindowRows
from jarvis_tui.run_model import MOST, RunModel, View


def page(first: int, count: int, *, total: int = 10_000, before: bool, after: bool) -> WindowRows:
    rows: list[dict[str, Any]] = [
        {"run_id": f"r{n:05d}", "state": "failed" if n % 7 == 0 else "done"}
        for n in range(first, first + count)
    ]
    return WindowRows(
        rows=rows,
        marks=[(str(n), f"r{n:05d}") for n in range(first, first + count)],
        more_before=before,
        more_after=after,
        offset=first,
        anchor=(str(first - 1), f"r{first - 1:05d}") if first else None,
        total=total,
        attention=3,
    )


def test_a_page_taken_is_the_window_and_the_ask_reads_it_again_from_its_anchor() -> None:
    model = RunModel()
    model.take(page(200, 100, before=True, after=True))
    assert model.order[0] == "r00200" and len(model.order) == 100
    assert (model.offset, model.total, model.attention_count()) == (200, 10_000, 3)
    ask = model.ask(keep=["r09999"])
    assert ask.anchor == ("199", "r00199") and ask.offset == 200 and ask.size == 100
    assert ask.keep == ("r09999",) and "r00250" in ask.loaded


def test_pages_added_after_trim_the_start_and_say_how_far_it_moved() -> None:
    model = RunModel()
    model.take(page(0, 100, before=False, after=True))
    shifts = []
    for first in range(100, 700, 100):
        shifts.append(model.extend(page(first, 100, before=True, after=True), after=True))
        assert len(model.order) <= MOST and len(model.rows) <= MOST
    assert shifts == [0, 0, 0, -100, -100, -100]
    assert model.order[0] == "r00300" and model.offset == 300
    assert model.anchor == ("299", "r00299") and model.more_before
    # And back up: a page before, the far end trimmed, the start moved down by the page.
    assert model.extend(page(200, 100, before=True, after=True), after=False) == 100
    assert model.order[0] == "r00200" and model.order[-1] == "r00599" and model.more_after


def test_the_run_on_show_is_kept_when_its_page_is_trimmed() -> None:
    model = RunModel()
    model.take(page(0, 100, before=False, after=True))
    for first in range(100, 500, 100):
        model.extend(page(first, 100, before=True, after=True), after=True, keep="r00005")
    assert not model.shows("r00005") and "r00005" in model.rows
    assert "r00006" not in model.rows


def test_a_row_seen_again_twice_is_not_added_twice() -> None:
    model = RunModel()
    model.take(page(0, 100, before=False, after=True))
    model.extend(page(90, 20, before=True, after=True), after=True)
    assert model.order == [f"r{n:05d}" for n in range(110)]
    assert len(model.marks) == len(model.order)


def test_needing_a_human_is_what_the_runs_were_last_seen_doing() -> None:
    model = RunModel()
    model.take(page(0, 10, before=False, after=False))
    assert model.needs_human("r00007") and not model.needs_human("r00001")
    model.update([{"run_id": "r00007", "state": "done"}])
    assert not model.needs_human("r00007")
    model.moved("r99999", True)  # outside the window: the journal said so
    assert model.needs_human("r99999")


def test_a_change_of_view_makes_older_reads_worthless() -> None:
    model = RunModel()
    before = model.ask()
    model.view = View(text="retry")
    model.changed_view()
    after = model.ask()
    assert after.generation == before.generation + 1 and model.view_pending
    assert after.view.text == "retry" and before.view.text == ""
