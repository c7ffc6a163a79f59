"""How a run state looks on a terminal: a symbol and a style, shared by the CLI and the console.

Never colour alone: the symbol carries the meaning without it (monochrome terminals, NO_COLOR,
colour blindness, screenshots in a ticket).
"""

from __future__ import annotations

from rich.text import Text

#: State → (symbol, style).
STATE_LOOK: dict[str, tuple[str, str]] = {
    "queued": ("○", "dim"),
    "running": ("▶", "cyan"),
    "review_requested": ("◆", "yellow"),
    "failed_contract": ("⊘", "red"),
    "failed": ("✗", "bold red"),
    "done": ("✓", "green"),
}

#: Steer receipt status → (symbol, style), in the order a steer moves through them. Every
#: symbol is one cell wide in every terminal (no emoji: they are two cells in some).
STEER_LOOK: dict[str, tuple[str, str]] = {
    "pending": ("…", "dim"),
    "delivered": ("→", "cyan"),
    "acked": ("✓", "green"),
    "expired": ("⊗", "bold red"),
}


def state_text(state: str, overridden: bool = False) -> Text:
    """The state as ``symbol name`` in its style, with an ``(overridden)`` mark when it was."""
    symbol, style = STATE_LOOK.get(state, ("?", ""))
    text = Text(f"{symbol} {state}", style=style)
    if overridden:
        text.append(" (overridden)", style="magenta")
    return text


def steer_text(status: str) -> Text:
    """A steer receipt's status as ``symbol status``."""
    symbol, style = STEER_LOOK.get(status, ("?", ""))
    return Text(f"{symbol} {status}", style=style)
