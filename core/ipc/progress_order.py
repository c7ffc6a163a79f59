"""How a run's progress events are told apart and put in order.

NanoClaw's worker numbers its events from 0, and from 0 again for each query of an attempt
(the initial prompt, each follow-up, each steer taken between turns); Jarvis's own workers
number them from 1 up to the end of the attempt. So ``seq`` alone neither names an event nor
orders an attempt's events:

- **identity**: an event is (run, attempt, file name). The name holds the event's time and seq
  and is never reused for another event of the attempt, and a file seen again after a crash
  between commit and delete is recognised by its receipt and, besides, by its name;
- **order**: within an attempt, by time (`utc_text` of the event's ``timestamp``), then seq, then
  file name. The last in that order is the attempt's latest event: its summary is the run's last
  progress and its ``usage`` the figures that stand (`core.run_usage`).
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_text(moment: datetime) -> str:
    """A moment as fixed-width UTC text (``2026-11-22T03:30:00.120000Z``).

    Such texts sort as their moments do, whatever offset or precision the writer used; a
    moment without an offset is taken as UTC.

    Raises:
        ValueError: the moment is outside years 1-9999 in UTC.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{moment.isoformat()} is outside the years 1-9999 in UTC") from None
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
