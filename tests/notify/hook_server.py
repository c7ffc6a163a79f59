"""A real webhook receiver for the tests: an HTTP server on 127.0.0.1 in a thread, answering
each POST as the test tells it (200, 500, closing the connection unanswered, or holding it
until released), and keeping every body it was sent."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.processes import HANG_GUARD_S

#: What the server does with a POST: an HTTP status, ``close`` (the connection closed with no
#: answer) or ``hold`` (no answer until `HookServer.release`, then 200).
Answer = int | str


class HookServer:
    def __init__(self, answers: list[Answer], then: Answer = 200) -> None:
        """``answers`` for the first POSTs in order, ``then`` for every later one."""
        self.answers = list(answers)
        self.then = then
        self.bodies: list[dict[str, Any]] = []
        self.answered = 0
        self.released = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size))
                with server.lock:
                    server.bodies.append(body)
                    answer = server.answers.pop(0) if server.answers else server.then
                if answer == "close":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if answer == "hold":
                    server.released.wait(HANG_GUARD_S)
                    answer = 200
                self.send_response(int(answer))
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
                with server.lock:
                    server.answered += 1

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook/s3cr3t"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def posts(self) -> int:
        with self.lock:
            return len(self.bodies)

    def texts(self) -> list[str]:
        with self.lock:
            return [body["text"] for body in self.bodies]

    def release(self) -> None:
        self.released.set()


@contextmanager
def hook_server(answers: list[Answer] | None = None, then: Answer = 200) -> Iterator[HookServer]:
    server = HookServer(answers or [], then)
    server.thread.start()
    try:
        yield server
    finally:
        server.release()
        server.httpd.shutdown()
        server.httpd.server_close()


def refused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"
