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
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from core.contracts.names import run_id_problem
from core.contracts.secrets_scan import MASK, PEM_BEGIN, PEM_END, mask_secrets
from core.lifecycle import RunState
from core.store.api import Row, RunStore
from core.text import as_a_terminal_leaves_it, inert

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
_BLOCK = 64 * 1024


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


# -- lines --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogLine:
    """A line of a log as handed out, or a note of ours about the log (``note``)."""

    text: str
    note: bool = False


class _Shaper:
    """Raw lines into lines as handed out (see the module docstring), in order: a private key's
    body is masked by the markers around it, which only a reader going forward sees."""

    def __init__(self) -> None:
        self.key_lines = -1
        """Lines of a private key's body seen so far (-1: not inside one)."""

    def line(self, raw: bytes, length: int) -> str:
        """``raw``, the first bytes of a line ``length`` bytes long (its line feed left out)."""
        text = raw.decode("utf-8", "replace")
        if length == len(raw) and text.endswith("\r"):
            text = text[:-1]  # CRLF
        text = self._mask(as_a_terminal_leaves_it(text))
        if length > len(raw) or len(text) > MAX_LINE_CHARS:
            text = f"{text[:MAX_LINE_CHARS]} … [line cut: {length:,} bytes]"
        return text

    def _mask(self, line: str) -> str:
        if self.key_lines >= 0:
            end = PEM_END.search(line)
            if end is None:
                self.key_lines += 1
                if self.key_lines >= MAX_KEY_LINES:
                    self.key_lines = -1
                return MASK if line.strip() else line
            self.key_lines = -1
            before = MASK if line[: end.start()].strip() else line[: end.start()]
            return before + mask_secrets(line[end.start() :])
        masked = mask_secrets(line)
        begins = list(PEM_BEGIN.finditer(line))
        if begins and PEM_END.search(line, begins[-1].end()) is None:
            self.key_lines = 0  # a key starts here and goes on past the line
        return masked


class _LineReader:
    """Bytes in, whole lines out, holding at most `WINDOW_BYTES` of a line however long."""

    def __init__(self, shaper: _Shaper) -> None:
        self.shaper = shaper
        self.head = bytearray()
        self.length = 0
        """Bytes of the line begun so far (the head and what was dropped after it)."""

    @property
    def partial(self) -> bool:
        return self.length > 0

    def feed(self, data: bytes, out: list[str]) -> None:
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            stop = len(data) if newline < 0 else newline
            room = WINDOW_BYTES - len(self.head)
            if room > 0:
                self.head += data[start : min(stop, start + room)]
            self.length += stop - start
            if newline < 0:
                return
            out.append(self.shaper.line(bytes(self.head), self.length))
            self.head.clear()
            self.length = 0
            start = newline + 1

    def flush(self, out: list[str]) -> None:
        """The line begun, as a whole line (the log ended without its line feed)."""
        if self.partial:
            out.append(self.shaper.line(bytes(self.head), self.length))
            self.head.clear()
            self.length = 0

    def drop(self) -> None:
        self.head.clear()
        self.length = 0


def shown_line(line: str) -> str:
    """A log line as a terminal may show it on one line: every control character a visible
    escape (`inert`), tabs expanded to spaces."""
    return inert(line, keep_lines=False, keep_tabs=True).expandtabs(TAB_SIZE)


# -- the files, opened together -----------------------------------------------------------------

_Key = tuple[int, int]
"""A file's identity: (device, inode)."""


@dataclass
class _Part:
    fd: int
    key: _Key
    size: int


def _open(path: Path) -> tuple[int, _Key, int] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    return fd, (st.st_dev, st.st_ino), st.st_size


