"""A worker's log files: where an attempt's are, how they are written (renamed aside at a size),
and finding the ones an operator asks for (`core.worker_logs`, the whole story)."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from core.contracts.names import run_id_problem
from core.lifecycle import RunState
from core.store.api import Row, RunStore

Stream = Literal["stdout", "stderr"]
STREAMS: tuple[Stream, ...] = ("stdout", "stderr")

#: Bytes of a log file before it is renamed aside (per stream, per attempt).
LOG_LIMIT_BYTES = 2 * 1024 * 1024
#: Renamed-aside files kept per stream and attempt (``.1`` the newest); older ones are dropped.
LOG_ROTATIONS = 3
#: Characters of a line handed out; a longer line is cut here and marked.
MAX_LINE_CHARS = 1000
#: Bytes of a line read at most (the rest is counted and dropped): room for `MAX_LINE_CHARS`
#: characters of UTF-8, and for a secret that starts before the cut to be recognised whole.
WINDOW_BYTES = 8192
#: Columns of a tab in `shown_line`.
TAB_SIZE = 8
#: Lines before a tail read as well (and not handed out), so that a private key whose BEGIN
#: marker is above the tail's first line still has its body masked.
KEY_CONTEXT_LINES = 200
#: Lines of a private key's body masked at most when its END marker never comes.
MAX_KEY_LINES = 200
#: Seconds between looks at a log that has not grown (`follow_log`).
FOLLOW_POLL_S = 0.1

_ATTEMPT_DIR = re.compile(r"attempt-([1-9][0-9]{0,5})")
BLOCK = 64 * 1024


# -- where --------------------------------------------------------------------------------------


def run_logs_dir(root: Path, run_id: str) -> Path:
    """The folder of a run's logs in the workspace at ``root``."""
    return root / "logs" / run_id


def attempt_dir(root: Path, run_id: str, attempt: int) -> Path:
    """The folder of one attempt's logs: ``logs/<run_id>/attempt-<N>``."""
    return run_logs_dir(root, run_id) / f"attempt-{attempt}"


def rotated(path: Path, index: int) -> Path:
    """``path`` renamed aside ``index`` times (0: ``path`` itself): ``stdout.log.2``."""
    return path if index == 0 else path.with_name(f"{path.name}.{index}")


def dropped_marker(path: Path) -> Path:
    """Where the bytes rotation dropped from ``path`` are counted: ``stdout.log.dropped``."""
    return path.with_name(f"{path.name}.dropped")


def log_attempts(root: Path, run_id: str) -> list[int]:
    """The attempts of a run that have a log folder, in order."""
    try:
        entries = list(os.scandir(run_logs_dir(root, run_id)))
    except OSError:
        return []
    found = []
    for entry in entries:
        match = _ATTEMPT_DIR.fullmatch(entry.name)
        if match and entry.is_dir(follow_symlinks=False):
            found.append(int(match.group(1)))
    return sorted(found)


# -- writing ------------------------------------------------------------------------------------


class RotatingLog:
    """One stream's log file, renamed aside (``.1`` … ``.keep``) before it would pass ``limit``.

    A write that would take the file past ``limit`` goes up to the last line end that fits,
    and the rest starts the next file; a line longer than a whole file is split. A failure of
    the disk (full, gone) ends the writing, never the caller: the host must go on reading the
    worker's pipe whatever happens to its log, or the worker would block on a full pipe.
    """

    def __init__(
        self, path: Path, *, limit: int = LOG_LIMIT_BYTES, keep: int = LOG_ROTATIONS
    ) -> None:
        if limit < 1 or keep < 0:
            raise ValueError("a log needs a positive limit and a non-negative keep")
        self.path = path
        self.limit = limit
        self.keep = keep
        self.size = 0
        """Bytes in the current file."""
        self.rotations = 0
        """Times the file was renamed aside."""
        self.failed: OSError | None = None
        """What ended the writing, if something did."""
        self._file: BinaryIO | None = None
        try:
            self._file = path.open("wb")
        except OSError as exc:
            self.failed = exc

    def write(self, data: bytes) -> None:
        """Append ``data``, renaming the file aside as often as the limit says."""
        try:
            while data and self._file is not None:
                room = self.limit - self.size
                if len(data) <= room:
                    part, data = data, b""
                else:
                    cut = data.rfind(b"\n", 0, room) + 1
                    if cut == 0 and self.size > 0:
                        self._rotate()  # the line starts in a file of its own
                        continue
                    cut = cut or room  # a line longer than a whole file: split
                    part, data = data[:cut], data[cut:]
                self._file.write(part)
                self.size += len(part)
                if data:
                    self._rotate()
            if self._file is not None:
                self._file.flush()
        except OSError as exc:
            self.failed = exc
            self.close()

    def _rotate(self) -> None:
        assert self._file is not None
        self._file.close()
        self._file = None
        if self.keep == 0:
            dropped = self.size
        else:
            oldest = rotated(self.path, self.keep)
            dropped = oldest.stat().st_size if oldest.exists() else 0
            for index in range(self.keep, 0, -1):
                older = rotated(self.path, index - 1)
                if older.exists():
                    os.replace(older, rotated(self.path, index))
        if dropped:
            marker = dropped_marker(self.path)
            try:
                before = int(marker.read_text("ascii") or 0) if marker.exists() else 0
            except ValueError:
                before = 0  # not ours to trust: counting starts again
            marker.write_text(str(before + dropped), "ascii")
        self._file = self.path.open("wb")
        self.size = 0
        self.rotations += 1

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close()
            except OSError:
                pass


