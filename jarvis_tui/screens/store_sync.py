"""The main screen's reading of the store: when to read, what a read says, and reads that fail.

Reading: a thread worker asks `StoreFeed` what changed since the last journal position and posts
`StoreChanged`; the next read is armed with `set_timer` only after the previous one finished.
Reading goes on behind every dialog: the help, the palette and the run's screens leave the
header, the counts and the window live (a console that paused behind them froze for as long
as help was open, and the palette's "go to run" missed runs created meanwhile); an action's
dialog decides on the version the operator saw, which the engine checks. `StoreSync` keeps
what the reads say about the workspace (the journal position, the host, the counts, the spend,
the time of the last read) and hands the rows and the journal entries to the view
(`StoreView`, the screen), which applies them. A read that fails is said once, or ends the
console when the store will not come back.

Where Textual's parts live: a worker, a timer and a message handler belong to a DOM node, and
these belong to the screen. `StoreSync` is a plain class that drives no screen: each read it
decides on is returned as a `Work` (`jarvis_tui.screens.effects`) that the screen starts as its
own worker, with the metadata `@work` would give it, so it stops with the screen, its
`Worker.StateChanged` reaches the screen's one funnel, and what it posts is handled where the
view is; what a failed read should say comes back as a `Note` or a `Leave`. Reads it starts on
its own (the poll's timer, a change announced) go to the screen through the ``do`` it was given.
The screen's `@on` handlers hand `StoreChanged` and the store workers' outcomes here;
`RunViewReceived` and `StreamHistoryReceived` carry nothing to keep, so the screen applies them
itself.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from rich.text import Text
from textual.timer import Timer
from textual.worker import WorkerState

from core.service.change_feed import FeedListener, feed_listener
from core.service.changes import ChangeListener
from core.service.errors import LASTING, as_store_error
from jarvis_tui.feed import FeedRead, HostLine, StoreFeed
from jarvis_tui.messages import RunViewReceived, StoreChanged, StreamHistoryReceived, WindowRead
from jarvis_tui.run_model import WindowAsk
from jarvis_tui.safe_text import inert
from jarvis_tui.screens.effects import Effect, Effects, Leave, Note, Post, Work
from jarvis_tui.widgets.progress_stream import MAX_LINES

#: The selected run's newest journal entries loaded when it is selected.
RUN_JOURNAL = 200
#: Allocations between young collections, and a full-collection threshold never reached:
#: full collections run once a minute instead (see `StoreSync.store_changed`).
GC_YOUNG = 10_000
GC_FULL_NEVER = 1_000_000
#: The name of a change of view's read (the screen starts the next when one ends).
VIEW_READ = "read-view-window"
#: The worker group of the reads of what changed: their outcomes are this controller's.
STORE_GROUP = "store"
#: Between reads of a store that announces its changes (PostgreSQL): the safety net's pace.
SAFETY_POLL_S = 5.0
#: Between reads of a console on the host's feed with nothing announced: each is answered by
#: the feed's last tick (no store read) and keeps the header's read time going.
FEED_POLL_S = 1.0
#: How long the listener waits at a time (how soon it notices the console is closing).
LISTEN_WAIT_S = 0.5
#: The least time between the starts of two reads woken by announced changes: a change on a
#: quiet workspace is shown at once; in a stream, a change of state, a steer or a gate within
#: half a second, and runs' progress every two seconds. Painting a busy table is most of what
#: a console costs, and fifty consoles on a two-core machine must leave it to the host.
WAKE_GAP_S = 0.5
#: The soonest a read is armed for: a timer needs a delay above 0 s (`_next_poll_s` may be 0).
SOONEST_READ_S = 0.001
PROGRESS_GAP_S = 2.0


class StoreView(Protocol):
    """What `StoreSync` hands its reads to: the main screen."""

    def window_ask(self) -> WindowAsk:
        """What a read of the window asks for now: the view, where the window stands."""

    def show_rows(self, read: FeedRead) -> str | None:
        """Put ``read``'s rows in the run model and the table, and show the spend column if
        `StoreSync.burn` says any agent spent.

        Returns:
            The run on show before the rows changed.
        """

    def follow_read(self, read: FeedRead, *, first: bool, before: str | None) -> None:
        """Everything else ``read`` changes on screen: toasts, the view line, the stream, the
        panels of the run on show (``before``: the run on show before the rows changed)."""

    def show_status(self) -> None:
        """Repaint the header with the counts, the host, the spend and the read time."""

    def raise_attention_toast(self) -> None:
        """Raise the needs-a-human toast that is due, if any."""

    def set_timer(self, delay: float, callback: Callable[[], object]) -> Timer:
        """Call ``callback`` after ``delay`` seconds, on the screen's loop."""

    def from_thread(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` on the screen's loop from another thread.

        Raises:
            RuntimeError: the console is gone.
        """


class StoreSync:
    """Reads the store for one screen, and keeps what the reads said.

    Args:
        view: What the reads are handed to, and whose timer polls (the main screen).
        do: Carries out what a read started by a timer or a change asks for (the screen's).
        db_path: The workspace's ``jarvis.db`` (its folder is the workspace).
        store_at: The store when it is not that file (`core.store.location`).
        live: Poll for changes (a console that only shows a store reads it once).
        poll_interval: Seconds from the end of one read to the start of the next.
        clock: The console's clock (the header's read time).
        tune_gc: Tune the garbage collector for the console (it owns its process).
    """

    def __init__(
        self,
        view: StoreView,
        do: Callable[[Effects], None],
        db_path: Path,
        *,
        store_at: str | Path | None = None,
        live: bool,
        poll_interval: float,
        clock: Callable[[], datetime],
        tune_gc: bool = False,
    ) -> None:
        self._view = view
        self._do = do
        self.feed = StoreFeed(db_path, store_at)
        """The reads, through one long-lived connection (the diff and the log read through it)."""
        self.live = live
        self.poll_interval = poll_interval
        self.clock = clock
        self.tune_gc = tune_gc
        self.seen_seq: int | None = None
        """The journal position the screen reflects (None before the first read)."""
        self.host: int | None | bool = False
        """The host's pid, None when no host holds the workspace, False before the first read."""
        self.counts: dict[str, int] = {}
        """Runs per state, as last read."""
        self.burn: dict[str, Any] | None = None
        """What the fleet's agents reported spending, for the header."""
        self.read_at = ""
        """When a read last went through (the header's read time)."""
        self._poll_timer: Timer | None = None
        self._read_problem: str | None = None
        """The store fault last said (a toast once per fault, not once per poll)."""
        self._read_seq: int | None = None
        """The journal position the last finished read reached (ahead of ``seen_seq`` until its
        message is handled)."""
        self._read_host: int | None = None
        self.hosts: tuple[HostLine, ...] = ()
        """The store's live and lost hosts, as last read (the header's hosts line)."""
        self.listener: ChangeListener = ChangeListener()
        """Wakes the next read when a change is announced: the host's change feed, which also
        says what changed (`core.service.change_feed`), else PostgreSQL's NOTIFY; the poll,
        slower then, is the safety net."""
        if live:
            self.listener = feed_listener(self.feed.root, self.feed.location)
            if isinstance(self.listener, FeedListener):
                self.feed.fed = self.listener
        self._listening: threading.Thread | None = None
        self._woken_gap: float | None = None
        """A change was announced while a read was in flight: the next read's gap (`_wake`)."""
        self._read_started = 0.0
        """When the last read started (`WAKE_GAP_S` runs from it)."""
        self._woke_due: float | None = None
        """When the read an announced change armed the poll's timer for is due."""
        self._pending = 0
        """What the listener asked for that has not started yet (0 nothing, 1 a read for
        progress, 2 a read for more): a feed's messages make one call onto the screen's loop
        per read, not one each. Set on the listener's thread, cleared when a read starts."""

    # -- reading ------------------------------------------------------------------------------

    def read_store(self) -> Work:
        """Read what changed now (the window's first page on the first read)."""
        return Work(
            partial(self._read, self._read_seq, self._read_host, self._view.window_ask()),
            name="read-store",
            group=STORE_GROUP,
            description="Read what changed in the store",
            exclusive=True,
        )

    def read_view(self, run_id: str) -> Work:
        """Read ``run_id``'s panels; they arrive as `RunViewReceived`."""
        return Work(
            partial(self._read_view, run_id),
            name="read-run",
            group="view",
            description="Read the selected run",
            exclusive=True,
        )

    def read_all_stream(self) -> Work:
        """Read every run's newest journal entries; they arrive as `StreamHistoryReceived`."""
        return Work(
            self._read_all_stream,
            name="read-stream",
            group="view",
            description="Read every run's newest journal entries",
            exclusive=True,
        )

    def read_window(self, ask: WindowAsk, purpose: str, **where: Any) -> Work:
        """Read a page of ``ask``'s view (``where``: `core.service.window.read_window`'s
        ``after``, ``before``, ``from_end``, ``around``, ``offset``); it arrives as
        `WindowRead` with ``purpose`` (``view``, ``after``, ``before``, ``first``, ``last``)."""
        view = purpose == "view"
        return Work(
            partial(self._read_window, ask, purpose, where),
            name=VIEW_READ if view else "read-window",
            # A view's reads are one at a time, the next asked when one ends (the screen
            # coalesces them); a page at an end replaces the one before it.
            group="view-window" if view else "window",
            description="Read the runs in view",
            exclusive=not view,
        )

    def _read_window(self, ask: WindowAsk, purpose: str, where: dict[str, Any], post: Post) -> None:
        # In the worker's thread.
        page = self.feed.window(ask.view, limit=ask.size, **where)
        post(WindowRead(page, ask, purpose))

    def _read(self, since: int | None, last_host: int | None, ask: WindowAsk, post: Post) -> None:
        # In the worker's thread.
        read = self.feed.read(since, ask, last_host=last_host)
        if read is not None:
            # Recorded here, not when the message is handled: the next poll may start first.
            self._read_seq, self._read_host = read.last_seq, read.host_pid
            post(StoreChanged(read))

    def _read_view(self, run_id: str, post: Post) -> None:
        # In the worker's thread.
        post(RunViewReceived(self.feed.run_view(run_id, journal_limit=RUN_JOURNAL)))

    def _read_all_stream(self, post: Post) -> None:
        # In the worker's thread.
        post(StreamHistoryReceived(self.feed.all_journal(limit=MAX_LINES)))

    # -- polling ------------------------------------------------------------------------------

    def _poll(self) -> None:
        self._poll_timer = None
        self._read_started = time.monotonic()
        # From here on a change announced is after what this read may see: it wakes again.
        self._pending = 0
        seq = self._read_seq
        if seq is not None and seq == self.seen_seq and self.feed.unchanged(seq, self._read_host):
            # The feed says nothing changed: the read is over before it began, on this loop
            # (a worker's thread and its messages each second were most of an idle console).
            self._do(self.read_ended(WorkerState.SUCCESS, None))
            return
        self._do([self.read_store()])

    def resume(self) -> None:
        """The screen is back on top: poll again, if polling ever stopped."""
        if self.live and self._poll_timer is None and self.seen_seq is not None:
            self._poll()

    def close(self) -> None:
        """Close the feed's connection (the screen is leaving, its workers cancelled)."""
        self.listener.close()
        self.feed.close()

    # -- waking on a change -------------------------------------------------------------------

    def _listen(self) -> None:
        # Its own thread (not a worker: it outlives reads, and a worker waiting here would
        # hold its group). Ends within LISTEN_WAIT_S of `close`.
        heard = 0
        while not self.listener.closed:
            seq = self.listener.wait(LISTEN_WAIT_S)
            # A LISTEN that just took effect: commits since the last read that came before it
            # were announced to nobody, so read once now (the first LISTEN follows the first
            # read; a reconnection follows a drop).
            listened, heard = self.listener.listens != heard, self.listener.listens
            stale = seq is None or (self._read_seq is not None and seq <= self._read_seq)
            if stale and not listened:
                continue
            urgent = listened or self._urgent()
            level = 2 if urgent else 1
            if self._pending >= level:
                continue  # a read is already due that will take it in, as soon
            self._pending = level
            try:
                self._view.from_thread(partial(self._wake, urgent))
            except RuntimeError:
                return  # the app is gone

    def _urgent(self) -> bool:
        """Whether what was announced since the last read is more than runs' progress (a
        state, a steer, a gate: what an operator may have to act on)."""
        fed = self.feed.fed
        return fed is None or self._read_seq is None or fed.urgent_after(self._read_seq)

    def _wake(self, urgent: bool = True) -> None:
        """A change was announced: read once its gap since the last read's start has passed
        (`WAKE_GAP_S`, or `PROGRESS_GAP_S` for progress alone): at once on a quiet workspace,
        right after the read in flight if there is one."""
        gap = WAKE_GAP_S if urgent else PROGRESS_GAP_S
        if self._poll_timer is None:
            self._woken_gap = gap if self._woken_gap is None else min(self._woken_gap, gap)
            return
        now = time.monotonic()
        due = max(0.0, gap - (now - self._read_started))
        if self._woke_due is not None and self._woke_due <= now + due:
            return  # a read is already due as soon
        self._poll_timer.stop()
        if due <= 0:
            self._poll()
        else:
            self._poll_timer = self._view.set_timer(due, self._poll)
            self._woke_due = now + due

    def _next_poll_s(self) -> float:
        self._woke_due = None
        if self._woken_gap is not None:
            gap, self._woken_gap = self._woken_gap, None
            return max(0.0, gap - (time.monotonic() - self._read_started))
        fed = self.feed.fed
        if fed is not None and fed.connected:
            # Answered from the feed's last tick, not the store: cheap, and the header's read
            # time goes on each second on a quiet workspace, as it did polling.
            return max(self.poll_interval, FEED_POLL_S)
        if self.listener.hears_changes:
            return max(self.poll_interval, SAFETY_POLL_S)
        return self.poll_interval

    # -- what was read ------------------------------------------------------------------------

    def store_changed(self, read: FeedRead) -> None:
        """Keep what ``read`` says about the workspace and hand the rest to the view."""
        first = self.seen_seq is None
        self.seen_seq = read.last_seq
        self.host = read.host_pid
        if read.counts or read.full:
            self.counts = read.counts
            self.burn = read.burn
        before = self._view.show_rows(read)
        self.read_at = self._now()
        self._view.show_status()
        if first and self.tune_gc:
            # The widget tree and the first read are long-lived: keep them out of the
            # collector's way, or full collections (up to 0.1 s over 10,000 runs) land on keys.
            gc.collect()
            gc.freeze()
            # Frozen, the old generation is nearly empty, and Python then runs a full
            # collection every few hundred thousand allocations, each up to ~30 ms on the
            # UI thread at 200 events/s. Young collections stay; full ones wait for the
            # minute's age refresh, where a pause lands on nobody's keystroke.
            gc.set_threshold(GC_YOUNG, 50, GC_FULL_NEVER)
        self._view.follow_read(read, first=first, before=before)

    def collect_put_off(self) -> None:
        """Run the full collection the thresholds put off (with the minute's age refresh)."""
        if self.tune_gc:
            # What survives it is long-lived too, so the next minute's collection looks only
            # at the minute's new objects.
            gc.collect()
            gc.freeze()

    def _now(self) -> str:
        return self.clock().astimezone().strftime("%H:%M:%S")

    # -- how a read ended ---------------------------------------------------------------------

    def read_ended(self, state: WorkerState, error: BaseException | None) -> Effects:
        """A read of what changed reached ``state`` (``error``: why it failed, if it did);
        what to say of it, if anything."""
        said: list[Effect] = []
        if state is WorkerState.ERROR:
            said = self._read_failed(error)
        if state is WorkerState.SUCCESS and self.seen_seq is not None:
            self.hosts = self.feed.hosts  # every read's, for the heartbeats' ages
            # Every read that went through, changes or not: an idle workspace is read all the
            # same, and a time that stops is how an operator sees that reading stopped. The
            # header repaints only when the shown second changes.
            self.read_at = self._now()
            self._read_problem = None
            self._view.show_status()
            self._view.raise_attention_toast()  # one whose interval ran out on an idle workspace
        if state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED) and self.live:
            if self._poll_timer is not None:
                self._poll_timer.stop()
            # Never 0 s: Textual's timer divides by its delay once it is late, and a timer of
            # 0 s is late at once; its task died and no read was armed again.
            delay = max(self._next_poll_s(), SOONEST_READ_S)
            self._poll_timer = self._view.set_timer(delay, self._poll)
            if self.listener.may_hear and self._listening is None:
                self._listening = threading.Thread(
                    target=self._listen, name="store-listener", daemon=True
                )
                self._listening.start()
        return said

    def _read_failed(self, error: BaseException | None) -> list[Effect]:
        """A read of the store failed: leave on damage that will not pass, say it once else.

        A damaged, emptied or foreign store will fail every read from now on: the console ends
        with the store's sentence (exit 2), as it would have at start, rather than raise the
        same error every poll. A passing fault (the disk is full, another process holds the
        lock too long) is said once and read again; the header's read time stops meanwhile.
        """
        # Found while opening the store for the read, or met while reading it.
        problem = None if error is None else as_store_error(error)
        if problem is not None and problem.code in LASTING:
            return [Leave(2, Text(f"jarvis: {inert(problem.message)}"))]
        text = problem.message if problem is not None else f"Reading the store failed: {error}"
        if text != self._read_problem:
            self._read_problem = text
            return [Note(inert(text), "Store read failed", "error")]
        return []
