"""Tokens and cost in words, the same in the CLI and the console."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tokens(count: int) -> str:
    """``950``, ``12.3k``, ``4.1M``."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def usage_line(usage: Mapping[str, Any] | None) -> str:
    """``12.3k in · 2.1k out · $0.42``, or "" when nothing was reported."""
    if not usage:
        return ""
    return (
        f"{tokens(int(usage['tokens_in']))} in · {tokens(int(usage['tokens_out']))} out · "
        f"{cost(usage)}"
    )


def cost(usage: Mapping[str, Any]) -> str:
    """``$0.42``, or ``≈$0.42`` when Jarvis computed the cost from the tokens and a price (the
    agent reported none: ``cost_computed``)."""
    return ("≈" if usage.get("cost_computed") else "") + dollars(float(usage["cost_usd"]))


def dollars(cost: float) -> str:
    """``$0.04``, ``$12.30``; whole dollars from $100 (``$1,234``)."""
    return f"${cost:.2f}" if cost < 100 else f"${cost:,.0f}"


def usage_brief(usage: Mapping[str, Any] | None) -> str:
    """``12.3k · $0.04``: the tokens in and out together, then the cost; "" when nothing was
    reported. The run table's short form of `usage_line`."""
    if not usage:
        return ""
    used = int(usage["tokens_in"]) + int(usage["tokens_out"])
    unread = "?" if usage.get("unreadable") else ""  # some report could not be read
    return f"{tokens(used)} · {cost(usage)}{unread}"
