"""Messages the console's workers post to the main screen: past-tense facts, as dataclasses.

None bubbles: the screen that read the store is the one that applies the read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual.message import Message

from core.service.action_types import Outcome
from core.service.reads import DiffOpening, RunView
from core.service.window import WindowRows
from jarvis_tui.feed import FeedRead
from jarvis_tui.run_model import WindowAsk

if TYPE_CHECKING:
    from core.service.diffs import PatchIndex, PatchSearch
    from core.service.logs import LogFiles, LogLine, LogRefusal
    from jarvis_tui.bulk import BulkResult


@dataclass
class StoreChanged(Message):
    """The store moved on: the runs that changed (or all of them) and the new journal entries.

    Never coalesced: each read carries journal entries no later read repeats.
    """

    bubble: ClassVar[bool] = False

    read: FeedRead


@dataclass
class WindowRead(Message):
    """A page of the view was read: the view anew (``view``), the page after or before the
    window (``after``, ``before``), or the view's first or last page (``first``, ``last``)."""

    bubble: ClassVar[bool] = False

    page: WindowRows
    ask: WindowAsk
    purpose: str


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
    """An operator action went through the engine's `act`: done, or refused with a sentence."""

    bubble: ClassVar[bool] = False

    outcome: Outcome


@dataclass
class BulkFinished(Message):
    """An operator action went through the engine's `act` for each marked run
    (`jarvis_tui.bulk`): each run's outcome."""

    bubble: ClassVar[bool] = False

    result: BulkResult


@dataclass
class DiffOpened(Message):
    """A run's diff was found (its files, findings and first page), or why there is none."""

    bubble: ClassVar[bool] = False

    opening: DiffOpening


@dataclass
class DiffIndexed(Message):
    """The diff's patch was counted: its length and where each file starts."""

    bubble: ClassVar[bool] = False

    index: PatchIndex


@dataclass
class DiffPageRead(Message):
    """One page of the diff's patch was read."""

    bubble: ClassVar[bool] = False

    page: int
    lines: list[str]
    more: bool
    """The patch goes on after this page."""


@dataclass
class DiffSearched(Message):
    """A search of the whole patch finished; a newer search makes this one worthless."""

    bubble: ClassVar[bool] = False

    search: PatchSearch

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DiffSearched)


#: (tab id, panel id, label) for the folded layout.


@dataclass
class LogOpened(Message):
    """A run's log was found and its last lines read (or why there is none to show)."""

    bubble: ClassVar[bool] = False

    generation: int
    """Which opening of the log view's stream this is (a newer one makes it worthless)."""
    log: LogFiles | None
    refusal: LogRefusal | None
    lines: list[LogLine]
    truncated: bool
    """The log had output before ``lines``."""
    running: bool
    """The attempt was running: its log is followed."""


@dataclass
class LogLinesRead(Message):
    """Lines the worker wrote since the last read (and notes of ours about the log)."""

    bubble: ClassVar[bool] = False

    generation: int
    lines: list[LogLine]
    ended: bool = False
    """The attempt stopped and these are the log's last lines: nothing more will come."""
