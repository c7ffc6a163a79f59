"""How a run state looks on a terminal: a symbol and a style, shared by the CLI and the console.

Never colour alone: the symbol carries the meaning without it (monochrome terminals, colour
blindness, screenshots in a ticket).
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


def state_text(state: str, overridden: bool = False) -> Text:
    """The state as ``symbol name`` in its style, with an ``(overridden)`` mark when it was."""
    symbol, style = STATE_LOOK.get(state, ("?", ""))
    text = Text(f"{symbol} {state}", style=style)
    if overridden:
        text.append(" (overridden)", style="magenta")
    return text
