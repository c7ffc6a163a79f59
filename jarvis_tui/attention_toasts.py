"""When runs start needing a human, say so in one toast, not one per run.

A busy fleet moves a run into a stage that needs a human (`core.lifecycle.NEEDS_HUMAN`: review, a
failure, a command to allow) about once a second; a toast for each, five seconds long, covered the
gates and the composer for good and drew over dialogs. Here the runs that started waiting are
gathered, and one toast says so: the first at once, the next only after `TOAST_EVERY` seconds,
naming every run that started waiting since (and still waits). The header's count and the attention
view (`!`) say the rest at any time.

Plain Python, timed by the clock it is given: the console passes its own, so tests decide when
time passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from core.service.stages import NEEDS_HUMAN, Stage, label, moved
from jarvis_tui.safe_text import one_line, shown

#: Seconds between two needs-a-human toasts at the most.
TOAST_EVERY = 30.0
#: Seconds a needs-a-human toast stays up.
TOAST_SECONDS = 8.0
#: Runs named in a toast about several; the rest are counted.
NAMED = 3


def moves(entries: Iterable[dict[str, Any]]) -> Iterator[tuple[str, Stage, dict[str, Any]]]:
    """Each transition among these journal entries: its run, the stage it moved to, and its
    payload."""
    for entry in entries:
        payload = entry.get("payload")
        if entry.get("kind") != "transition" or not isinstance(payload, dict):
            continue
        stages = moved(payload)
        if stages is not None:
            yield str(entry["run_id"]), stages[1], payload


@dataclass(frozen=True)
class Toast:
    """What to show: a title and a one-line message (already inert)."""

    title: str
    message: str


class AttentionToasts:
    """Runs that started waiting for a human, and when to say so."""

    def __init__(self, *, every: float = TOAST_EVERY, clock: Callable[[], float]) -> None:
        self.every = every
        self.clock = clock
        """Seconds, from any origin (only differences are used)."""
        self.waiting: dict[str, tuple[str, str | None]] = {}
        """Run id → (state, reason) of the runs not yet in a toast, in the order they arrived."""
        self._last: float | None = None

    def entered(self, entries: Iterable[dict[str, Any]]) -> None:
        """Note the runs that these journal entries move into a state that needs a human."""
        for run_id, stage, payload in moves(entries):
            if stage in NEEDS_HUMAN:
                self.waiting.pop(run_id, None)  # moved to the end: the latest word on it
                self.waiting[run_id] = (label(stage), payload.get("reason"))

    def due(self, still_waiting: Callable[[str], bool]) -> Toast | None:
        """The toast to show now, if one is due: None while the last one is too recent, or when
        every run noted has been dealt with since (``still_waiting`` is False for it)."""
        if not self.waiting:
            return None
        now = self.clock()
        if self._last is not None and now - self._last < self.every:
            return None
        runs = [(run_id, *seen) for run_id, seen in self.waiting.items() if still_waiting(run_id)]
        self.waiting.clear()
        if not runs:
            return None
        self._last = now
        if len(runs) == 1:
            run_id, state, reason = runs[0]
            message = f"Run {shown(run_id)} is {state}" + (
                f": {one_line(reason, 160)}" if reason else "."
            )
        else:
            names = ", ".join(shown(run_id) for run_id, _state, _reason in runs[:NAMED])
            more = f" and {len(runs) - NAMED} more" if len(runs) > NAMED else ""
            message = f"{len(runs)} runs need a human: {names}{more}. Press ! to see them."
        return Toast("Needs a human", message)
