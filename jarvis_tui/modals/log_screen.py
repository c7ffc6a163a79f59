"""The selected run's worker log (``l``): its stdout or stderr, followed live while it runs,
searched, with the oldest lines let go past a bound.

One thread worker per stream shown reads the log (`core.worker_logs.LogFollower`): its last
`MAX_LINES` lines first, then, while the attempt runs, what the worker writes, posting a message
per batch; once the attempt has stopped it reads the rest and ends. Switching stream or closing
the view sets the worker's stop event, and every message carries the opening it belongs to, so
lines of a stream no longer shown are never added. The lines are masked by the engine and made
inert by the view (`LogView`).

A run with no logs (not started yet, or an unknown run) shows core's one sentence.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import Static

from core.service.logs import LogFiles, LogFollower, LogRefusal, Stream
from jarvis_tui.feed import StoreFeed
from jarvis_tui.messages import LogLinesRead, LogOpened
from jarvis_tui.modals.pane_screen import PaneScreen, pane_bindings
from jarvis_tui.safe_text import inert, shown
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.log_view import MAX_LINES, LogView

#: Lines read per message while a worker writes fast: each batch is one repaint.
BATCH_LINES = 2000
#: Seconds between looks at a log that has not grown (and at whether its attempt still runs).
POLL_S = 0.25

OTHER: dict[Stream, Stream] = {"stdout": "stderr", "stderr": "stdout"}


class LogScreen(PaneScreen):
    """One run's worker log; escape closes it (the search first, when it is open)."""

    BINDINGS: ClassVar[list[BindingType]] = pane_bindings(
        "logs", before=[Binding("t", "toggle_stream", "stdout/stderr", id="logs.stream")]
    )

    def __init__(
        self,
        feed: StoreFeed,
        run_id: str,
        *,
        stream: Stream = "stdout",
        max_lines: int | None = None,
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.feed = feed
        self.run_id = run_id
        self.stream: Stream = stream
        """The stream shown."""
        self.max_lines = MAX_LINES if max_lines is None else max_lines
        """Lines kept at most (read from the log's end when it opens; the oldest let go)."""
        self.log_files: LogFiles | None = None
        """The log shown, once found."""
        self.refusal: LogRefusal | None = None
        """Why there is no log to show, once asked."""
        self.opened = False
        """The stream's opening read has arrived."""
        self.running = False
        """The attempt runs: its log is followed."""
        self.truncated = False
        """The log had output before the lines first read."""
        self.notes: list[str] = []
        """Notes of ours about the log while following (a truncation, a gap)."""
        self.attempt: int | None = None
        """The attempt shown (kept when switching stream)."""
        self.search_needle = ""
        """The last search (n and N go on with it)."""
        self._generation = 0
        self._stop = threading.Event()
        self._note = ""

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog logs", id="logs-dialog"):
            yield Static(self._title(), classes="dialog-title", id="logs-title", markup=False)
            yield LogView(max_lines=self.max_lines, id="logs-view")
            yield FilterLine(
                placeholder="search the log (enter searches, escape closes)",
                on_change=lambda _value: None,
                id="logs-search",
            )
            yield Static("", classes="dialog-hint", id="logs-status", markup=False)

    def on_mount(self) -> None:
        self.log_view.focus()
        self._open()

    def on_unmount(self) -> None:
        self._stop.set()  # the reading thread ends at its next look

    @property
    def log_view(self) -> LogView:
        return self.query_one("#logs-view", LogView)

    @property
    def pane(self) -> LogView:
        return self.log_view

    def _title(self) -> Text:
        title = Text(f"Log of run {shown(self.run_id)}")
        log = self.log_files
        if log is not None:
            attempts = f"attempt {log.attempt}"
            if len(log.attempts) > 1:
                attempts += f" of {len(log.attempts)}"
            title.append(f"  {attempts} · {log.stream}", style="dim")
        else:
            title.append(f"  {self.stream}", style="dim")
        return title

    def _show_status(self, note: str | None = None) -> None:
        """The status line: how many lines, whether it is followed, what was let go, the keys."""
        if note is not None:
            self._note = note
        view = self.log_view
        parts: list[tuple[str, str]] = []
        if self.log_files is not None and self.opened:
            parts.append((f"{len(view.lines):,} lines", "bold"))
            parts.append(("following" if self.running else "ended", ""))
            if view.dropped:
                parts.append((f"{view.dropped:,} older dropped (jarvis logs has them)", ""))
            elif self.truncated:
                parts.append(("earlier lines not shown (jarvis logs --lines N)", ""))
        elif self.log_files is None and self.refusal is None:
            parts.append(("reading the log…", "italic"))
        if self._note:
            parts.append((self._note, ""))
        parts.append((f"t {OTHER[self.stream]} · / search · n N · esc closes", "dim"))
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        for index, (text, style) in enumerate(parts):
            if index:
                line.append(" · ", style="dim")
            line.append(text, style=style)
        self.query_one("#logs-status", Static).update(line, layout=False)

    # -- reading ------------------------------------------------------------------------------

    def _open(self) -> None:
        """Read the shown stream from its end, and follow it (a stream shown before stops)."""
        self._stop.set()
        self._stop = threading.Event()
        self._generation += 1
        self.log_files, self.refusal, self.opened, self.running = None, None, False, False
        self.truncated, self.notes = False, []
        self.log_view.clear()
        self.query_one("#logs-title", Static).update(self._title(), layout=False)
        self._show_status("")
        self._follow(self._generation, self.stream, self.attempt, self._stop)

    @work(
        thread=True, exclusive=True, group="logs-follow", exit_on_error=False,
        name="logs-follow", description="Reading the log",
    )  # fmt: skip
    def _follow(
        self, generation: int, stream: Stream, attempt: int | None, stop: threading.Event
    ) -> None:
        found = self.feed.find_log(self.run_id, attempt=attempt, stream=stream)
        if isinstance(found, LogRefusal):
            self.post_message(LogOpened(generation, None, found, [], False, False))
            return
        follower = LogFollower(found, self.max_lines)
        try:
            running = self.feed.attempt_running(found)
            self.post_message(
                LogOpened(generation, found, None, follower.opening, follower.truncated, running)
            )
            while running and not stop.is_set():
                lines = follower.read_available(BATCH_LINES)
                if lines:
                    self.post_message(LogLinesRead(generation, lines))
                    continue
                if not self.feed.attempt_running(found):
                    self.post_message(LogLinesRead(generation, follower.finish(), ended=True))
                    return
                stop.wait(POLL_S)
            if not running:
                # Stopped before it was opened: whatever it wrote after the opening's read.
                self.post_message(LogLinesRead(generation, follower.finish(), ended=True))
        finally:
            follower.close()

    @on(LogOpened)
    def _opened(self, message: LogOpened) -> None:
        if message.generation != self._generation:
            return  # a stream no longer shown
        self.log_files, self.refusal = message.log, message.refusal
        self.opened, self.running, self.truncated = True, message.running, message.truncated
        if message.log is not None:
            self.attempt = message.log.attempt
        self.query_one("#logs-title", Static).update(self._title(), layout=False)
        if message.log is None:
            self._show_refusal()
        elif not message.lines:
            self.log_view.show_message([Text("The log is empty so far.", style="dim italic")])
        self.log_view.add_lines(message.lines)
        self._show_status()

    def _show_refusal(self) -> None:
        """Why there is no log, wrapped to the view's width (the view cuts, never wraps)."""
        if self.refusal is None:
            return
        view = self.log_view
        width = max(20, view.size.width - 2)
        view.show_message(list(Text(shown(self.refusal.message)).wrap(self.app.console, width)))

    def on_resize(self, event: Resize) -> None:
        self._show_refusal()

    @on(LogLinesRead)
    def _lines_read(self, message: LogLinesRead) -> None:
        if message.generation != self._generation:
            return
        notes = [line.text for line in message.lines if line.note]
        self.notes.extend(notes)
        self.log_view.add_lines(message.lines)
        if message.ended:
            self.running = False
        self._show_status(notes[-1] if notes else None)

    # -- keys ---------------------------------------------------------------------------------

    def action_toggle_stream(self) -> None:
        """Show the other stream of the same attempt."""
        self.stream = OTHER[self.stream]
        self.log_view.needle = ""
        self.search_needle = ""
        self._open()

    def action_search(self) -> None:
        if self.log_files is None:
            return
        search = self.query_one("#logs-search", FilterLine)
        search.value = ""
        self.add_class("-searching")
        # Focus now, not after the queued keys: what is typed right behind `/` is the search.
        self.set_focus(search)

    @on(FilterLine.Submitted, "#logs-search")
    def _search_submitted(self, event: FilterLine.Submitted) -> None:
        event.stop()
        self.remove_class("-searching")
        self.set_focus(self.log_view)
        view = self.log_view
        self.search_needle = event.value.strip()
        view.needle = self.search_needle
        view.current = None
        view.refresh()
        if not self.search_needle:
            self._show_status("")
            return
        self.action_match(1)

    def action_match(self, direction: int) -> None:
        """Go to the next (1) or previous (-1) line holding the search, round the end.

        The lines kept are searched again each time: lines arrive and drop out meanwhile."""
        view = self.log_view
        needle = self.search_needle
        if not needle:
            if self.log_files is not None:
                self._show_status("/ searches the log first")
            return
        found = view.matches(needle)
        what = inert(needle, keep_lines=False)
        if not found:
            self._show_status(f"no match for {what}")
            return
        start = view.current if view.current is not None else view.dropped + view.top - direction
        if direction > 0:
            after = [number for number in found if number > start]
            target = after[0] if after else found[0]
        else:
            before = [number for number in found if number < start]
            target = before[-1] if before else found[-1]
        view.go_to(target)
        self._show_status(f"match {found.index(target) + 1:,} of {len(found):,} for {what}")
