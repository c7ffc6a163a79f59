"""A run's worker logs through the front door: where one is, its end, its new lines.

Finding a log asks the store (`Fleet.find_log`); reading it is the engine's readers, which read
from the end and follow a log across its renames (`core.worker_logs`). Lines come masked and
cut; a front end makes them inert (`shown_line`).
"""

from __future__ import annotations

from core.worker_logs import (
    MAX_LINE_CHARS,
    LogFiles,
    LogFollower,
    LogLine,
    LogRefusal,
    LogTail,
    Stream,
    follow_log,
    shown_line,
    tail_log,
)

__all__ = [
    "MAX_LINE_CHARS",
    "LogFiles",
    "LogFollower",
    "LogLine",
    "LogRefusal",
    "LogTail",
    "Stream",
    "follow_log",
    "shown_line",
    "tail_log",
]
