"""Reading the terminal: escape followed by a key is escape, then that key.

A terminal sends Alt+key as ESC and then the key, exactly the bytes of Escape followed by the
key; only the time between them tells the two apart (Textual waits ``ESCDELAY``, 100 ms). Over a
slow link, or with keys typed ahead, both arrive in one read, and Textual reads Alt+key: the
escape is lost and the key lands in the box being left (ESC 0 becomes `º`, which Textual maps
from a macOS Option key; ESC / becomes a bare `/`). Raising ``ESCDELAY`` cannot help, since the
bytes are already there. The console binds no Alt key, so it reads every ESC followed by a
printable character as two keys. Real escape sequences (cursor and function keys, CSI and SS3,
the kitty keyboard protocol) are untouched: ESC [ and ESC O are read on as before.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder
from collections.abc import Iterable, Iterator

from textual import events
from textual._loop import loop_last
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

ESC = "\x1b"
#: After ESC, what begins a longer sequence (CSI, SS3): the parser must read on. Escape typed
#: right before `[` or `O` still comes out as two keys, once the parser's wait is over.
SEQUENCE_STARTS = frozenset("[O")


class EscapeThenKeyParser(XTermParser):
    """Textual's terminal parser, reading ESC and a printable character as escape, then it."""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        # ``alt``: Textual reissuing ESC + character(s) it could not match, after its wait.
        # A two-character sequence: ESC + a character that Textual's table maps (ESC 0 → º,
        # ESC b → ctrl+left), found without waiting.
        if alt:
            return self._escape_then(sequence)
        if (
            len(sequence) == 2
            and sequence[0] == ESC
            and sequence[1].isprintable()
            and sequence[1] not in SEQUENCE_STARTS
        ):
            return self._escape_then(sequence[1])
        return super()._sequence_to_key_events(sequence)

    def _escape_then(self, character: str) -> Iterator[events.Key]:
        yield events.Key("escape", ESC)
        yield from super()._sequence_to_key_events(character)


#: What the console says as it quits when its input ends.
INPUT_ENDED = "jarvis: the console's input ended (its terminal is gone, or stdin is not one): quit."


class ConsoleDriver(LinuxDriver):
    """Textual's Linux/macOS driver, reading input with `EscapeThenKeyParser`."""

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events.

        Textual's own loop (`LinuxDriver.run_input_thread`, pinned textual 8.2.8), with only the
        parser changed: it builds its parser inside, so there is nothing smaller to override.
        `tests/tui/test_escape_then_key.py` notices when Textual's loop changes.
        """
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)

        fileno = self.fileno
        EVENT_READ = selectors.EVENT_READ  # noqa: N806 - as upstream

        parser = EscapeThenKeyParser(self._debug)
        feed = parser.feed
        tick = parser.tick

        utf8_decoder = getincrementaldecoder("utf-8")().decode
        decode = utf8_decoder
        read = os.read

        ended = False

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]],
            final: bool = False,
        ) -> None:
            nonlocal ended
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & EVENT_READ:
                    data = read(fileno, 1024 * 4)
                    if not data:
                        # The input is at its end (stdin from /dev/null, a terminal gone): a
                        # readable end stays readable, and upstream's loop would spin on it.
                        ended = True
                        break
                    unicode_data = decode(data, final=final and last)
                    if not unicode_data:
                        break
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(0.1))
                if ended:
                    # No key can come any more: the console quits, saying why, rather than
                    # spin a core on the end of its input until someone kills it.
                    # After a refresh: an input at its end from the start would otherwise end
                    # the console while its first screen is still being put together.
                    app = self._app
                    app.call_from_thread(app.call_after_refresh, app.exit, None, 2, INPUT_ENDED)
                    return
            selector.unregister(self.fileno)
            process_selector_events(selector.select(0.1), final=True)

        finally:
            selector.close()
            try:
                for _event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass
