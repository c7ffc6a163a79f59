"""How a run's stage looks on a terminal: a symbol and a style, shared by the CLI and the console.

Never colour alone: the symbol carries the meaning without it (monochrome terminals, NO_COLOR,
colour blindness, screenshots in a ticket). Every stage of the lifecycle has one look, the
stages of verification (the sub-machine of ``running``) included; importing this module checks
that the looks and `core.lifecycle.STAGES` name the same stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from core.lifecycle import RunState, VerificationState
from core.service.stages import PARENT, STAGES, Stage, stage_of

S, V = RunState, VerificationState

#: Stage → (symbol, style). Every symbol is one cell wide in every terminal (no emoji: they are
#: two cells in some) and in the common monospace fonts (a glyph a font lacks is a box). The
#: stages of verification: a quarter, then half of the way; a hollow ◆, a smaller decision.
STATE_LOOK: dict[str, tuple[str, str]] = {
    S.QUEUED: ("○", "dim"),
    S.RUNNING: ("▶", "cyan"),
    V.PENDING: ("◔", "cyan"),
    V.VERIFYING: ("◑", "cyan"),
    V.AWAITING_APPROVAL: ("◇", "bold yellow"),
    S.REVIEW_REQUESTED: ("◆", "yellow"),
    S.FAILED_CONTRACT: ("⊘", "red"),
    S.FAILED: ("✗", "bold red"),
    S.DONE: ("✓", "green"),
}
if list(STATE_LOOK) != list(STAGES):
    raise AssertionError(f"STATE_LOOK must follow core.lifecycle.STAGES: {list(STAGES)}")

#: Steer receipt status → (symbol, style), in the order a steer moves through them.
STEER_LOOK: dict[str, tuple[str, str]] = {
    "pending": ("…", "dim"),
    "delivered": ("→", "cyan"),
    "acked": ("✓", "green"),
    "expired": ("⊗", "bold red"),
}

_UNKNOWN = ("?", "")


def shown_stage(run: Mapping[str, Any]) -> Stage | None:
    """Where a run shown stands (`core.lifecycle.stage_of`); None for a row that does not say."""
    try:
        return stage_of(run)
    except (KeyError, ValueError):
        return None


def look(stage: str) -> tuple[str, str]:
    """``stage``'s (symbol, style); ``?`` for a name the lifecycle does not know."""
    return STATE_LOOK.get(stage, _UNKNOWN)


def state_text(
    state: str,
    overridden: bool = False,
    verification: str | None = None,
    *,
    compact: bool = False,
) -> Text:
    """The state as ``symbol name`` in its style, with an ``(overridden)`` mark when it was.

    A running run whose criteria are being verified adds its stage of verification: its symbol
    and name (``▶ running ◑ verifying``), or its symbol alone with ``compact`` (a table cell).
    """
    symbol, style = look(state)
    text = Text(f"{symbol} {state}", style=style)
    if verification and state == PARENT:
        sub_symbol, sub_style = look(verification)
        text.append(f" {sub_symbol}" if compact else f" {sub_symbol} {verification}", sub_style)
    if overridden:
        text.append(" (overridden)", style="magenta")
    return text


def run_state_text(run: Mapping[str, Any], *, compact: bool = False) -> Text:
    """`state_text` for a run (a row with ``state``, ``verification_state``, ``overridden``)."""
    return state_text(
        str(run.get("state") or ""),
        bool(run.get("overridden")),
        run.get("verification_state"),
        compact=compact,
    )


def steer_text(status: str) -> Text:
    """A steer receipt's status as ``symbol status``."""
    symbol, style = STEER_LOOK.get(status, ("?", ""))
    return Text(f"{symbol} {status}", style=style)
