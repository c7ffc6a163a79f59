"""A run table's rows are read with the summary's columns only: a run's dispatch (its JSON may
be megabytes) is never read for a table, on either backend; asked for a name that is not a plain
column, the store refuses rather than write it into a statement."""

from __future__ import annotations

import json

import pytest

from core.lifecycle import RunState
from core.run_views import SUMMARY_FIELDS, table_rows
from core.store.api import RunStore
from tests.core.store_helpers import make_run

BIG = "x" * 200_000


def test_a_table_row_never_carries_the_dispatch(any_store: RunStore) -> None:
    make_run(any_store, "r1", RunState.RUNNING, input=f"Fix it. {BIG}")
    (whole,) = any_store.runs_by_id(["r1"])
    assert BIG in whole["dispatch_json"]  # the run has it
    (summary,) = any_store.runs_by_id(["r1"], SUMMARY_FIELDS)
    assert set(summary) == set(SUMMARY_FIELDS)
    (first,) = any_store.runs_by_id(None, SUMMARY_FIELDS)
    assert first == summary
    (row,) = table_rows(any_store)
    assert "dispatch_json" not in row and BIG not in json.dumps(row)
    assert (row["run_id"], row["state"]) == ("r1", "running")


@pytest.mark.parametrize("column", ["state; DROP TABLE runs", "count(*)", "", "Run_Id"])
def test_a_column_that_is_not_a_plain_name_is_refused(any_store: RunStore, column: str) -> None:
    make_run(any_store, "r1", RunState.QUEUED)
    with pytest.raises(ValueError):
        any_store.runs_by_id(None, ["run_id", column])
    assert [r["run_id"] for r in any_store.runs_by_id(None)] == ["r1"]
