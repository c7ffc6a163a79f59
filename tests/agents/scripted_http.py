"""What the scripted model servers share: a handler that reads and writes JSON, and serving
one on 127.0.0.1 for the length of a ``with`` block (`tests.agents.scripted_model`,
`scripted_responses`, `scripted_chat`: one protocol each)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


class Releasing(Protocol):
    """A server's script: it lets every held request go when the server stops."""

    def release_all(self) -> None: ...


class ScriptServer(ThreadingHTTPServer):
    """A server on a free port of 127.0.0.1 whose handlers answer from ``script``."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], script: Any) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.script = script


class JsonHandler(BaseHTTPRequestHandler):
    """Reads a request's JSON body, writes a JSON answer; prints nothing."""

    server: ScriptServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # the requests are kept in the script, not printed

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            doc = json.loads(raw) if raw else {}
        except ValueError:
            doc = {"_raw": raw.decode("utf-8", "replace")}
        return doc if isinstance(doc, dict) else {"_doc": doc}

    def _json(self, status: int, doc: object) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serving(handler: type[JsonHandler], script: Releasing) -> Iterator[int]:
    """``handler`` served on 127.0.0.1 until the block ends; yields the port. Held requests are
    released before the server stops, so none keeps a thread waiting."""
    server = ScriptServer(handler, script)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        script.release_all()
        server.shutdown()
        server.server_close()
        thread.join()
