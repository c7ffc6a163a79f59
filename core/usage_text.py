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
    """``$0.04``, ``$12.30``; whole dollars from $100 (``$1,234``); under a cent as
    `_under_a_cent` says."""
    if under := _under_a_cent(cost):
        return under
    return f"${cost:.2f}" if cost < 100 else f"${cost:,.0f}"


def _under_a_cent(cost: float) -> str | None:
    """A cost above nothing and under a cent: ``$0.004`` (tenths of a cent), or ``<$0.001``;
    None for any other. Cheap models' runs cost that little, and ``$0.00`` read as nothing
    spent (or nothing priced). Seven characters at most, one more than ``$99.99``: the run
    table's spent column (15 wide) still holds it beside 99.9k tokens."""
    if not 0 < cost < 0.01:
        return None
    if cost < 0.001:
        return "<$0.001"
    tenths = f"{cost:.3f}"
    # 0.0096 is a cent, said as cents are.
    return "$0.01" if tenths == "0.010" else f"${tenths}"


def usage_brief(usage: Mapping[str, Any] | None) -> str:
    """``12.3k · $0.04``: the tokens in and out together, then the cost; "" when nothing was
    reported. The run table's short form of `usage_line`."""
    if not usage:
        return ""
    used = int(usage["tokens_in"]) + int(usage["tokens_out"])
    unread = "?" if usage.get("unreadable") else ""  # some report could not be read
    return f"{tokens(used)} · {cost(usage)}{unread}"
