"""The NanoClaw runner's stdout: output frames among log lines, decoded as the stream arrives.

A frame is ``---NANOCLAW_OUTPUT_START---``, one line of JSON, ``---NANOCLAW_OUTPUT_END---``
(NanoClaw's ``container-runner.ts`` reads them the same way, at any position in the stream).
The JSON is ``{"status": "success" | "error", "result": string | null, "newSessionId"?,
"error"?, …}``. A run may print several frames: one per answer, a session update with a null
result, an error frame before it exits.

What the host takes from them (as NanoClaw's host does):

- the **result text**: every non-null ``result`` (JSON of it when it is not a string), each
  followed by a newline, in order. The completion block is looked for in it, never in the raw
  stdout, where it is JSON-escaped;
- the **error**: a frame whose ``status`` is ``error`` carries its ``error`` text;
- the last ``newSessionId``.

Everything outside frames is log. Nothing here interprets the text: escape sequences in a result
stay characters of the result, made inert wherever they are shown.

Bounds: a frame's body over `FRAME_LIMIT` bytes without its end marker *overflows* (NanoClaw
kills such a runner; the host does the same); the decoder then skips to the next end marker
without holding what it skips. The result text keeps its last `RESULTS_LIMIT` characters.
A body that is not a JSON object is counted as a problem and skipped; when it holds a start
marker (the end of an earlier frame was lost), the frame after that marker is read.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

START = b"---NANOCLAW_OUTPUT_START---"
END = b"---NANOCLAW_OUTPUT_END---"
#: NanoClaw's ``CONTAINER_PARSE_BUFFER_LIMIT``: a frame still open past this is abandoned.
FRAME_LIMIT = 1024 * 1024
#: How much result text is kept (the completion block comes at the end).
RESULTS_LIMIT = 4 * 1024 * 1024
UNTERMINATED = "the output ended inside a frame (a start marker without its end)"
#: How many problems are described (the rest are only counted).
PROBLEMS_KEPT = 20


@dataclass(frozen=True, slots=True)
class Decoded:
    """What the frames said, so far or in all."""

    text: str
    """Every non-null result followed by a newline, in order (its last `RESULTS_LIMIT` chars)."""
    frames: int
    """Frames read (well-formed or not)."""
    results: int
    """Frames with a non-null result."""
    error: str | None
    """The ``error`` of the last frame whose status was ``error`` (a sentence when it had none)."""
    session_id: str | None
    """The last ``newSessionId``."""
    problems: tuple[str, ...] = ()
    """What could not be read, in order (at most `PROBLEMS_KEPT`)."""
    problem_count: int = 0
    overflowed: bool = False
    """A frame passed `FRAME_LIMIT` without its end marker."""
    unterminated: bool = False
    """The stream ended inside a frame (a start marker without its end)."""


@dataclass
class _Results:
    limit: int
    parts: deque[str] = field(default_factory=deque)
    size: int = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        while self.size > self.limit and len(self.parts) > 1:
            self.size -= len(self.parts.popleft())
        if self.size > self.limit:  # one part alone is too long: keep its end
            only = self.parts.pop()[-self.limit :]
            self.parts.append(only)
            self.size = len(only)

    def text(self) -> str:
        return "".join(self.parts)


class FrameDecoder:
    """Feed it stdout as it arrives (`feed`), then `finish`; `decoded` at any time.

    Safe to feed from one thread while another reads `decoded` or the flags.
    """

    def __init__(self, *, frame_limit: int = FRAME_LIMIT, results_limit: int = RESULTS_LIMIT):
        self._frame_limit = frame_limit
        self._results = _Results(results_limit)
        self._buf = bytearray()
        self._inside = False
        self._skipping = False
        self._scanned = 0
        """How much of ``_buf`` is known to hold no end marker (inside a frame)."""
        self._lock = threading.Lock()
        self._frames = 0
        self._result_count = 0
        self._error: str | None = None
        self._session: str | None = None
        self._problems: list[str] = []
        self._problem_count = 0
        self._unterminated = False
        self.overflowed = False
        """Read without the lock by the host's loop: a frame passed the limit."""
        self.results_seen = 0
        """Read without the lock by the host's loop: frames with a non-null result so far."""

    def feed(self, data: bytes) -> None:
        with self._lock:
            self._buf += data
            self._scan()

    def finish(self) -> Decoded:
        """The end of the stream: a frame still open is reported, and dropped."""
        with self._lock:
            if self._inside:
                self._inside = False
                self._unterminated = True
                if not self._skipping:
                    self._problem(UNTERMINATED)
                self._skipping = False
            self._buf.clear()
            return self._decoded()

    def decoded(self) -> Decoded:
        with self._lock:
            return self._decoded()

    # -- inside the lock ----------------------------------------------------------------------

    def _decoded(self) -> Decoded:
        return Decoded(
            text=self._results.text(),
            frames=self._frames,
            results=self._result_count,
            error=self._error,
            session_id=self._session,
            problems=tuple(self._problems),
            problem_count=self._problem_count,
            overflowed=self.overflowed,
            unterminated=self._unterminated,
        )

    def _scan(self) -> None:
        while True:
            if not self._inside:
                at = self._buf.find(START)
                if at < 0:
                    # Keep what could be the beginning of a marker cut by the chunk's end.
                    del self._buf[: max(0, len(self._buf) - (len(START) - 1))]
                    return
                del self._buf[: at + len(START)]
                self._inside = True
                self._scanned = 0
                continue
            at = self._buf.find(END, max(0, self._scanned - (len(END) - 1)))
            if at < 0:
                self._scanned = len(self._buf)
                if self._skipping:
                    del self._buf[: max(0, len(self._buf) - (len(END) - 1))]
                    self._scanned = len(self._buf)
                elif len(self._buf) > self._frame_limit:
                    self.overflowed = True
                    self._skipping = True
                    self._frames += 1
                    self._problem(
                        f"a frame passed {self._frame_limit:,} bytes without its end marker"
                    )
                    del self._buf[: max(0, len(self._buf) - (len(END) - 1))]
                    self._scanned = len(self._buf)
                return
            body = bytes(self._buf[:at])
            del self._buf[: at + len(END)]
            self._inside = False
            if self._skipping:
                self._skipping = False
            else:
                self._frames += 1
                self._take(body)

    def _take(self, body: bytes) -> None:
        doc = _object(body)
        if doc is None:
            # An earlier frame's end may have been lost: read the last frame that starts here.
            at = body.rfind(START)
            if at >= 0:
                self._problem("a frame had no end marker before the next frame began")
                self._frames += 1
                doc = _object(body[at + len(START) :])
            if doc is None:
                self._problem("a frame's body is not a JSON object")
                return
        result = doc.get("result")
        if result is not None:
            text = result if isinstance(result, str) else _js_json(result)
            self._results.add(text + "\n")
            self._result_count += 1
            self.results_seen = self._result_count
        session = doc.get("newSessionId")
        if isinstance(session, str) and session:
            self._session = session
        if doc.get("status") == "error":
            error = doc.get("error")
            self._error = (
                error
                if isinstance(error, str) and error.strip()
                else "the runner reported an error without saying which"
            )

    def _problem(self, text: str) -> None:
        self._problem_count += 1
        if len(self._problems) < PROBLEMS_KEPT:
            self._problems.append(text)


def _object(body: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(body.decode("utf-8", "replace").strip())
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _js_json(value: Any) -> str:
    """``JSON.stringify(value)``, as NanoClaw's host turns a non-string result into text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def decode(output: bytes) -> Decoded:
    """Decode a whole stdout at once."""
    decoder = FrameDecoder()
    decoder.feed(output)
    return decoder.finish()
