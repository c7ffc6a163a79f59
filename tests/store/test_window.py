"""The window on the runs (`core.store.window`): every order the console offers, each state
filter, the runs needing a human and a text, on both backends, read a page at a time forwards
and backwards, are exactly what sorting and filtering every run in Python gives; counts and
ranks agree; a text's walk stops at its bound and resumes where it stopped."""

from __future__ import annotations

import random
from typing import Any

import pytest

from core.lifecycle import RunState
from core.run_views import SUMMARY_FIELDS, attention_stages, needs_attention
from core.store.api import RunStore
from core.store.window import SEARCHED, SORT_KEYS, Mark, Page, View
from tests.core.store_helpers import make_run

RUNS = 90
PAGE = 7
LANES = ["jarvis-worker-1", "jarvis-worker-2", "Alpha-lane"]
TASKS = ["fix", "feature", "Docs", None]
#: Stamps drawn from a few values, so that many runs tie and run_id must break the ties.
STAMPS = [f"2026-11-0{d}T10:00:00.000Z" for d in range(1, 6)]
SUMMARIES = ["Reading the TASK", "running tests: 3 passed", "editing src/retry.py", None]
STAGES: list[tuple[str, str | None, str | None]] = [
    ("queued", None, None),
    ("running", None, None),
    ("running", "verifying", None),
    ("running", "awaiting_approval", None),
    ("review_requested", None, None),
    ("review_requested", None, "merging"),
    ("failed_contract", None, None),
    ("failed", None, None),
    ("done", None, None),
]


def _fleet(store: RunStore) -> list[dict[str, Any]]:
    """RUNS runs with random keys, stages and texts, some running ones with an expired steer;
    every run's row as the Python reference sees it."""
    rng = random.Random(23)
    for n in range(RUNS):
        make_run(store, f"run-{rng.randrange(10_000):04}-{n:02}", RunState.QUEUED)
    with store.transaction() as tx:
        for row in tx.rows("SELECT run_id FROM runs"):
            state, verification, merge = rng.choice(STAGES)
            tx.execute(
                "UPDATE runs SET lane = ?, task_type = ?, created_at = ?, updated_at = ?, "
                "retry_count = ?, state = ?, verification_state = ?, merge_state = ?, "
                "last_progress_summary = ?, state_reason = ? WHERE run_id = ?",
                [rng.choice(LANES), rng.choice(TASKS), rng.choice(STAMPS), rng.choice(STAMPS),
                 rng.randrange(3), state, verification, merge, rng.choice(SUMMARIES),
                 rng.choice([None, "the worker exited with status 1"]), row["run_id"]],
            )  # fmt: skip
            if state == "running" and rng.random() < 0.4:
                tx.execute(
                    "INSERT INTO steering_events (steer_id, run_id, message, operator, status, "
                    "created_at) VALUES (?, ?, 'hi', 'op', ?, ?)",
                    [f"s-{row['run_id']}", row["run_id"], rng.choice(["expired", "acked"]),
                     STAMPS[0]],
                )  # fmt: skip
    rows = store.runs_by_id(None, SUMMARY_FIELDS)
    steers = {r["run_id"]: {r["status"]: 1} for r in store.steer_counts(None)}
    for row in rows:
        row["steers"] = steers.get(row["run_id"], {})
    return rows


def _key(view: View, row: dict[str, Any]) -> Any:
    if view.attention is not None:
        return row["updated_at"]
    value = row[{"age": "created_at", "updated": "updated_at", "state": "state",
                 "run": "run_id", "lane": "lane", "task": "task_type",
                 "retries": "retry_count"}[view.sort]]  # fmt: skip
    return "" if value is None else value


def _expected(view: View, rows: list[dict[str, Any]]) -> list[str]:
    """The view by sorting and filtering every run in Python: what the store must give."""

    def shown(row: dict[str, Any]) -> bool:
        if view.state is not None and row["state"] != view.state:
            return False
        if view.attention is not None and not needs_attention(row):
            return False
        search = "\n".join(str(row.get(c) or "") for c in SEARCHED).lower()
        return view.text.lower() in search

    kept = [row for row in rows if shown(row)]
    kept.sort(key=lambda r: (_key(view, r), r["run_id"]), reverse=view.down)
    return [row["run_id"] for row in kept]


def _forwards(store: RunStore, view: View, **kwargs: Any) -> list[str]:
    seen: list[str] = []
    after: Mark | None = None
    for _ in range(RUNS + 1):
        page = store.window(view, ["state"], after=after, limit=PAGE, **kwargs)
        assert len(page.rows) <= PAGE and len(page.marks) == len(page.rows)
        seen += [row["run_id"] for row in page.rows]
        if not page.more:
            return seen
        after = page.resume
    raise AssertionError("the pages never ended")


def _backwards(store: RunStore, view: View, end: Mark | None) -> list[str]:
    seen: list[str] = []
    before = end
    for _ in range(RUNS + 1):
        if before is None:
            return seen
        page = store.window(view, ["state"], before=before, limit=PAGE)
        seen = [row["run_id"] for row in page.rows] + seen
        if not page.more:
            return seen
        before = page.resume
    raise AssertionError("the pages never ended")


