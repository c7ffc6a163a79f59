"""A worker's logs: written per attempt with rotation, found, read from the end, followed.

Where (docs/ipc.md): each attempt of a run writes ``logs/<run_id>/attempt-<N>/stdout.log`` and
``stderr.log``, so a retry keeps the logs of the attempts before it. A stream's file is renamed
aside when the next write would take it past `LOG_LIMIT_BYTES` (``stdout.log`` becomes
``stdout.log.1``, which becomes ``.2``, up to `LOG_ROTATIONS`; the oldest is dropped), so the
latest output is always on disk and a stream never takes more than ``LOG_LIMIT_BYTES × (1 +
LOG_ROTATIONS)``. A file is renamed at a line's end whenever the line fits in a file, so files
hold whole lines; the readers read a stream's files as the one text they were written as, and
never depend on it. ``<stream>.log.dropped`` counts the bytes rotation dropped. Workspaces from
before attempts had folders have ``logs/<run_id>/stdout.log``: it is read as the run's latest
attempt when the run has no attempt folder at all.

Reading never holds a log whole: `tail_log` reads from the end backwards until it has the lines
asked for, and `LogFollower` (`follow_log`) reads what a worker writes as it writes it, across
renames and a truncation, a line at a time. The files of a stream are opened together before
they are read, so a rename while they are read changes nothing: an open file is read to its
end whatever its name has become.

Every line handed out has colour and cursor codes dropped, a line redrawn with carriage returns
as last drawn (`core.text.as_a_terminal_leaves_it`), its secrets masked (`mask_secrets`; a
private key's body by the markers around it) and at most `MAX_LINE_CHARS` characters, a longer
one cut with a marker that says how long it was. It is still worker text: `shown_line` makes
it inert for a terminal, and JSON escapes it by itself.

Three modules: `files` (where, writing, finding), `lines` (shaping, the files opened together)
and `reading` (from the end, following); what they offer is imported from here.
"""

from __future__ import annotations

from core.worker_logs.files import (
    FOLLOW_POLL_S,
    KEY_CONTEXT_LINES,
    LOG_LIMIT_BYTES,
    LOG_ROTATIONS,
    MAX_KEY_LINES,
    MAX_LINE_CHARS,
    STREAMS,
    TAB_SIZE,
    WINDOW_BYTES,
    LogFiles,
    LogRefusal,
    RotatingLog,
    Stream,
    attempt_dir,
    attempt_is_running,
    dropped_marker,
    find_log,
    log_attempts,
    rotated,
    run_logs_dir,
)
from core.worker_logs.lines import (
    LogLine,
    shown_line,
)
from core.worker_logs.reading import (
    ROTATED_PAST,
    TRUNCATED,
    LogFollower,
    LogTail,
    follow_log,
    tail_log,
)

__all__ = [
    "FOLLOW_POLL_S",
    "KEY_CONTEXT_LINES",
    "LOG_LIMIT_BYTES",
    "LOG_ROTATIONS",
    "LogFiles",
    "LogFollower",
    "LogLine",
    "LogRefusal",
    "LogTail",
    "MAX_KEY_LINES",
    "MAX_LINE_CHARS",
    "ROTATED_PAST",
    "RotatingLog",
    "STREAMS",
    "Stream",
    "TAB_SIZE",
    "TRUNCATED",
    "WINDOW_BYTES",
    "attempt_dir",
    "attempt_is_running",
    "dropped_marker",
    "find_log",
    "follow_log",
    "log_attempts",
    "rotated",
    "run_logs_dir",
    "shown_line",
    "tail_log",
]
