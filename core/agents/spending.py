"""What the runner says an attempt has used, with each progress event (``usage``, docs/ipc.md).

The figures are the attempt's totals so far, as the agent's stream has reported them: every
adapter counts a model call's tokens when its output shows them, not only when the turn ends,
so the host's budget check (on each event) can stop an agent mid-turn. When the agent reported
no cost (Codex), the tokens are priced with the lane's price (``JARVIS_PRICE``,
`core.prices`), and the figure says so: ``cost_computed``.
"""

from __future__ import annotations

from typing import Any

from core.agents.events import Usage
from core.prices import Price


def usage_doc(used: Usage, price: Price | None) -> dict[str, Any] | None:
    """The ``usage`` of a progress event for ``used``; None while nothing was used."""
    if not (used.tokens_in or used.tokens_out or used.cost_usd):
        return None
    doc: dict[str, Any] = {"tokens_in": used.tokens_in, "tokens_out": used.tokens_out}
    if used.cost_usd is None and price is not None:
        doc["cost_usd"] = price.cost(used.tokens_in, used.tokens_out)
        doc["cost_computed"] = True
    else:
        doc["cost_usd"] = float(used.cost_usd or 0.0)
    return doc


def said(used: Usage) -> str:
    """A progress summary for usage no other event carried."""
    return f"used so far: {used.tokens_in:,} tokens in, {used.tokens_out:,} out"
