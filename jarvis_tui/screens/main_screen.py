"""The console's one main screen: the run table and the selected run's panels, kept live.

The screen is the view: its layout, the table, the panels, and what was read applied; its keys
are `main_keys` and its views `main_views` (the parts it extends). Two controllers do the rest
and return what should happen (`jarvis_tui.screens.effects`), which the screen alone carries out
(`do`): `StoreSync` (`jarvis_tui.screens.store_sync`) decides the reads of the store, polls and
what a failed read says; `RunActionsController` (`jarvis_tui.screens.run_actions_controller`)
decides what the operator's actions ask and the requests that write. Textual's workers, timers
and message handlers need a DOM node: the workers are this screen's, and its `@on` handlers hand
the messages over.

Applying what was read: the table holds a window of the view (`jarvis_tui.run_model`). A read
of the window replaces its lines, the cursor staying on its run; rows that changed in place
change by run id inside one `batch_update`; a page read as the cursor nears an end extends the
lines, which stay where they were on screen.

The run on show: the run table's current run (`RunTable.current`), the one the operator chose.
The panels show it, and every action key, the palette's run commands, `enter` and the composer
act on it. It changes only when the operator moves the cursor or goes to a run, never because
the view changed: a run that leaves the view stays on show, and the view line says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Container, Vertical
from textual.events import Resize
from textual.widgets import Static, Tab, Tabs
from textual.worker import Worker, WorkerState

from core.service.reads import RunView
from core.service.stages import NEEDS_HUMAN
from jarvis_tui.attention_toasts import TOAST_SECONDS, AttentionToasts, Toast, moves
from jarvis_tui.feed import FeedRead
from jarvis_tui.merge_watch import MERGE_TOAST_SECONDS, MergeWatch
from jarvis_tui.messages import (
    ActionFinished,
    RunViewReceived,
    StoreChanged,
    StreamHistoryReceived,
    WindowRead,
)
from jarvis_tui.personal import NotifySettings
from jarvis_tui.run_model import PAGE, RunModel, WindowAsk
from jarvis_tui.safe_text import inert, shown
from jarvis_tui.screens.main_keys import main_bindings
from jarvis_tui.screens.main_moves import RunMoves
from jarvis_tui.screens.main_views import PANELS
from jarvis_tui.screens.run_actions_controller import RunActionsController
from jarvis_tui.screens.store_sync import RUN_JOURNAL, STORE_GROUP, VIEW_READ, StoreSync
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.gate_panel import GatePanel
from jarvis_tui.widgets.key_bar import KeyBar
from jarvis_tui.widgets.progress_stream import ProgressStream
from jarvis_tui.widgets.run_table import RunTable, RunTableHeader
from jarvis_tui.widgets.status_header import StatusHeader
from jarvis_tui.widgets.steer_composer import SteerComposer

Clock = Callable[[], datetime]

#: From this many columns the panels sit beside the table instead of folding into tabs.
WIDE_COLUMNS = 120
#: Seconds between age refreshes: ages are shown in minutes, so nothing finer is needed.
AGE_REFRESH = 60.0


class MainScreen(RunMoves):
    """The run table, the progress stream, the gates and the steering composer."""

    BINDINGS: ClassVar[list[BindingType]] = main_bindings()

    def __init__(
        self,
        workspace_db: Path,
        *,
        store_at: str | Path | None = None,
        live: bool,
        clock: Clock,
        operator: str | None,
        poll_interval: float,
        tune_gc: bool = False,
        notify: NotifySettings | None = None,
    ) -> None:
        super().__init__()
        self.live = live
        self.clock = clock
        self.model = RunModel()
        """Every run the console knows, and the current view over them."""
        self.view: RunView | None = None
        """The selected run's panels, as last read."""
        self.store_sync = StoreSync(
            self,
            self.do,
            db_path=workspace_db,
            store_at=store_at,
            live=live,
            poll_interval=poll_interval,
            clock=clock,
            tune_gc=tune_gc,
        )
        """Reads the store and keeps what the reads said (counts, host, spend, read time)."""
        self.actions = RunActionsController(self, self.store_sync, operator)
        """Decides what the operator's actions take (`action_run_action` hands them over)."""
        self._bindings_key: tuple[object, ...] = ()
        self._view_line = Text()
        self.attention_toasts = AttentionToasts(clock=lambda: self.clock().timestamp())
        """Runs that started needing a human, for one toast at a time (never behind a dialog)."""
        self.merge_watch = MergeWatch()
        """The merges this console asked for, told when the host decides them."""
        self.start_signals(self.feed.root, notify)

    @property
    def counts(self) -> dict[str, int]:
        """Runs per state, as last read."""
        return self.store_sync.counts

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusHeader(self.feed.root, id="status")
        with Container(id="body"):
            with Vertical(id="table-area"):
                yield Static("", id="view-line")
                yield FilterLine(
                    placeholder="filter: run id, lane, task, state, progress",
                    on_change=self._filter_changed,
                    id="filter",
                )
                yield RunTableHeader(id="runs-header")
                yield RunTable(id="runs")
            yield Tabs(*[Tab(label, id=tab) for tab, _panel, label in PANELS], id="panel-tabs")
            yield GatePanel(id="gates", classes="panel")
            yield ProgressStream(id="stream", classes="panel -active")
            yield SteerComposer(id="composer", classes="panel")
        # ctrl+p is not on the bar: at 80 columns it would push out run keys; ? lists it.
        yield KeyBar(id="keys")

    def on_mount(self) -> None:
        self.query_one(RunTable).focus()
        self._show_view_line()
        self.read_store()
        if self.live:
            self.set_interval(AGE_REFRESH, self._refresh_ages)

    def on_unmount(self) -> None:
        # Workers still reading hold the feed's lock; closing waits for them, never under them.
        self.workers.cancel_all()
        self.store_sync.close()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width >= WIDE_COLUMNS, "-wide")

    def on_screen_resume(self) -> None:
        self.raise_attention_toast()  # what arrived while a dialog was up
        self.store_sync.resume()

    # -- applying what was read ---------------------------------------------------------------

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        self.store_sync.store_changed(message.read)

    def window_ask(self) -> WindowAsk:
        """What a read of the window asks for now (`StoreView.window_ask`)."""
        return self.model.ask(keep=[run_id] if (run_id := self.run_on_show) else [])

    def show_rows(self, read: FeedRead) -> str | None:
        """Put ``read``'s rows in the model and the table (`StoreView.show_rows`).

        Returns:
            The run on show before the rows changed.
        """
        table = self.query_one(RunTable)
        now = self.clock()
        before = table.current
        ask = read.ask
        if (
            read.page is not None
            and ask.generation == self.model.generation
            and not self.model.view_pending
        ):
            if ask.version == self.model.version:
                self.model.take(read.page, keep=before)
                self._replace_rows(table, now)
            else:
                # A page was added while this was read: the lines stay, their rows change.
                self.model.update(r for r in read.page.rows if self.model.shows(r["run_id"]))
                self._apply_rows(table, read.page.rows, now)
        if read.rows:
            self.model.update(read.rows)
            self._apply_rows(table, read.rows, now)
        self._note_moves(read.journal)
        if read.counts or read.full:
            # The spend column, like the header's "spent", once any agent reported spending.
            spent = self.store_sync.burn is not None
            table.show_spend(spent)
            self.query_one(RunTableHeader).show_spend(spent)
        return before

    def _note_moves(self, journal: list[dict[str, Any]]) -> None:
        # Runs outside the window too: a toast names runs still waiting when it is raised.
        for run_id, stage, _payload in moves(journal):
            self.model.moved(run_id, stage in NEEDS_HUMAN)

    def follow_read(self, read: FeedRead, *, first: bool, before: str | None) -> None:
        """What else ``read`` changes on screen (`StoreView.follow_read`)."""
        if read.cut is not None:
            # Never a silent gap: what was removed is said, and the view is read afresh.
            self.notify(
                f"History before journal entry {read.cut} was removed by retention; "
                "the view was read again.",
                title="history removed",
                markup=False,
            )
        if not first:
            self.note_signals(read.journal)
            self.attention_toasts.entered(read.journal)
            self._merges_decided(read.journal)
            self.raise_attention_toast()
        self._show_view_line()
        stream = self.query_one(ProgressStream)
        if stream.all_runs:
            stream.add(read.journal)
        # A run that just became current (the first one shown) is read by `_row_highlighted`.
        table = self.query_one(RunTable)
        on_show = table.current
        if on_show is not None and on_show == before:
            if first or (read.full and not read.journal):  # the first read, or a catch-up
                self.do([self.store_sync.read_view(on_show)])
            elif on_show in {entry["run_id"] for entry in read.journal}:
                self._selected_changed(on_show, read)
        elif on_show is None and first:
            self._show_run(None)
        self._sync_bindings()

    def _selected_changed(self, run_id: str, read: FeedRead) -> None:
        # A running run's news is mostly progress, several times a second: its entries are in
        # this read already, and progress changes nothing else the panels show. Anything else
        # (a state change, a steer, a gate) reads the run again.
        mine = [entry for entry in read.journal if entry["run_id"] == run_id]
        view = self.view
        if (
            not mine
            or view is None
            or view.run_id != run_id
            or any(entry["kind"] != "progress" for entry in mine)
        ):
            self.do([self.store_sync.read_view(run_id)])
            return
        view.journal = [*view.journal, *mine][-RUN_JOURNAL:]
        stream = self.query_one(ProgressStream)
        if not stream.all_runs and stream.run_id == run_id:
            stream.add(mine)

    @on(WindowRead)
    def _window_read(self, message: WindowRead) -> None:
        ask, page, model = message.ask, message.page, self.model
        if ask.generation != model.generation:
            return  # the view changed since this was asked for
        if message.purpose == "view":
            model.view_pending = False
        elif ask.version != model.version:
            return  # the lines changed since this was asked for: the cursor will ask again
        table = self.query_one(RunTable)
        now = self.clock()
        current = table.current
        with self.app.batch_update():
            if message.purpose in ("after", "before"):
                shift = model.extend(page, after=message.purpose == "after", keep=current)
                self._replace_rows(table, now, shift=shift)
            else:
                model.take(page, keep=current)
                self._replace_rows(table, now)
                if message.purpose in ("first", "last"):
                    table.jump_to_end(last=message.purpose == "last")
        self._show_view_line()
        self.show_status()
        if message.purpose == "view" and self.view is not None:
            self._sync_bindings()
        if model.walked_to is not None and len(model.order) < PAGE:
            # A rare text: the walk stopped with few matches. Read on, a walk at a time, so
            # the matches stream in without a key asking for each stretch.
            self.post_message(RunTable.NeedRows(table, "after"))

    @on(RunTable.NeedRows)
    def _need_rows(self, message: RunTable.NeedRows) -> None:
        ask, model = self.model.ask(), self.model
        if model.view_pending:
            return  # the lines are the old view's: the new view's page is on its way
        if message.where == "after" and (model.marks or model.walked_to):
            work = self.store_sync.read_window(
                _paged(ask), "after", after=model.read_on_from(),
                offset=None if model.offset is None or model.walked_to is not None
                else model.offset + len(model.order),
            )  # fmt: skip
        elif message.where == "before" and model.marks:
            work = self.store_sync.read_window(
                _paged(ask), "before", before=model.marks[0], offset=model.offset
            )
        elif message.where == "first":
            work = self.store_sync.read_window(_paged(ask), "first")
        elif message.where == "last":
            work = self.store_sync.read_window(_paged(ask), "last", from_end=True)
        else:
            return
        self.do([work])

    def _apply_rows(self, table: RunTable, rows: list[dict[str, Any]], now: datetime) -> None:
        with self.app.batch_update():
            for row in rows:
                table.upsert(row, now)

    def show_status(self) -> None:
        """Repaint the header from what the store sync last read (`StoreView.show_status`)."""
        sync = self.store_sync
        self.query_one(StatusHeader).show_status(
            sync.counts,
            host=sync.host,
            attention=self.model.attention_count(),
            read_at=sync.read_at,
            burn=sync.burn,
            hosts=sync.hosts,
            now=self.clock(),
        )

    def _show_view_line(self) -> None:
        table = self.query_one(RunTable)
        text = Text(style="bold", no_wrap=True, overflow="ellipsis", end="")
        row = self.selected_row()
        if row is not None and not table.current_shown:
            # First: a narrow line cuts its end, and this is what the keys act on.
            text.append(
                f"{shown(row['run_id'])} is {row['state']}: not in this view (↑↓ choose a run) · ",
                style="yellow",
            )
        text.append(self.model.view.describe())
        if marks := len(table.marked):  # the action keys act on them: said where one looks
            text.append(f" · {marks} marked", style="bold magenta")
        model = self.model
        if model.read_once:
            held = f"{model.total:,}" if model.exact else f"{model.total:,}+"
            whole = sum(self.counts.values())
            text.append(f" · {held} of {whole:,}", style="dim")
        stream = self.query_one(ProgressStream)
        text.append(f" · stream: {'all runs' if stream.all_runs else 'selected run'}", style="dim")
        if text.plain == self._view_line.plain and text.spans == self._view_line.spans:
            return  # called on every cursor move: a key repaints only what changed
        self._view_line = text
        self.query_one("#view-line", Static).update(text, layout=False)  # one fixed line

    def raise_attention_toast(self) -> None:
        """Raise the needs-a-human toast that is due, if any (`StoreView.raise_attention_toast`).

        Only on this screen: a toast drawn over a dialog hides what is being decided. What
        waits is raised when the dialog closes, or at the next read once the interval is over.
        The terminal's bell and desktop notification do not wait (`ring_signals`).
        """
        self.ring_signals()
        if not self.is_current:
            return
        toast = self.attention_toasts.due(self.model.needs_human)
        if toast is not None:
            self.notify(
                toast.message,
                title=toast.title,
                severity="warning",
                markup=False,
                timeout=TOAST_SECONDS,
            )

    @on(RunViewReceived)
    def _view_received(self, message: RunViewReceived) -> None:
        if message.view.run_id != self.run_on_show:
            return  # the cursor moved on while this was read
        self._show_run(message.view)

    def _show_run(self, view: RunView | None) -> None:
        previous = self.view.run_id if self.view else None
        self.view = view
        self.query_one(GatePanel).show(view)
        self.query_one(SteerComposer).show(view)
        stream = self.query_one(ProgressStream)
        if not stream.all_runs:
            entries = view.journal if view else []
            if view is None or view.run_id != previous or stream.run_id != view.run_id:
                stream.reset(run_id=view.run_id if view else None, all_runs=False, entries=entries)
            else:
                stream.add(entries)
        self._sync_bindings()

    @on(StreamHistoryReceived)
    def _stream_history(self, message: StreamHistoryReceived) -> None:
        stream = self.query_one(ProgressStream)
        if stream.all_runs:
            stream.reset(run_id=None, all_runs=True, entries=message.entries)

    @on(RunTable.Highlighted)
    def _row_highlighted(self, event: RunTable.Highlighted) -> None:
        # The cursor is painted first, on its own: a panel update read in the same frame
        # would make the key wait for both (an ~8 ms frame became ~25 ms). A key held down
        # reads only the run the cursor rests on when the frame is out.
        self.call_after_refresh(self._read_view_if_selected, event.run_id)
        self._show_view_line()
        self._sync_bindings()

    def _read_view_if_selected(self, run_id: str) -> None:
        if self.run_on_show == run_id:
            self.do([self.store_sync.read_view(run_id)])

    @on(RunTable.Selected)
    def _row_selected(self, event: RunTable.Selected) -> None:
        self.action_details()

    def _refresh_ages(self) -> None:
        self.query_one(RunTable).set_now(self.clock())  # only the lines on screen are redrawn
        self.store_sync.collect_put_off()

    # -- one funnel for worker outcomes -------------------------------------------------------

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        # Every worker of this screen: the store sync's reads of what changed end in its hands
        # (a failure said once, or the console ends; the next poll armed); any other that
        # fails, a write or a read of one run, is said here.
        worker: Worker[Any] = event.worker
        if worker.name == VIEW_READ and event.state in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            self.view_read_ended()
        if worker.group == STORE_GROUP:
            self.do(self.store_sync.read_ended(event.state, worker.error))
        elif event.state is WorkerState.ERROR:
            self.notify(
                inert(f"{worker.description}: {worker.error}"),
                title="Action failed",
                severity="error",
                markup=False,
            )

    # -- what the controllers need of the screen ------------------------------------------------

    def from_thread(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` on the screen's loop from another thread (`StoreView`)."""
        self.app.call_from_thread(callback)

    @on(SteerComposer.SendRequested)
    def _send_steer(self, message: SteerComposer.SendRequested) -> None:
        self.do(self.actions.steer(message.run_id, message.version, message.message))

    @on(ActionFinished)
    def _action_finished(self, message: ActionFinished) -> None:
        merge = message.outcome.merge
        self.do(self.actions.finished(message))
        if message.outcome.ok and merge and merge.get("pending"):
            early = self.merge_watch.ask(message.outcome.request.run_id)
            if early is not None:  # the host was quicker than this answer
                self._tell_merge(*early)

    def _merges_decided(self, journal: list[dict[str, Any]]) -> None:
        """Tell the operator what became of the merges asked here (`MergeWatch`)."""
        for decided in self.merge_watch.decided(journal):
            self._tell_merge(*decided)

    def _tell_merge(self, run_id: str, toast: Toast, merged: bool) -> None:
        # A refused merge is said here, with the host's reason, not again as needing a human.
        self.notify(toast.message, title=toast.title, markup=False,
                    severity="information" if merged else "warning",
                    timeout=MERGE_TOAST_SECONDS)  # fmt: skip
        if not merged:
            self.attention_toasts.waiting.pop(run_id, None)

    def steer_sent(self, run_id: str, text: str) -> None:
        """The steer ``text`` was queued for ``run_id`` (`ActionsView.steer_sent`)."""
        self.query_one(SteerComposer).sent(run_id, text)


def _paged(ask: WindowAsk) -> WindowAsk:
    """``ask`` for one page."""
    return replace(ask, size=PAGE)