# -- finding ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogFiles:
    """One stream of one attempt of a run: where its files are."""

    run_id: str
    attempt: int
    stream: Stream
    folder: Path
    attempts: tuple[int, ...] = ()
    """Every attempt of the run with logs, in order (for saying which others there are)."""

    @property
    def path(self) -> Path:
        """The file written now: ``<folder>/<stream>.log``."""
        return self.folder / f"{self.stream}.log"

    def files(self) -> list[Path]:
        """The stream's files on disk now, oldest first."""
        paths = [rotated(self.path, index) for index in range(LOG_ROTATIONS, -1, -1)]
        return [path for path in paths if path.is_file()]

    def dropped_bytes(self) -> int:
        """Bytes of this stream rotation dropped (0 when none, or when unknown)."""
        try:
            return int(dropped_marker(self.path).read_text("ascii").strip() or 0)
        except (OSError, ValueError):
            return 0


@dataclass(frozen=True)
class LogRefusal:
    """Why there is no log to show, as one sentence."""

    code: Literal["not_found", "no_logs", "elsewhere"]
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def _attempts_phrase(attempts: list[int]) -> str:
    if len(attempts) == 1:
        return f"attempt {attempts[0]}"
    return "attempts " + ", ".join(str(a) for a in attempts[:-1]) + f" and {attempts[-1]}"


def find_log(
    store: RunStore,
    run_id: str,
    *,
    attempt: int | None = None,
    stream: Stream = "stdout",
    root: Path | None = None,
) -> LogFiles | LogRefusal:
    """Where one stream of a run's attempt is logged, or why there is nothing to show.

    Args:
        attempt: the attempt (1 is the first); None: the latest attempt with logs.
        root: the workspace (default: an SQLite store's folder; a database server's store
            has none, so its callers name the workspace).

    Returns:
        The log's files, or a refusal: ``not_found`` (no such run), ``no_logs`` (the run, or
        the attempt asked for, has no logs: not started yet, or started before a host wrote
        any).
    """
    run = store.get_run(run_id)
    if run is None:
        return LogRefusal("not_found", f"There is no run {run_id}.")
    if run_id_problem(run_id) is not None:  # a stored run's id always names a folder safely
        return LogRefusal("no_logs", f"Run {run_id}'s id cannot name a log folder.")
    if root is None:
        assert store.path is not None, "a store on a database server needs the workspace named"
        root = store.path.parent
    attempts = log_attempts(root, run_id)
    legacy = run_logs_dir(root, run_id)
    if not attempts and any((legacy / f"{name}.log").is_file() for name in STREAMS):
        # Written before attempts had folders: a retry overwrote them, so they are the latest.
        latest = int(run["retry_count"] or 0) + 1
        if attempt is None or attempt == latest:
            return LogFiles(run_id, latest, stream, legacy, (latest,))
        attempts_known = [latest]
    else:
        attempts_known = attempts
    if not attempts_known and (elsewhere := _held_elsewhere(store, run, root)) is not None:
        return elsewhere
    if attempt is None:
        if not attempts_known:
            return LogRefusal(
                "no_logs", f"Run {run_id} has no logs yet: no attempt of it has started."
            )
        attempt = attempts_known[-1]
    if attempt not in attempts_known:
        others = f"; it has logs for {_attempts_phrase(attempts_known)}" if attempts_known else ""
        return LogRefusal("no_logs", f"Run {run_id} has no logs for attempt {attempt}{others}.")
    return LogFiles(run_id, attempt, stream, attempt_dir(root, run_id, attempt), tuple(attempts))


def _held_elsewhere(store: RunStore, run: Row, root: Path) -> LogRefusal | None:
    """The refusal for a run another host's workspace ran (its logs are on that machine)."""
    name = run.get("host")
    host = store.host(name) if name else None
    here = host is None or (
        host["machine"] == socket.gethostname() and Path(host["workspace"]) == root.resolve()
    )
    if here:
        return None
    assert host is not None
    return LogRefusal(
        "elsewhere",
        f"Run {run['run_id']} ran on host {name}: its logs are in that host's workspace "
        f"{host['workspace']} on {host['machine']} (run `jarvis logs` there).",
    )


def attempt_is_running(store: RunStore, log: LogFiles) -> bool:
    """Whether the attempt ``log`` belongs to is the run's current one and still running."""
    run = store.get_run(log.run_id)
    if run is None or RunState(run["state"]) is not RunState.RUNNING:
        return False
    return int(run["retry_count"] or 0) + 1 == log.attempt
