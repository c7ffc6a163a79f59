"""A log's lines as handed out (masked, cut, inert on request), and a stream's files opened
together so a rename while they are read changes nothing (`core.worker_logs`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.contracts.secrets_scan import MASK, PEM_BEGIN, PEM_END, mask_secrets
from core.text import as_a_terminal_leaves_it, inert
from core.worker_logs.files import (
    BLOCK,
    LOG_ROTATIONS,
    MAX_KEY_LINES,
    MAX_LINE_CHARS,
    TAB_SIZE,
    WINDOW_BYTES,
    rotated,
)

# -- lines --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogLine:
    """A line of a log as handed out, or a note of ours about the log (``note``)."""

    text: str
    note: bool = False


class Shaper:
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


class LineReader:
    """Bytes in, whole lines out, holding at most `WINDOW_BYTES` of a line however long."""

    def __init__(self, shaper: Shaper) -> None:
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

FileKey = tuple[int, int]
"""A file's identity: (device, inode)."""


@dataclass
class Part:
    fd: int
    key: FileKey
    size: int


def open_file(path: Path) -> tuple[int, FileKey, int] | None:
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


class Chain:
    """A stream's files, oldest first, each opened once: their sizes as they were when opened.

    Opened newest first, so a rename while they are opened only moves a file to an older name
    (already seen: skipped by its identity), never to a newer one not yet looked at.
    """

    def __init__(self, path: Path) -> None:
        parts: list[Part] = []
        seen: set[FileKey] = set()
        for index in range(LOG_ROTATIONS + 1):
            opened = open_file(rotated(path, index))
            if opened is None:
                continue
            fd, key, size = opened
            if key in seen:
                os.close(fd)
                continue
            seen.add(key)
            parts.append(Part(fd, key, size))
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


def line_start_before(chain: Chain, end: int, count: int) -> tuple[int, int]:
    """Where the ``count`` lines ending at ``end`` start, and how many were found (fewer at
    the log's start). ``end`` is just after a line feed, or the end of a partial last line."""
    found = 0
    pos = end
    # A line feed right before `end` ends the last line; it is not the start of another.
    skip_at = end - 1
    while pos > 0:
        start = max(0, pos - BLOCK)
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
