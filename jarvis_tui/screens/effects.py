"""What a controller of the main screen wants done: the screen carries it out.

The controllers (`StoreSync`, `RunActionsController`) decide and return these; the screen is
the only one that opens dialogs, starts workers, raises notifications and ends the console
(`MainScreen.do`). A controller then needs no screen: it is tested, and read, as what it decides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.text import Text
from textual.message import Message
from textual.screen import ModalScreen

Post = Callable[[Message], object]
"""How a worker's thread hands a message to the screen."""


@dataclass(frozen=True)
class Work:
    """Start a thread worker of the screen, as ``@work(thread=True, exit_on_error=False)`` on
    one of its methods would: it stops with the screen, and its outcome reaches the screen's one
    funnel for workers."""

    run: Callable[[Post], None]
    """What the worker does; it posts what it found with the function it is given."""
    name: str
    group: str
    description: str
    """What it was doing, as a failure is reported: ``Apply an operator action: …``."""
    exclusive: bool = False
    """A new worker of its group cancels the one before."""


@dataclass(frozen=True)
class Dialog:
    """Open ``screen`` over the console; what it is dismissed with goes to ``then``."""

    screen: ModalScreen[Any]
    then: Callable[[Any], Effects]


@dataclass(frozen=True)
class Note:
    """Raise a notification (worker text made inert by whoever wrote ``message``)."""

    message: str
    title: str = ""
    severity: Literal["information", "warning", "error"] = "information"
    timeout: float | None = None


@dataclass(frozen=True)
class Leave:
    """End the console with ``code``, saying ``message`` (a store that will not come back)."""

    code: int
    message: Text


@dataclass(frozen=True)
class Focus:
    """Give the keys to a panel of the main screen (``progress``, ``gates``, ``steer``)."""

    panel: str


Effect = Work | Dialog | Note | Leave | Focus
Effects = Sequence[Effect]
