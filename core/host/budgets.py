"""Which running runs have crossed a budget (`[budgets]` in jarvis.toml), and why.

The rule is one function of figures (`over_budget`): what each attempt has used so far (as its
agent reports it), how long each has run, and the workspace's totals. `BudgetWatch` is the
host's reading of those figures from the store; the host interrupts what it names, and the
reason becomes the run's failure.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from core.host.config import BudgetsConfig
from core.host.shared import Shared
from core.moves import worked


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


log = logging.getLogger("jarvis.host")


class BudgetWatch:
    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.notes: dict[str, str] = {}
        """Why a run being stopped for its budget is stopped (for its failure's reason)."""
        self._said = False

    def over(self, now: float, *, last_of: str | None = None) -> dict[str, str]:
        """Running runs past a budget (`[budgets]`), each with the sentence that says which.

        ``last_of``: judge only this run's attempt, which has just ended, on its figures (its
        wall time was the reaper's to judge while it ran).
        """
        shared = self.shared
        budgets = shared.config.budgets
        if not shared.workers:
            return {}
        if last_of is not None:
            running_s = {last_of: 0.0}
        else:
            running_s = {run_id: now - w.started for run_id, w in shared.workers.items()}
        attempts = {}
        if needs_attempt_usage(budgets):
            attempts = {
                run_id: Spent(
                    int(u["tokens_in"]) + int(u["tokens_out"]),
                    float(u["cost_usd"]),
                    unreadable=u["unreadable"],
                )
                for run_id, u in shared.store.attempt_usage(list(running_s)).items()
            }
        total = self._workspace_spent() if has_workspace_cap(budgets) else None
        return over_budget(budgets, running_s, attempts, total)

    def _workspace_spent(self) -> Spent:
        """The workspace's totals: what its agents reported, and how long its workers worked
        (ended attempts, and running ones up to now, whichever host runs them); a figure no
        cap asks for is left at 0, unread."""
        store = self.shared.store
        budgets = self.shared.config.budgets
        tokens, cost, wall_s = 0, 0.0, 0.0
        # Each sum reads every run, and the loop asks twice a tick: only what a cap needs.
        if budgets.workspace_tokens is not None or budgets.workspace_cost_usd is not None:
            total = store.workspace_usage()
            tokens = int(total["tokens_in"]) + int(total["tokens_out"])
            cost = float(total["cost_usd"])
        if budgets.workspace_wall_s is not None:
            ended_s, live = store.workspace_worked()
            now = store.now()
            wall_s = ended_s + sum(worked(started, now) for started in live)
        return Spent(tokens, cost, wall_s)

    def starts_held(self) -> bool:
        """Whether the workspace is past a budget of its own, so no new run starts (said in
        the log once each time it becomes so)."""
        over = None
        if has_workspace_cap(self.shared.config.budgets):
            over = workspace_over(self.shared.config.budgets, self._workspace_spent())
        if over:
            if not self._said:
                log.warning("%s: no new run starts", over)
                self._said = True
            return True
        self._said = False
        return False
