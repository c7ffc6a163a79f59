"""Messages the console's workers post to the main screen: past-tense facts, as dataclasses.

None bubbles: the screen that read the store is the one that applies the read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual.message import Message

from core.operator_actions import ActionResult
from jarvis_tui.feed import FeedRead, RunView


@dataclass
class StoreChanged(Message):
    """The store moved on: the runs that changed (or all of them) and the new journal entries.

    Never coalesced: each read carries journal entries no later read repeats.
    """

    bubble: ClassVar[bool] = False

    read: FeedRead


@dataclass
class RunViewReceived(Message):
    """The selected run's panels were read; a newer read of any run makes this one worthless."""

    bubble: ClassVar[bool] = False

    view: RunView

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunViewReceived)


@dataclass
class StreamHistoryReceived(Message):
    """The newest journal entries of every run, for the all-runs progress stream."""

    bubble: ClassVar[bool] = False

    entries: list[dict[str, Any]]


@dataclass
class ActionFinished(Message):
    """An operator action went through core's API: done, or refused with a sentence."""

    bubble: ClassVar[bool] = False

    action: str
    """``retry``, ``override``, ``approve``, ``cancel`` or ``steer``."""
    run_id: str
    result: ActionResult
