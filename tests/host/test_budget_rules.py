"""The budget rule as a function of figures: which running runs are over, and the sentence."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.host.budgets import (
    Spent,
    has_workspace_cap,
    needs_attempt_usage,
    over_budget,
    workspace_over,
)
from core.host.config import BudgetsConfig


def test_no_budget_stops_nothing_and_reads_no_figures() -> None:
    budgets = BudgetsConfig()
    assert not needs_attempt_usage(budgets) and not has_workspace_cap(budgets)
    assert over_budget(budgets, {"r1": 10_000.0}, {"r1": Spent(10**9, 10**6)}, Spent(10**9)) == {}


def test_a_run_is_over_only_strictly_past_its_cap_and_the_first_cap_crossed_says_why() -> None:
    budgets = BudgetsConfig(run_tokens=1000, run_cost_usd=1.0, run_wall_s=60)
    running = {"at": 60.0, "tokens": 1.0, "cost": 1.0, "wall": 61.0, "quiet": 0.0}
    used = {"at": Spent(1000, 1.0), "tokens": Spent(1001, 5.0), "cost": Spent(10, 1.01)}
    over = over_budget(budgets, running, used, None)
    assert set(over) == {"tokens", "cost", "wall"}
    assert over["tokens"] == "1,001 tokens used, over the run budget of 1,000"
    assert over["cost"] == "$1.0100 spent, over the run budget of $1"
    assert over["wall"] == "running for 61 s, over the run budget of 60 s"


def test_a_workspace_over_its_tokens_stops_every_running_run_but_keeps_a_runs_own_reason() -> None:
    budgets = BudgetsConfig(run_tokens=100, workspace_tokens=5000)
    used = {"big": Spent(101)}
    over = over_budget(budgets, {"big": 1.0, "small": 1.0}, used, Spent(5001))
    assert over["big"] == "101 tokens used, over the run budget of 100"
    assert over["small"] == "the workspace has used 5,001 tokens, over its budget of 5,000"
    assert over_budget(budgets, {"small": 1.0}, {}, Spent(5000)) == {}


def test_the_workspace_is_judged_on_tokens_or_cost_whichever_is_set() -> None:
    assert workspace_over(BudgetsConfig(workspace_cost_usd=2), Spent(10**9, 2.0)) is None
    assert workspace_over(BudgetsConfig(workspace_cost_usd=2), Spent(0, 2.5)) == (
        "the workspace has spent $2.5000, over its budget of $2"
    )
    assert needs_attempt_usage(BudgetsConfig(run_cost_usd=1))
    # A workspace cap on tokens reads each attempt too: one whose usage could not be read
    # crosses it. Only wall time needs no figures.
    assert needs_attempt_usage(BudgetsConfig(workspace_tokens=1, run_wall_s=5))
    assert not needs_attempt_usage(BudgetsConfig(workspace_wall_s=1, run_wall_s=5))
    assert has_workspace_cap(BudgetsConfig(workspace_wall_s=1))
    assert not has_workspace_cap(BudgetsConfig(run_tokens=1, run_wall_s=5))


def test_the_workspace_wall_time_is_the_workers_summed_seconds_strictly_past_the_cap() -> None:
    budgets = BudgetsConfig(workspace_wall_s=3600)
    assert workspace_over(budgets, Spent(10**9, 10**6, 3600.0)) is None
    assert workspace_over(budgets, Spent(0, 0, 3601.0)) == (
        "the workspace's workers have worked 3,601 s, over its budget of 3,600 s"
    )
    over = over_budget(budgets, {"a": 5.0, "b": 1.0}, {}, Spent(wall_s=4000))
    assert set(over) == {"a", "b"} and over["a"].endswith("over its budget of 3,600 s")


@pytest.mark.parametrize("key", ["run_wall_s", "workspace_tokens", "workspace_wall_s"])
def test_a_cap_of_zero_is_refused(key: str) -> None:
    with pytest.raises(ValidationError):
        BudgetsConfig.model_validate({key: 0})
