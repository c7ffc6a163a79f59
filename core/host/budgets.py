"""Which running runs have crossed a budget (`[budgets]` in jarvis.toml), and why.

Kept apart from the host's loop so the rule is one function of figures: what each attempt
has used so far (as its agent reports it), how long each has run, and the workspace's totals.
The host interrupts what this names, and the reason becomes the run's failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.host.config import BudgetsConfig


@dataclass(frozen=True)
class Spent:
    """What one attempt, or the whole workspace, has used."""

    tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    """Seconds worked (the workspace's: every attempt's, summed)."""
    unreadable: str | None = None
    """Why some report of the attempt's usage could not be read: its figures are unknown."""


def _figure_cap(budgets: BudgetsConfig) -> str | None:
    """The first budget on tokens or cost, in words (None: there is none)."""
    if budgets.run_tokens is not None:
        return f"the run budget of {budgets.run_tokens:,} tokens"
    if budgets.run_cost_usd is not None:
        return f"the run budget of ${budgets.run_cost_usd:g}"
    if budgets.workspace_tokens is not None:
        return f"the workspace budget of {budgets.workspace_tokens:,} tokens"
    if budgets.workspace_cost_usd is not None:
        return f"the workspace budget of ${budgets.workspace_cost_usd:g}"
    return None


def needs_attempt_usage(budgets: BudgetsConfig) -> bool:
    """Whether any budget is about tokens or cost (so each attempt's figures are read: a run
    whose usage could not be read crosses any of them)."""
    return _figure_cap(budgets) is not None


def has_workspace_cap(budgets: BudgetsConfig) -> bool:
    """Whether any budget is the workspace's (so its totals must be read)."""
    caps = (budgets.workspace_tokens, budgets.workspace_cost_usd, budgets.workspace_wall_s)
    return any(cap is not None for cap in caps)


def workspace_over(budgets: BudgetsConfig, total: Spent) -> str | None:
    """The sentence saying the workspace is past its budget, else None."""
    if budgets.workspace_tokens is not None and total.tokens > budgets.workspace_tokens:
        return (
            f"the workspace has used {total.tokens:,} tokens, over its budget of "
            f"{budgets.workspace_tokens:,}"
        )
    if budgets.workspace_cost_usd is not None and total.cost_usd > budgets.workspace_cost_usd:
        return (
            f"the workspace has spent ${total.cost_usd:.4f}, over its budget of "
            f"${budgets.workspace_cost_usd:g}"
        )
    if budgets.workspace_wall_s is not None and total.wall_s > budgets.workspace_wall_s:
        return (
            f"the workspace's workers have worked {total.wall_s:,.0f} s, over its budget of "
            f"{budgets.workspace_wall_s:,g} s"
        )
    return None


def over_budget(
    budgets: BudgetsConfig,
    running_s: Mapping[str, float],
    attempts: Mapping[str, Spent],
    total: Spent | None,
) -> dict[str, str]:
    """Running runs past a budget, each with the sentence that says which.

    Args:
        budgets: the workspace's `[budgets]`.
        running_s: every running run's attempt, by run id, with how long it has run.
        attempts: what each attempt has used, for those whose agent reported anything.
        total: the workspace's totals, or None when no budget needs them.
    """
    over: dict[str, str] = {}
    figure_cap = _figure_cap(budgets)
    for run_id, seconds in running_s.items():
        used = attempts.get(run_id, Spent())
        if used.unreadable is not None and figure_cap is not None:
            # Unknown figures may be any figures: passing would trust what could not be read.
            over[run_id] = (
                f"its usage could not be read ({used.unreadable}), so it cannot be shown to be "
                f"within {figure_cap}"
            )
        elif budgets.run_tokens is not None and used.tokens > budgets.run_tokens:
            over[run_id] = f"{used.tokens:,} tokens used, over the run budget of "
            over[run_id] += f"{budgets.run_tokens:,}"
        elif budgets.run_cost_usd is not None and used.cost_usd > budgets.run_cost_usd:
            over[run_id] = (
                f"${used.cost_usd:.4f} spent, over the run budget of ${budgets.run_cost_usd:g}"
            )
        elif budgets.run_wall_s is not None and seconds > budgets.run_wall_s:
            over[run_id] = f"running for {seconds:.0f} s, over the run budget of "
            over[run_id] += f"{budgets.run_wall_s:g} s"
    why = workspace_over(budgets, total) if total is not None else None
    if why is not None:
        over.update({run_id: why for run_id in running_s if run_id not in over})
    return over
