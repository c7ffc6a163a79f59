"""How long ago a stored timestamp was, shared by the CLI's tables and the console's run table."""

from __future__ import annotations

from datetime import datetime


def seconds_since(stamp: str | None, now: datetime) -> int | None:
    """Whole seconds from ISO ``stamp`` to ``now`` (never negative), None when unreadable."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None or now.tzinfo is None:
        moment, now = moment.replace(tzinfo=None), now.replace(tzinfo=None)
    return max(0, int((now - moment).total_seconds()))


def in_largest_unit(seconds: int) -> str:
    """``seconds`` in the largest whole unit: 42s, 7m, 3h, 2d."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
