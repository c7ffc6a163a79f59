"""What an adapter makes of a coding agent's output: `AgentEvent`s (how its tool calls are
classed and described is `core.agents.tool_calls`).

An event is one thing an operator may want to see: the agent read a file, ran the tests,
committed, said something, failed or finished. Its ``summary`` is one line of plain text: secrets
masked, escape sequences dropped, line breaks folded into spaces, every other control character
shown as a visible escape (`core.text.inert`), and it is cut at `MAX_SUMMARY_CHARS`. That makes it
safe to store, but not trusted: it is still agent text, which the host masks again as it stores
it and escapes again when it shows it.

Token and cost figures on an event are **increments**: what the agent reported since the previous
event that carried any. Adapters turn the running totals some agents report into increments, so
adding up every event of a run (`total_usage`, or `Usage.plus`) gives the run's totals, whatever
the agent's own convention. ``tokens_in`` counts every input token the model read, cached or not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, get_args

from core.contracts.secrets_scan import mask_secrets
from core.text import inert

Phase = Literal[
    "reading",
    "searching",
    "editing",
    "testing",
    "committing",
    "planning",
    "thinking",
    "tool",
    "message",
    "error",
    "done",
]
#: Every phase an adapter may report, in the order an operator would read them.
PHASES: Final[tuple[Phase, ...]] = get_args(Phase)
#: A summary is one line for an operator; the simulated worker keeps the same length.
MAX_SUMMARY_CHARS: Final = 400
#: An ``error`` text is a little longer: it may be the only account of what went wrong.
MAX_ERROR_CHARS: Final = 2_000
#: The largest token count kept: what the store's signed 64-bit integers hold.
MAX_COUNT: Final = 2**63 - 1


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One thing a coding agent did or said, as Jarvis reports progress."""

    phase: Phase
    """What kind of step this is (`PHASES`)."""
    summary: str
    """One line of plain text, at most `MAX_SUMMARY_CHARS` characters, no raw control characters."""
    tool: str | None = None
    """The agent's own name for the tool it used (``Edit``, ``bash``, ``command_execution``)."""
    session_id: str | None = None
    """The agent's session (or thread) id, on every event once the agent has reported it."""
    tokens_in: int | None = None
    """Input tokens reported since the previous event that carried usage (cached ones included)."""
    tokens_out: int | None = None
    """Output tokens reported since the previous event that carried usage."""
    cost_usd: float | None = None
    """Dollars reported since the previous event that carried usage; None if no cost came."""
    final_text: str | None = None
    """The agent's final answer, on the event that ends a turn: where a completion block may be."""
    error: str | None = None
    """What went wrong: always set on ``error`` events, and on tool calls that failed; one line."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and dollars added up: an adapter's running total, or a sum of events."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    """None until some figure reported a cost (an agent may report tokens only)."""

    def plus(self, other: Usage | AgentEvent) -> Usage:
        """This total with ``other``'s figures (an event's increments, or another total) added."""
        cost = self.cost_usd
        if other.cost_usd is not None:
            cost = (cost or 0.0) + other.cost_usd
        return Usage(
            tokens_in=self.tokens_in + (other.tokens_in or 0),
            tokens_out=self.tokens_out + (other.tokens_out or 0),
            cost_usd=cost,
        )


def total_usage(events: Iterable[AgentEvent]) -> Usage:
    """The sum of the increments ``events`` carry: a run's totals when given all its events."""
    total = Usage()
    for event in events:
        total = total.plus(event)
    return total


# --- plain text -------------------------------------------------------------------------------

#: Terminal escape sequences: CSI (also the one-byte 0x9b form), OSC and the string controls
#: (up to BEL or ST, or to the end when unterminated), and two-byte escapes. All linear.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
#: Lone surrogates (JSON's ``"\ud800"`` decodes to one); they cannot be written as UTF-8.
_SURROGATES = re.compile("[\ud800-\udfff]")


def writable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def plain(text: str) -> str:
    """``text`` without escape sequences and lone surrogates; line breaks are kept."""
    if text.isascii() and "\x1b" not in text:
        return text
    return writable(_ESCAPES.sub("", text))


def one_line(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """``text`` as one line of at most ``limit`` characters, safe to store (see module docstring).

    Only the first few times ``limit`` characters are looked at, so a megabyte of agent text
    costs no more than a short one.
    """
    # Masked before it is escaped or cut, either of which would hide a key from the host's own
    # scan: an escape makes a control inside a key four characters of text, a cut leaves part.
    text = mask_secrets(text[: limit * 4])
    if not (text.isascii() and text.isprintable()):
        text = inert(" ".join(plain(text).split()), keep_lines=False, keep_tabs=False)
    elif "  " in text or text[:1] == " " or text[-1:] == " ":
        text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def first_line(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """The first non-blank line of ``text``, as `one_line` makes it."""
    for line in text[: limit * 4].splitlines():
        if line.strip():
            return one_line(line, limit)
    return ""


def count(value: object) -> int | None:
    """``value`` when it is a token count JSON may hold (a non-negative integer in range)."""
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value
    return None


def dollars(value: object) -> float | None:
    """``value`` when it is a plausible cost (a finite, non-negative number), as a float."""
    if type(value) in (int, float):
        amount = float(value)  # type: ignore[arg-type]
        if math.isfinite(amount) and 0.0 <= amount < 1e12:
            return amount
    return None
