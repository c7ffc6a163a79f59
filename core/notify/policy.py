"""What to notify, and when: one notice per run that starts needing a human, bursts collapsed.

A run needs a human when it enters a stage of `core.lifecycle.NEEDS_HUMAN` (the same stages
the console's attention view and its toasts count). Many can enter at once: a flood of 200
failures within a second must reach an operator as one summary ("200 runs need you: 200
failed"), not as 200 pings, and a failure storm lasting an hour as a handful of summaries.

Plain Python over the journal's transitions and the time it is given, so tests decide when
time passes; the host's webhook (`core.host.notifier`) and the console's bell and desktop
notifications each hold one.

The rules, in order:

- A run is noted when a transition moves it into a stage that needs a human; noted twice
  before a notice, it is counted once, at its latest stage.
- A notice gathers for `SETTLE_S` after the first run noted: a burst arriving together is
  told together.
- Two notices are at least `GAP_S` apart, and at most `MOST` go out in any `WINDOW_S`; what
  arrives meanwhile waits, and the next notice tells all of it.
- A run dealt with before its notice went out (``still_waiting`` is False) is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.lifecycle import NEEDS_HUMAN, Stage
from core.moves import moved

#: Seconds a notice gathers after the first run it tells of: a burst is one notice.
SETTLE_S = 2.0
#: The least seconds between two notices.
GAP_S = 30.0
#: At most this many notices in `WINDOW_S` seconds, however long a flood lasts.
MOST = 4
WINDOW_S = 600.0
#: Runs named in a notice about several; the rest are counted.
NAMED = 3

#: How a stage needing a human is named in a summary ("9 failed, 3 review requested").
WORDS: dict[str, str] = {
    "review_requested": "review requested",
    "failed_contract": "failed contract",
    "failed": "failed",
    "awaiting_approval": "command to allow",
}


@dataclass(frozen=True)
class Entered:
    """A run that entered a stage needing a human: its id, the stage, why (the transition's
    reason, as stored)."""

    run_id: str
    stage: Stage
    reason: str | None = None


def entered(entries: Iterable[Mapping[str, Any]]) -> list[Entered]:
    """The runs these journal entries move into a stage that needs a human, in order."""
    found = []
    for entry in entries:
        payload = entry.get("payload")
        if entry.get("kind") != "transition" or not isinstance(payload, Mapping):
            continue
        stages = moved(payload)
        if stages is None or stages[1] not in NEEDS_HUMAN:
            continue
        reason = payload.get("reason")
        found.append(Entered(str(entry["run_id"]), stages[1], str(reason) if reason else None))
    return found


@dataclass(frozen=True)
class Notice:
    """One notification: its title and body (plain, not yet made inert: each channel does
    that for its medium) and the runs it tells of, by stage word."""

    title: str
    body: str
    runs: tuple[Entered, ...]

    @property
    def counts(self) -> dict[str, int]:
        """Runs per stage word, most first."""
        counts: dict[str, int] = {}
        for run in self.runs:
            word = WORDS.get(run.stage.value, run.stage.value)
            counts[word] = counts.get(word, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: -item[1]))


def notice_of(runs: list[Entered]) -> Notice:
    """The notice telling of ``runs`` (at least one)."""
    if len(runs) == 1:
        run = runs[0]
        word = WORDS.get(run.stage.value, run.stage.value)
        body = f"Run {run.run_id}: {word}" + (f": {run.reason}" if run.reason else ".")
        return Notice("Jarvis: a run needs you", body, tuple(runs))
    notice = Notice("Jarvis: runs need you", "", tuple(runs))
    counts = ", ".join(f"{n} {word}" for word, n in notice.counts.items())
    names = ", ".join(run.run_id for run in runs[:NAMED])
    more = f" and {len(runs) - NAMED} more" if len(runs) > NAMED else ""
    body = f"{len(runs)} runs need you: {counts} ({names}{more})."
    return Notice(notice.title, body, notice.runs)


@dataclass
class NotifyPolicy:
    """The runs noted and the notices sent, deciding the next notice. Times are seconds from
    any origin (only differences count); every method takes the time it is at."""

    settle_s: float = SETTLE_S
    gap_s: float = GAP_S
    most: int = MOST
    window_s: float = WINDOW_S
    waiting: dict[str, Entered] = field(default_factory=dict)
    """Run id → its latest entry, not yet told, in the order they arrived."""
    first_at: float | None = None
    """When the oldest run waiting to be told was noted."""
    sent: list[float] = field(default_factory=list)
    """When the notices of the last `window_s` went out."""

    def note(self, runs: Iterable[Entered], now: float) -> None:
        for run in runs:
            self.waiting.pop(run.run_id, None)  # to the end: the latest word on it
            self.waiting[run.run_id] = run
            if self.first_at is None:
                self.first_at = now

    def next_at(self) -> float | None:
        """When a notice may next be due (None: nothing waits)."""
        if self.first_at is None:
            return None
        at = self.first_at + self.settle_s
        if self.sent:
            at = max(at, self.sent[-1] + self.gap_s)
        if len(self.sent) >= self.most:
            at = max(at, self.sent[-self.most] + self.window_s)
        return at

    def due(
        self, now: float, still_waiting: Callable[[str], bool] = lambda _: True
    ) -> Notice | None:
        """The notice to send now, if one is due; noted as sent."""
        at = self.next_at()
        if at is None or now < at:
            return None
        runs = [run for run in self.waiting.values() if still_waiting(run.run_id)]
        self.waiting.clear()
        self.first_at = None
        if not runs:
            return None
        self.sent = [t for t in self.sent if t > now - self.window_s] + [now]
        return notice_of(runs)
