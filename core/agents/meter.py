"""A usage meter: a forwarder on 127.0.0.1 in front of an OpenAI-compatible model service,
counting the tokens every answer reports.

An agent reports the usage of the calls it shows, not always of every call it makes: aider
prints ``Tokens: …`` for its replies (rounded: ``1.2k``), never for the call that writes its
commit messages or the one that summarises a restored chat. Pointed at the meter instead of the
service, the agent's every call passes through it unchanged, and the ``usage`` of each answer
(``prompt_tokens`` and ``completion_tokens`` of a JSON body, or of the last streamed chunk that
carries one) is added to the meter's totals, exact.

The meter only forwards: the agent's own headers (its key among them) go to the service as
they came, and nothing is kept but the totals. It reads at most `MAX_PARSED_BYTES` of an answer
to find its usage; the rest is still forwarded. It is meant for one attempt of one run: the
runner starts it before the agent's first turn and stops it after the last.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.client import HTTPResponse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from core.agents.events import Usage

#: How much of an answer is read for its usage (a JSON body; a streamed line).
MAX_PARSED_BYTES: Final = 4 * 1024 * 1024
#: The longest request body forwarded.
MAX_REQUEST_BYTES: Final = 64 * 1024 * 1024
#: How long an answer may take to start and between its chunks: a model's slowest answer.
UPSTREAM_TIMEOUT_S: Final = 900.0
_CHUNK: Final = 64 * 1024
_HOP_BY_HOP: Final = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
})  # fmt: skip


def usage_of(doc: object) -> tuple[int, int] | None:
    """``(prompt_tokens, completion_tokens)`` of a chat completion (or chunk), if it says."""
    usage = doc.get("usage") if isinstance(doc, dict) else None
    if not isinstance(usage, dict):
        return None
    counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    if not any(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        return None
    tokens_in, tokens_out = (c if isinstance(c, int) and c >= 0 else 0 for c in counts)
    return tokens_in, tokens_out


class _Reading:
    """Finds the usage of one answer as its bytes pass by."""

    def __init__(self, streamed: bool) -> None:
        self.streamed = streamed
        self.buffer = bytearray()
        self.overflow = False
        self.found: tuple[int, int] | None = None

    def feed(self, data: bytes) -> None:
        if self.overflow:
            if not self.streamed or b"\n" not in data:
                return
            # The overlong streamed line ended: read the lines after it.
            self.overflow = False
            data = data[data.index(b"\n") + 1 :]
        self.buffer += data
        if self.streamed:
            *lines, rest = bytes(self.buffer).split(b"\n")
            self.buffer = bytearray(rest)
            for line in lines:
                self._line(line.strip())
        if len(self.buffer) > MAX_PARSED_BYTES:
            self.buffer.clear()
            self.overflow = True

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if b'"usage"' not in payload:
            return
        try:
            found = usage_of(json.loads(payload))
        except ValueError:
            return
        if found is not None:
            self.found = found  # a running figure, or the one last chunk: the last one holds

    def end(self) -> tuple[int, int] | None:
        if self.streamed:
            self._line(bytes(self.buffer).strip())
        elif not self.overflow:
            try:
                self.found = usage_of(json.loads(bytes(self.buffer)))
            except ValueError:
                pass
        return self.found


class UsageMeter:
    """Forwards ``http://127.0.0.1:PORT/PATH`` to ``upstream + PATH`` and counts the usage."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self._lock = threading.Lock()
        self._usage = Usage()
        self._calls = 0
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="usage-meter")  # fmt: skip
        self._thread.start()

    @property
    def url(self) -> str:
        """What to give the agent as its model service's base URL."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def usage(self) -> Usage:
        """Every answer's tokens so far; no cost (the meter knows no prices)."""
        with self._lock:
            return self._usage

    @property
    def calls(self) -> int:
        """How many answers reported a usage."""
        with self._lock:
            return self._calls

    def count(self, found: tuple[int, int]) -> None:
        with self._lock:
            self._usage = self._usage.plus(Usage(found[0], found[1]))
            self._calls += 1

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # the agent's calls are its own business; only their usage is kept

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self._fail(413, f"a request over {MAX_REQUEST_BYTES:,} bytes")
            return
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        request = urllib.request.Request(
            self.server.meter.upstream + self.path, data=body, headers=headers,
            method=self.command,
        )  # fmt: skip
        try:
            answer: HTTPResponse = urllib.request.urlopen(request, timeout=UPSTREAM_TIMEOUT_S)
        except urllib.error.HTTPError as refused:
            answer = refused  # type: ignore[assignment]  # an answer all the same: pass it on
        except (OSError, ValueError) as exc:
            self._fail(502, f"the model service did not answer: {exc}")
            return
        with answer:
            self._relay(answer)

    def _relay(self, answer: HTTPResponse) -> None:
        kind = answer.headers.get("Content-Type") or ""
        reading = _Reading(streamed="event-stream" in kind)
        self.send_response(answer.status)
        for key, value in answer.headers.items():
            if key.lower() not in _HOP_BY_HOP:
                self.send_header(key, value)
        # Streamed as it comes, the end of the body marked by closing the connection.
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        while chunk := answer.read1(_CHUNK):
            reading.feed(chunk)
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:
                return  # the agent went away: what it did not read it did not use
        found = reading.end()
        if found is not None and answer.status < 400:
            self.server.meter.count(found)

    def _fail(self, status: int, why: str) -> None:
        data = json.dumps({"error": {"message": f"jarvis usage meter: {why}"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, meter: UsageMeter) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.meter = meter
