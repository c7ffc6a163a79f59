"""Reading an agent's stdout a line at a time without ever holding more than the line cap.

An adapter refuses lines over `MAX_LINE_BYTES`, but it can only refuse what it is given: a
reader that gathers a whole 100 MB line first has already spent the memory. `read_lines` reads
at most ``limit + 1`` bytes of any line, and of a longer one hands on only those bytes (which the
adapter reports as too long) while the rest is read and dropped in small pieces.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Final

from core.agents.base import MAX_LINE_BYTES

#: How much of an over-long line's remainder is read at a time while it is skipped.
_SKIP_CHUNK: Final = 64 * 1024


def read_lines(stream: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``stream`` (with their ``\\n``), each at most ``limit + 1`` bytes long.

    The cap counts a line with its line ending, as `LineAdapter.parse_line` does. A line over
    ``limit`` is yielded as its first ``limit + 1`` bytes (so ``len(line) > limit`` says it is
    over the cap) and the rest of it is skipped. Memory stays within
    ``limit`` plus the stream's buffer, whatever the stream holds.
    """
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        yield line
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                rest = stream.readline(_SKIP_CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
