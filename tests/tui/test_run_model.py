"""The console's view over its runs: text, state and attention filters, sort, kept as rows change.

`RunModel.visible` keeps sorted order and each run's search text between calls, and narrows
the last text filter's matches when a letter is typed; whatever it keeps, it must show exactly
what filtering every row afresh shows.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jarvis_tui.run_model import RunModel, search_text

STATES = ("queued", "running", "review_requested", "failed", "done")
WORDS = ("lint", "tests", "build", "patch", "retry")


def _row(n: int, *, state: str = "running", summary: str = "", updated: int = 0) -> dict[str, Any]:
    return {
        "run_id": f"run-{n:03d}",
        "lane": f"jarvis-worker-{n % 3 + 1}",
        "task_type": "fix" if n % 2 else "docs",
        "state": state,
        "created_at": f"2026-11-22T00:{n // 60:02d}:{n % 60:02d}Z",
        "updated_at": f"2026-11-22T01:00:{updated:02d}Z",
        "last_progress_summary": summary,
        "state_reason": None,
        "retry_count": n % 4,
    }


def _expected(model: RunModel) -> list[str]:
    """The view computed the slow way: sort every row, then test each against the view."""
    order = sorted(model.rows, key=model.sort_key, reverse=model.reverse)
    return [run_id for run_id in order if model.shows(model.rows[run_id])]


def _ids(model: RunModel) -> list[str]:
    return [row["run_id"] for row in model.visible()]


def test_the_text_filter_matches_any_searched_field_in_any_case_in_sort_order() -> None:
    model = RunModel()
    model.load([_row(1, summary="Running LINT"), _row(2, state="failed"), _row(3)])
    model.view.text = "lint"
    assert _ids(model) == ["run-001"]
    model.view.text = "FAILED"  # the screen passes the text as typed; case does not matter
    model.view.text = model.view.text.strip()
    assert _ids(model) == ["run-002"]
    model.view.text = "worker-1"  # lane of run 3 (3 % 3 + 1)
    assert _ids(model) == ["run-003"]
    model.view.text = "run-00"
    assert _ids(model) == ["run-003", "run-002", "run-001"]  # newest first


def test_a_row_that_changes_between_two_keystrokes_is_judged_on_its_new_text() -> None:
    model = RunModel()
    model.load([_row(n, summary="idle") for n in range(5)])
    model.view.text = "b"
    assert _ids(model) == []
    # run-002 did not match "b", so narrowing "b" → "bu" alone would never look at it again.
    model.update([_row(2, summary="build started")])
    model.view.text = "bu"
    assert _ids(model) == ["run-002"]
    model.update([_row(2, summary="idle")])
    model.view.text = "bui"
    assert _ids(model) == []


def test_erasing_a_letter_widens_the_view_again() -> None:
    model = RunModel()
    model.load([_row(1, summary="tests"), _row(2, summary="test"), _row(3, summary="lint")])
    for text, expected in (("t", 3), ("te", 2), ("tes", 2), ("test", 2), ("tests", 1),
                           ("test", 2), ("te", 2), ("t", 3), ("", 3)):  # fmt: skip
        model.view.text = text
        assert len(_ids(model)) == expected, text
        assert _ids(model) == _expected(model), text


_steps = st.lists(
    st.one_of(
        st.tuples(st.just("type"), st.text(alphabet="eilnst-0", max_size=4)),
        st.tuples(
            st.just("update"),
            st.integers(0, 29),
            st.sampled_from(WORDS),
            st.sampled_from(STATES),
            st.integers(0, 59),
        ),
        st.tuples(st.just("add"), st.integers(30, 40)),
        st.tuples(st.just("sort"), st.sampled_from(["age", "updated", "state", "run", "retries"])),
        st.tuples(st.just("state"), st.sampled_from([None, *STATES])),
        st.tuples(st.just("attention"), st.booleans()),
    ),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(steps=_steps)
def test_what_the_view_keeps_between_calls_never_changes_what_it_shows(
    steps: list[tuple[Any, ...]],
) -> None:
    model = RunModel()
    model.load([_row(n, summary=WORDS[n % 5], state=STATES[n % 5]) for n in range(30)])
    assert _ids(model) == _expected(model)
    for step in steps:
        kind = step[0]
        if kind == "type":
            model.view.text = step[1].strip()
        elif kind == "update":
            _, n, word, state, updated = step
            model.update([_row(n, summary=word, state=state, updated=updated)])
        elif kind == "add":
            model.update([_row(step[1], summary="new")])
        elif kind == "sort":
            model.view.sort = step[1]
        elif kind == "state":
            model.view.state = step[1]
        else:
            model.view.attention = step[1]
        assert _ids(model) == _expected(model), step
        for row in model.visible():
            assert row is model.rows[row["run_id"]]  # the current row, never a stale copy
            assert search_text(row)
