"""One operator action on many runs: the command line's ``jarvis approve A B …`` and its
``--state``/``--lane`` selections, and the console's marks.

Each run is its own request through `act` (`core.service.actions`), so each is its own store
transaction that reads the run under the write lock: exactly once per run, as for one run. Two
operators acting on the same runs at once each get, per run, either the move or a refusal
saying what the other made of it. A refusal of one run never stops the others; every run gets
its result, in the order given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.service.action_types import ActionRequest, Outcome
from core.service.actions import ACTIONS, act, availability
from core.service.errors import ServiceError

if TYPE_CHECKING:
    from core.store.api import RunStore

__all__ = ["BULK_ACTIONS", "MAX_RUNS", "RunResult", "act_on_runs", "select_runs"]

BULK_ACTIONS = ("retry", "approve", "cancel", "override")
"""The actions one request may carry out on many runs (steer writes to one worker; verify runs
a run's commands in its checkout)."""

MAX_RUNS = 1000
"""The most runs one bulk action takes: a selection that matches more is refused, not cut."""
MAX_MATCHED = 20 * MAX_RUNS
"""The most runs a selection reads to find those the action applies to."""


@dataclass(frozen=True)
class RunResult:
    """What came of the action on one run."""

    run_id: str
    ok: bool
    code: str
    """``done`` when it went through, else the refusal's code (``illegal_transition``, …)."""
    message: str
    outcome: Outcome | None
    """The engine's outcome (the run as it is now); None for a run that was never asked."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"run_id": self.run_id, "ok": self.ok, "code": self.code,
                                "message": self.message}  # fmt: skip
        outcome = self.outcome.to_json() if self.outcome is not None else {}
        data["run"] = outcome.get("run")
        if "merge" in outcome:
            data["merge"] = outcome["merge"]
        return data


def _check(action: str, run_ids: Sequence[str]) -> None:
    if action not in BULK_ACTIONS:
        raise ServiceError(
            "not_bulk",
            f"{action!r} acts on one run at a time; many runs take {', '.join(BULK_ACTIONS)}.",
        )
    if len(run_ids) > MAX_RUNS:
        raise ServiceError(
            "too_many_runs",
            f"{len(run_ids):,} runs are more than one action takes ({MAX_RUNS:,}); "
            "narrow the selection.",
        )


def act_on_runs(
    store: RunStore,
    root: Path,
    action: str,
    run_ids: Sequence[str],
    operator: str,
    *,
    reason: str | None = None,
    options: Mapping[str, Any] | None = None,
    strict: bool = False,
) -> list[RunResult]:
    """Carry out ``action`` (one of `BULK_ACTIONS`) on each of ``run_ids``, in order.

    Args:
        store: The store to act in.
        root: Its workspace.
        action: ``retry``, ``approve``, ``cancel`` or ``override``.
        run_ids: The runs; one named twice is acted on once.
        operator: Who acts (recorded with every move).
        reason: The one reason every run gets (``cancel`` and ``override`` require it).
        options: The action's other options (``fresh``, ``no_merge``, …), the same for all.
        strict: Refuse an unusable ``jarvis.toml`` (`ActionRequest.strict`).

    Returns:
        One `RunResult` per distinct run, in the order given.

    Raises:
        ServiceError: ``not_bulk`` for an action that takes one run, ``too_many_runs``.
    """
    unique = list(dict.fromkeys(run_ids))
    _check(action, unique)
    given = dict(options or {})
    if reason is not None:
        given["reason"] = reason
    results: list[RunResult] = []
    for run_id in unique:
        outcome = act(store, root, ActionRequest(action, run_id, operator, None, given,
                                                 strict=strict))  # fmt: skip
        results.append(result_of(outcome))
    return results


def result_of(outcome: Outcome) -> RunResult:
    """One run's `RunResult` from the engine's outcome."""
    run_id = outcome.request.run_id
    if outcome.ok:
        done = ACTIONS[outcome.request.action].done or outcome.request.action
        note = (outcome.merge or {}).get("note")
        message = f"{done} {run_id}." + (f" {note}" if note else "")
        return RunResult(run_id, True, "done", message, outcome)
    refusal = outcome.refusal
    code, message = (refusal.code, refusal.message) if refusal else ("refused", "Refused.")
    return RunResult(run_id, False, code, message, outcome)


@dataclass(frozen=True)
class Selection:
    """The runs a ``--state``/``--lane`` selection matched, split by whether the action applies
    to them now."""

    applies: list[str]
    """Run ids the action can apply to, most recently changed first."""
    left: list[tuple[str, str]]
    """Runs matched that the action cannot apply to: (run id, why not)."""


def select_runs(
    store: RunStore, action: str, *, states: Sequence[str] = (), lane: str | None = None
) -> Selection:
    """The runs of ``states`` (any, when empty) on ``lane`` (any, when None) and whether
    ``action`` can apply to each now (the engine asks again, under the lock, when it acts).

    Raises:
        ServiceError: ``not_bulk``; ``too_many_runs`` when more than `MAX_RUNS` would be
            acted on (nothing is cut silently).
    """
    _check(action, ())
    rows = store.list_runs(states=tuple(states), lane=lane, limit=MAX_MATCHED + 1)
    if len(rows) > MAX_MATCHED:
        raise ServiceError(
            "too_many_runs",
            f"The selection matches more than {MAX_MATCHED:,} runs; narrow it with --state "
            "or --lane.",
        )
    applies: list[str] = []
    left: list[tuple[str, str]] = []
    for row in rows:
        can = availability(action, row)
        if can.enabled:
            applies.append(str(row["run_id"]))
        else:
            left.append((str(row["run_id"]), can.reason))
    _check(action, applies)
    return Selection(applies, left)