class _Chain:
    """A stream's files, oldest first, each opened once: their sizes as they were when opened.

    Opened newest first, so a rename while they are opened only moves a file to an older name
    (already seen: skipped by its identity), never to a newer one not yet looked at.
    """

    def __init__(self, path: Path) -> None:
        parts: list[_Part] = []
        seen: set[_Key] = set()
        for index in range(LOG_ROTATIONS + 1):
            opened = _open(rotated(path, index))
            if opened is None:
                continue
            fd, key, size = opened
            if key in seen:
                os.close(fd)
                continue
            seen.add(key)
            parts.append(_Part(fd, key, size))
        self.parts = parts[::-1]
        self.starts: list[int] = []
        offset = 0
        for part in self.parts:
            self.starts.append(offset)
            offset += part.size
        self.total = offset

    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` of the files as one text."""
        out = bytearray()
        for part, start in zip(self.parts, self.starts, strict=True):
            if offset >= start + part.size or len(out) >= size:
                continue
            inside = max(0, offset + len(out) - start)
            want = min(size - len(out), part.size - inside)
            if want > 0:
                out += os.pread(part.fd, want, inside)
        return bytes(out)

    def locate(self, offset: int) -> tuple[int, int]:
        """(index of the part, offset inside it) of a position; the end is the last part's end."""
        for index in range(len(self.parts) - 1, -1, -1):
            if offset >= self.starts[index]:
                return index, offset - self.starts[index]
        return 0, 0

    def close(self, keep: set[int] | None = None) -> None:
        for part in self.parts:
            if keep is None or part.fd not in keep:
                os.close(part.fd)
        self.parts = []


def _line_start_before(chain: _Chain, end: int, count: int) -> tuple[int, int]:
    """Where the ``count`` lines ending at ``end`` start, and how many were found (fewer at
    the log's start). ``end`` is just after a line feed, or the end of a partial last line."""
    found = 0
    pos = end
    # A line feed right before `end` ends the last line; it is not the start of another.
    skip_at = end - 1
    while pos > 0:
        start = max(0, pos - _BLOCK)
        block = chain.read(start, pos - start)
        index = len(block)
        while True:
            index = block.rfind(b"\n", 0, index)
            if index < 0:
                break
            if start + index == skip_at:
                continue
            found += 1
            if found == count:
                return start + index + 1, found
        pos = start
    return 0, found + (1 if end > 0 else 0)


# -- reading from the end -----------------------------------------------------------------------


@dataclass
class LogTail:
    """The last lines of a log."""

    lines: list[str]
    truncated: bool
    """The log has output before the first of ``lines``: more lines on disk, or output that
    rotation dropped."""
    end: int = 0
    """Where the lines end, in the stream's files read as one text."""


def _tail(chain: _Chain, lines: int, *, complete_only: bool) -> LogTail:
    end = chain.total
    if complete_only and end > 0:
        last = chain.read(max(0, end - 1), 1)
        if last != b"\n":
            # The line begun is handed out once it ends: start after the last whole one.
            cut = end
            while cut > 0:
                start = max(0, cut - _BLOCK)
                found = chain.read(start, cut - start).rfind(b"\n")
                if found >= 0:
                    end = start + found + 1
                    break
                cut = start
            else:
                end = 0
    if lines <= 0 or end == 0:
        before = end > 0
        return LogTail([], before, end)
    wanted = lines + KEY_CONTEXT_LINES
    start, found = _line_start_before(chain, end, wanted)
    reader = _LineReader(_Shaper())
    out: list[str] = []
    pos = start
    while pos < end:
        block = chain.read(pos, min(_BLOCK, end - pos))
        if not block:
            break
        reader.feed(block, out)
        pos += len(block)
        if len(out) > lines + KEY_CONTEXT_LINES:
            del out[: len(out) - lines]
    reader.flush(out)
    kept = out[-lines:]
    truncated = len(out) > lines or start > 0
    return LogTail(kept, truncated, end)


def tail_log(log: LogFiles, lines: int = 100) -> LogTail:
    """The last ``lines`` lines of a log (a partial last line included), read from the end.

    Reads as far back as those lines go (and a few more, for masking a private key whose start
    is above them), never the whole log.
    """
    chain = _Chain(log.path)
    try:
        tail = _tail(chain, lines, complete_only=False)
    finally:
        chain.close()
    if log.dropped_bytes():
        tail.truncated = True
    return tail


# -- following ----------------------------------------------------------------------------------

#: The note where a follower fell so far behind that output it had not read was dropped.
ROTATED_PAST = (
    "output may be missing here: the log was renamed aside and dropped before it was read"
)
#: The note where the file followed was cut shorter than what had been read of it.
TRUNCATED = "the log was truncated; reading it again from its start"


@dataclass
class LogFollower:
    """Reads a log as a worker writes it: `read_available` hands out the lines written since.

    It opens the stream's files first and reads the last ``lines`` of them (`opening`); then it
    reads on from there. Reading on holds one file open: at its end, it looks for the file
    written after it (renamed aside: the next newer one; truncated: the same file from its
    start), so a rename while it reads loses no line, however the names moved meanwhile. Only
    a reader so far behind that its file was dropped loses output, and says so in a note.
    """

    log: LogFiles
    lines: int = 100
    opening: list[LogLine] = field(init=False)
    """The last ``lines`` whole lines when it started."""
    truncated: bool = field(init=False)
    """The log had output before ``opening``'s first line."""

    def __post_init__(self) -> None:
        self._reader = _LineReader(_Shaper())
        self._fd: int | None = None
        self._key: _Key | None = None
        self._offset = 0
        self._queue: list[_Part] = []
        """Files opened at the start, newer than the one read, to be read after it."""
        self._closed = False
        chain = _Chain(self.log.path)
        try:
            tail = _tail(chain, self.lines, complete_only=True)
            self.opening = [LogLine(text) for text in tail.lines]
            self.truncated = tail.truncated or self.log.dropped_bytes() > 0
            if chain.parts:
                index, inside = chain.locate(tail.end)
                part = chain.parts[index]
                self._fd, self._key, self._offset = part.fd, part.key, inside
                self._queue = chain.parts[index + 1 :]
                chain.close(keep={p.fd for p in chain.parts[index:]})
            else:
                chain.close()
        except BaseException:
            chain.close()
            raise

    def read_available(self, max_lines: int = 2000) -> list[LogLine]:
        """The whole lines written since the last call (at most about ``max_lines``; call again
        for more), and notes of ours; empty when nothing new was written."""
        out: list[LogLine] = []
        lines: list[str] = []
        while not self._closed and len(lines) < max_lines:
            if self._fd is None and not self._start():
                break
            if self._read_block(lines):
                continue
            found = self._successor()
            if found is None:
                if not self._truncated():
                    break
                note = TRUNCATED
            else:
                fd, key, note = found
                # Renamed aside: what was written to it before the rename is read first (its
                # writer never writes to it again once it has a successor).
                while self._read_block(lines):
                    pass
                self._switch(fd, key)
                if note:
                    self._reader.drop()  # the rest of the line begun is gone with its file
            if note:
                out.extend(LogLine(text) for text in lines)
                lines = []
                out.append(LogLine(note, note=True))
        out.extend(LogLine(text) for text in lines)
        return out

    def _read_block(self, lines: list[str]) -> bool:
        assert self._fd is not None
        block = os.pread(self._fd, _BLOCK, self._offset)
        if not block:
            return False
        self._offset += len(block)
        self._reader.feed(block, lines)
        return True

    def finish(self) -> list[LogLine]:
        """Everything left to read, the line begun included (the writer has stopped)."""
        out: list[LogLine] = []
        while got := self.read_available():
            out.extend(got)
        rest: list[str] = []
        self._reader.flush(rest)
        out.extend(LogLine(text) for text in rest)
        return out

    def _start(self) -> bool:
        """Open the stream's oldest file when there was none at the start."""
        for index in range(LOG_ROTATIONS, -1, -1):
            opened = _open(rotated(self.log.path, index))
            if opened is not None:
                self._fd, self._key, _size = opened
                self._offset = 0
                return True
        return False

    def _switch(self, fd: int, key: _Key) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._key, self._offset = fd, key, 0

    def _successor(self) -> tuple[int, _Key, str] | None:
        """The file written after the one read, opened, and a note when output between the two
        was dropped; None while the file read is still the one written (or its successor is
        not made yet)."""
        if self._queue:
            part = self._queue.pop(0)
            return part.fd, part.key, ""
        for _look in range(8):
            # Newest name first, as `_Chain` opens them: a rename meanwhile moves a file to an
            # older name, where it is seen again (and skipped), never to one already looked at.
            names: list[tuple[Path, _Key]] = []
            for index in range(LOG_ROTATIONS + 1):
                path = rotated(self.log.path, index)
                try:
                    st = path.stat()
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if all(key != seen for _path, seen in names):
                    names.append((path, key))
            names.reverse()
            keys = [key for _path, key in names]
            if self._key in keys:
                position = keys.index(self._key)
                if position == len(keys) - 1:
                    return None  # still written, or renamed aside with no successor yet
                path, key = names[position + 1]
                note = ""
            elif names:
                path, key = names[0]
                note = ROTATED_PAST
            else:
                return None
            opened = _open(path)
            if opened is not None and opened[1] == key:
                return opened[0], key, note
            if opened is not None:
                os.close(opened[0])
            # Renamed again between the look and the open: look again.
        return None

    def _truncated(self) -> bool:
        """The file read was cut shorter than what was read of it: read it from its start."""
        assert self._fd is not None
        try:
            size = os.fstat(self._fd).st_size
        except OSError:
            return False
        if size >= self._offset:
            return False
        self._offset = 0
        self._reader.drop()
        return True

    def close(self) -> None:
        """Let go of every file (the follower reads nothing more)."""
        self._closed = True
        for part in self._queue:
            os.close(part.fd)
        self._queue = []
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def follow_log(
    log: LogFiles,
    *,
    lines: int = 10,
    stop: threading.Event | None = None,
    done: Callable[[], bool] | None = None,
    poll: float = FOLLOW_POLL_S,
) -> Generator[LogLine, None, None]:
    """The last ``lines`` whole lines of a log, then each line as it is written.

    The log is opened when the first line is asked for: "the last lines" are those at that
    moment.

    Args:
        stop: set to end at once (between two reads).
        done: asked whenever the log has not grown: True means nothing more will be written
            (the run stopped); the rest is read, the line begun included, and it ends.
        poll: seconds between looks at a log that has not grown.
    """
    follower = LogFollower(log, lines)
    try:
        yield from follower.opening
        while stop is None or not stop.is_set():
            got = follower.read_available()
            if got:
                yield from got
                continue
            if done is not None and done():
                yield from follower.finish()
                return
            if stop is not None:
                stop.wait(poll)
            else:
                time.sleep(poll)
    finally:
        follower.close()
