"""One operator action on several runs (the console's marks): each run once, each result kept.

The console acts on marked runs through the same engine call as on one run (`Fleet.act`, the
registry's `core.service.actions.act`), one run after the other, with the version the operator
saw of each, so a run another process moved meanwhile is refused, never acted on twice; a run
named twice is acted on once. When the engine offers one call for many runs (the command
line's bulk actions), `act_on_each` is the one place to call it from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from core.service.action_types import ActionRequest, Outcome
from core.service.actions import ACTIONS
from core.service.errors import ServiceError
from core.service.fleet import Fleet
from jarvis_tui.safe_text import one_line, shown

#: The actions marks take: those of the registry a run takes with no more than a reason.
BULK_ACTIONS = ("retry", "approve", "cancel", "override")
#: Failures named one by one in the summary; the rest are counted.
NAMED_FAILURES = 8


@dataclass(frozen=True)
class Target:
    """A run to act on, at the version the operator saw (None: whatever it is now)."""

    run_id: str
    version: int | None


@dataclass
class BulkResult:
    """What came of one action on each target, in the order asked."""

    action: str
    outcomes: list[Outcome] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    """Runs the engine could not be asked about (the store failed): run id → why."""

    @property
    def done(self) -> list[str]:
        return [o.request.run_id for o in self.outcomes if o.ok]

    @property
    def refused(self) -> list[tuple[str, str]]:
        """(run id, why) of every run not acted on: the engine's refusals, then failures."""
        refusals = [
            (o.request.run_id, o.refusal.message if o.refusal else "refused")
            for o in self.outcomes
            if not o.ok
        ]
        return [*refusals, *self.failed.items()]

    def summary(self) -> tuple[str, str]:
        """(title, message) of the toast: how many went through, and each refusal's sentence."""
        entry = ACTIONS[self.action]
        asked = len(self.outcomes) + len(self.failed)
        done, refused = self.done, self.refused
        title = f"{entry.label}: {len(done)} of {asked} run{'s' if asked != 1 else ''}"
        lines = []
        if done:
            lines.append(f"{entry.done} {', '.join(shown(r) for r in done)}.")
        for run_id, why in refused[:NAMED_FAILURES]:
            lines.append(f"{shown(run_id)}: {one_line(why, 160)}")
        if len(refused) > NAMED_FAILURES:
            lines.append(f"and {len(refused) - NAMED_FAILURES} more refused.")
        return title, "\n".join(lines)


def act_on_each(
    open_store: Callable[[], AbstractContextManager[Fleet]],
    action: str,
    targets: Iterable[Target],
    operator: str,
    options: dict[str, Any] | None = None,
) -> BulkResult:
    """Carry out ``action`` on each target once, in order, through one store connection."""
    result = BulkResult(action)
    seen: set[str] = set()
    with open_store() as fleet:
        for target in targets:
            if target.run_id in seen:
                continue
            seen.add(target.run_id)
            request = ActionRequest(action, target.run_id, operator, target.version,
                                    dict(options or {}))  # fmt: skip
            try:
                result.outcomes.append(fleet.act(request))
            except ServiceError as exc:
                # Said for this run; the others are still asked (a lock held too long passes).
                result.failed[target.run_id] = str(exc)
    return result
