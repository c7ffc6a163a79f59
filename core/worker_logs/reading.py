"""Reading a log: from its end backwards (`tail_log`), and as it is written (`LogFollower`,
`follow_log`), across renames and a truncation (`core.worker_logs`)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path

from core.worker_logs.files import (
    BLOCK,
    FOLLOW_POLL_S,
    KEY_CONTEXT_LINES,
    LOG_ROTATIONS,
    LogFiles,
    rotated,
)
from core.worker_logs.lines import (
    Chain,
    FileKey,
    LineReader,
    LogLine,
    Part,
    Shaper,
    line_start_before,
    open_file,
)

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


def _tail(chain: Chain, lines: int, *, complete_only: bool) -> LogTail:
    end = chain.total
    if complete_only and end > 0:
        last = chain.read(max(0, end - 1), 1)
        if last != b"\n":
            # The line begun is handed out once it ends: start after the last whole one.
            cut = end
            while cut > 0:
                start = max(0, cut - BLOCK)
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
    start, found = line_start_before(chain, end, wanted)
    reader = LineReader(Shaper())
    out: list[str] = []
    pos = start
    while pos < end:
        block = chain.read(pos, min(BLOCK, end - pos))
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
    chain = Chain(log.path)
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
        self._reader = LineReader(Shaper())
        self._fd: int | None = None
        self._key: FileKey | None = None
        self._offset = 0
        self._queue: list[Part] = []
        """Files opened at the start, newer than the one read, to be read after it."""
        self._closed = False
        chain = Chain(self.log.path)
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
        block = os.pread(self._fd, BLOCK, self._offset)
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
            opened = open_file(rotated(self.log.path, index))
            if opened is not None:
                self._fd, self._key, _size = opened
                self._offset = 0
                return True
        return False

    def _switch(self, fd: int, key: FileKey) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._key, self._offset = fd, key, 0

    def _successor(self) -> tuple[int, FileKey, str] | None:
        """The file written after the one read, opened, and a note when output between the two
        was dropped; None while the file read is still the one written (or its successor is
        not made yet)."""
        if self._queue:
            part = self._queue.pop(0)
            return part.fd, part.key, ""
        for _look in range(8):
            # Newest name first, as `Chain` opens them: a rename meanwhile moves a file to an
            # older name, where it is seen again (and skipped), never to one already looked at.
            names: list[tuple[Path, FileKey]] = []
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
            opened = open_file(path)
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
