"""A page of `jarvis serve` in Debian's headless chromium, and its terminal read as it looks.

Playwright drives the system's chromium by its path (it never downloads a browser of its own).
The page draws its terminal on a canvas, which holds no text: `PageTerminal` feeds the bytes
the page's websocket received, the very bytes the page's terminal draws, to a terminal emulator
(pyte) of the page's size, and reads its screen. Every wait is on an event of the page (a frame
received, a class set), with `HANG_GUARD_S` only as the deadline of a hung test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pyte
from playwright.sync_api import Browser, Page, WebSocket, sync_playwright

from tests.processes import HANG_GUARD_S, PipedProcess

CHROMIUM = shutil.which("chromium")
GUARD_MS = HANG_GUARD_S * 1000
#: Only this machine: the page's web font (on a CDN) fails at once instead of waiting on a
#: network that is not there.
_ARGS = ["--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"]


@contextmanager
def chromium() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def served(
    workspace: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[PipedProcess, str]]:
    """``jarvis serve`` on ``workspace`` (no host) and the address it says to open; it leads
    its own process group, as a command started at a terminal does (Ctrl-C reaches it all)."""
    argv = [sys.executable, "-m", "jarvis_cli", "serve", "--workspace", str(workspace)]
    with PipedProcess([*argv, "--no-host", *args], env=env, start_new_session=True) as server:
        try:
            out = server.wait_for_stdout(b"Open: http", "the address to open")
            url = re.search(r"Open: (\S+)", out)
            assert url is not None, out
            yield server, url.group(1)
        finally:
            # A test that failed half way leaves no console behind: they are in its group.
            with suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)


class PageTerminal:
    """What the page's terminal shows, rebuilt from what its websocket received."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.websocket: WebSocket | None = None
        self.screen = pyte.Screen(80, 24)
        self._stream = pyte.ByteStream(self.screen)
        # Listening from the websocket's first event: a frame missed would leave the screen
        # wrong, every later frame drawing only what changed.
        page.on("websocket", self._opened)

    @classmethod
    def open(cls, page: Page, url: str) -> PageTerminal:
        terminal = cls(page)
        page.goto(url, wait_until="domcontentloaded", timeout=GUARD_MS)
        page.wait_for_selector("body.-first-byte", state="attached", timeout=GUARD_MS)
        # Keys go to the terminal once it has the focus, as a click gives it: on the header's
        # first cell, which takes no focus, so the run table keeps it (a click on the progress
        # stream would focus the stream, and / would search it instead of filtering the table).
        page.click("#terminal", position={"x": 2, "y": 2}, timeout=GUARD_MS)
        return terminal

    def _opened(self, websocket: WebSocket) -> None:
        query = parse_qs(urlsplit(websocket.url).query)
        self.screen.resize(int(query["height"][0]), int(query["width"][0]))
        self.websocket = websocket
        websocket.on("framereceived", self._received)
        websocket.on("framesent", self._sent)

    def _received(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            self._stream.feed(payload)

    def _sent(self, payload: str | bytes) -> None:
        # The page tells the console its size when it fits the window: draw at that size too.
        message = json.loads(payload) if isinstance(payload, str) else None
        if isinstance(message, list) and message and message[0] == "resize":
            self.screen.resize(message[1]["height"], message[1]["width"])

    @property
    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait_for(self, shown: Callable[[str], bool], what: str) -> str:
        """The screen, once ``shown`` holds for it: checked now, then on each frame received."""
        if not shown(self.text):
            assert self.websocket is not None, "the page opened no websocket"
            try:
                self.websocket.wait_for_event(
                    "framereceived", predicate=lambda _: shown(self.text), timeout=GUARD_MS
                )
            except Exception as exc:
                raise AssertionError(f"{what} never showed:\n{self.text}") from exc
        return self.text

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)
