"""Escape followed at once by a key is escape, then that key.

A terminal sends Alt+key as ESC and the key, exactly what Escape then the key sends; only the
time between them tells them apart, and over a slow link the two arrive in one read. Textual
then reads Alt+key (or, for ESC 0 to ESC 9, an Option character such as `º`), and the escape is
lost. The console binds no Alt key, so its input reader always reads the pair as two keys.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual import events
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from jarvis_tui.app import JarvisApp
from jarvis_tui.key_input import ConsoleDriver, EscapeThenKeyParser


def keys_of(*chunks: str) -> list[tuple[str, str | None]]:
    """The keys the console's parser reads from ``chunks`` (each one read), then the end."""
    parser = EscapeThenKeyParser()
    read: list[Message] = []
    for chunk in (*chunks, ""):
        read.extend(parser.feed(chunk))
    return [(key.key, key.character) for key in read if isinstance(key, events.Key)]


@pytest.mark.parametrize(
    ("sent", "keys"),
    [
        ("\x1b0", [("escape", "\x1b"), ("0", "0")]),  # Textual: º
        ("\x1b1", [("escape", "\x1b"), ("1", "1")]),  # Textual: ¡
        ("\x1ba", [("escape", "\x1b"), ("a", "a")]),  # Textual: alt+a
        ("\x1bA", [("escape", "\x1b"), ("A", "A")]),  # Textual: alt+shift+a
        ("\x1b/", [("escape", "\x1b"), ("slash", "/")]),  # Textual: / alone, escape lost
        ("\x1bb", [("escape", "\x1b"), ("b", "b")]),  # Textual: ctrl+left
        ("\x1bok", [("escape", "\x1b"), ("o", "o"), ("k", "k")]),
        # The starts of longer sequences: read on, then two keys when nothing more comes.
        ("\x1b[", [("escape", "\x1b"), ("left_square_bracket", "[")]),
        ("\x1bO", [("escape", "\x1b"), ("O", "O")]),
    ],
)
def test_escape_then_a_printable_key_in_one_read_is_two_keys(
    sent: str, keys: list[tuple[str, str | None]]
) -> None:
    assert keys_of(sent) == keys


@pytest.mark.parametrize(
    ("sent", "key"),
    [
        ("\x1b[A", "up"),
        ("\x1bOA", "up"),
        ("\x1b[5~", "pageup"),
        ("\x1b[1;5C", "ctrl+right"),
        ("\x1b[27u", "escape"),  # the kitty keyboard protocol: unambiguous already
        ("\x1b", "escape"),
    ],
)
def test_real_escape_sequences_are_still_one_key(sent: str, key: str) -> None:
    assert [name for name, _character in keys_of(sent)] == [key]


def test_escape_twice_then_a_key_is_three_keys() -> None:
    assert keys_of("\x1b\x1bq") == [("escape", "\x1b"), ("escape", "\x1b"), ("q", "q")]


class RecordingDriver(ConsoleDriver):
    """The console's driver reading a pipe, recording what it would send to the app."""

    def __init__(self, app: JarvisApp, fileno: int) -> None:
        super().__init__(app)
        self.fileno = fileno
        self.received: list[Message] = []

    def process_message(self, message: Message) -> None:
        self.received.append(message)


@pytest.fixture
def keep_stop_signals() -> Iterator[None]:
    """The driver installs handlers for ctrl+z; the test process keeps its own."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTSTP, signal.SIGCONT)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.mark.usefixtures("keep_stop_signals")
async def test_the_console_reads_its_terminal_with_that_parser(tmp_path: Path) -> None:
    app = JarvisApp(tmp_path / "jarvis.db", live=False)
    assert app.driver_class is ConsoleDriver or os.environ.get("TEXTUAL_DRIVER")
    read_end, write_end = os.pipe()
    driver = RecordingDriver(app, read_end)
    reader = threading.Thread(target=driver.run_input_thread, daemon=True)
    reader.start()
    try:
        os.write(write_end, b"\x1b0")  # escape, then 0 (every state), in one read
        deadline = time.monotonic() + 10
        while len(driver.received) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        driver.exit_event.set()
        reader.join(timeout=10)
        os.close(write_end)
        os.close(read_end)
    keys = [m.key for m in driver.received if isinstance(m, events.Key)]
    assert keys == ["escape", "0"]


#: `ConsoleDriver.run_input_thread` is Textual's loop with another parser; when Textual's loop
#: changes (an upgrade of the pinned version), compare the two and record the new digest.
TEXTUAL_INPUT_LOOP = "d796af6d69db337d6fa6bd463984f7d17188d991dbb22f60efb92a8a9619507c"


def test_the_copied_input_loop_matches_the_pinned_textual() -> None:
    source = inspect.getsource(LinuxDriver.run_input_thread)
    assert hashlib.sha256(source.encode()).hexdigest() == TEXTUAL_INPUT_LOOP