def _views() -> list[View]:
    views = [View(sort=sort, descending=down) for sort in SORT_KEYS for down in (True, False)]
    views += [View(sort="age", state=state) for state in {s for s, _v, _m in STAGES}]
    views += [View(sort="lane", descending=False, state="running")]
    views += [View(attention=attention_stages()), View(attention=attention_stages(), text="tASK")]
    views += [View(attention=attention_stages(), state="running")]
    views += [View(sort="updated", text=text) for text in ("run-", "TESTS", "alpha", "zzz", "")]
    views += [View(sort="task", descending=False, state="failed", text="status 1")]
    return views


@pytest.fixture
def fleet(any_store: RunStore) -> list[dict[str, Any]]:
    return _fleet(any_store)


def test_every_view_read_a_page_at_a_time_is_the_runs_sorted_and_filtered(
    any_store: RunStore, fleet: list[dict[str, Any]]
) -> None:
    counts = any_store.state_counts()
    assert sum(counts.values()) == RUNS
    for view in _views():
        expected = _expected(view, fleet)
        assert _forwards(any_store, view, counts=counts) == expected, view
        # From the end of the view back to its start, a page at a time.
        last = _last_mark(any_store, view)
        assert _backwards(any_store, view, last) == expected[:-1], view
        end = any_store.window(view, [], from_end=True, limit=PAGE)
        assert [row["run_id"] for row in end.rows] == expected[-PAGE:], view
        assert end.more == (len(expected) > PAGE)
        assert any_store.window_count(view, cap=10_000, counts=counts) == (len(expected), True)


def _last_mark(store: RunStore, view: View) -> Mark | None:
    """The mark of the view's last run (reading backwards before it gives all the others)."""
    page: Page | None = None
    after: Mark | None = None
    while True:
        page = store.window(view, [], after=after, limit=PAGE)
        if not page.more:
            return page.marks[-1] if page.marks else after
        after = page.resume


def test_a_common_state_is_read_through_the_orders_index_and_gives_the_same_rows(
    any_store: RunStore, fleet: list[dict[str, Any]]
) -> None:
    # Counts saying every state is common: SQLite walks the order's index and skips others.
    common = {state: 10**9 for state, _v, _m in STAGES}
    for state in ("running", "done"):
        view = View(sort="lane", state=state)
        assert _forwards(any_store, view, counts=common) == _expected(view, fleet)


def test_ranks_say_where_each_run_stands_in_its_view(
    any_store: RunStore, fleet: list[dict[str, Any]]
) -> None:
    for view in _views()[::3]:
        expected = _expected(view, fleet)
        for row in fleet[::9]:
            run_id = row["run_id"]
            rank = expected.index(run_id) if run_id in expected else None
            assert any_store.window_rank(view, run_id) == rank, (view, run_id)
    assert any_store.window_rank(View(), "no-such-run") is None


def test_a_texts_walk_stops_at_its_bound_and_resumes_where_it_stopped(
    any_store: RunStore, fleet: list[dict[str, Any]]
) -> None:
    view = View(sort="run", descending=False, text="alpha")
    expected = _expected(view, fleet)
    assert 0 < len(expected) < RUNS
    first = any_store.window(view, [], limit=PAGE, scan_limit=5)
    # Five runs walked: the page holds those of them that match, and says it stopped.
    walked = sorted(row["run_id"] for row in fleet)[:5]
    assert [row["run_id"] for row in first.rows] == [r for r in walked if r in expected]
    assert first.walked_out and first.more and first.resume == (walked[-1], walked[-1])
    # Resumed from there, page by page, it finds every match once, in order.
    assert _forwards(any_store, view, scan_limit=5) == expected


def test_counting_a_text_stops_at_its_cap(any_store: RunStore, fleet: list[dict[str, Any]]) -> None:
    view = View(text="run-")
    assert len(_expected(view, fleet)) == RUNS
    assert any_store.window_count(view, cap=10, counts={}) == (10, False)
    many = View(attention=attention_stages())
    total = len(_expected(many, fleet))
    # A whole state's runs needing a human are the kept counts; the others are counted.
    counts = any_store.state_counts()
    assert any_store.window_count(many, cap=10_000, counts=counts) == (total, True)
    assert any_store.window_count(many, cap=2, counts=counts) == (2, False)


def test_an_unknown_order_or_column_is_refused(any_store: RunStore) -> None:
    with pytest.raises(ValueError, match="no order 'colour'"):
        View(sort="colour")
    with pytest.raises(ValueError, match="not a column"):
        any_store.window(View(), ["state FROM runs; --"], limit=1)
    with pytest.raises(ValueError, match="after a mark, before one or from the end"):
        any_store.window(View(), [], after=("a", "b"), before=("a", "b"), limit=1)


def test_run_ids_from_a_prefix_are_those_ids_in_order_a_few_at_most(
    any_store: RunStore, fleet: list[dict[str, Any]]
) -> None:
    from core.service.window import run_ids_from

    ids = sorted(str(row["run_id"]) for row in fleet)
    whole = ids[5]
    for prefix in ("run-", "run-0", "run-5", whole[:7], whole, "run-x", "nope"):
        wanted = [run_id for run_id in ids if run_id.startswith(prefix)][:4]
        found = run_ids_from(any_store, prefix, limit=4)
        assert [row["run_id"] for row in found] == wanted, prefix
        states = {str(row["run_id"]): row["state"] for row in fleet}
        assert all(row["state"] == states[row["run_id"]] for row in found)
    assert run_ids_from(any_store, "", limit=4) == []
