"""The console's one main screen: the run table and the selected run's panels, kept live.

The screen is the view: its layout, its keys, the table, the filter and the sort, the panels.
Two controllers do the rest and hand their results back to it: `StoreSync`
(`jarvis_tui.screens.store_sync`) reads the store, polls and says when reading fails;
`RunActionsController` (`jarvis_tui.screens.run_actions_controller`) carries out the operator's
actions, which write. Textual's workers, timers and message handlers need a DOM node, so the
controllers' workers run on this screen and its `@on` handlers hand the messages over (the
controllers' module docs say why).

Applying what was read: rows change in place by run id inside one `batch_update`; only an
operator's change of view rebuilds the table.

The run on show: the run table's current run (`RunTable.current`), the one the operator chose.
The panels show it, and every action key, the palette's run commands, `enter` and the composer
act on it. It changes only when the operator moves the cursor or goes to a run, never because
the view changed: a run that leaves the view stays on show, and the view line says so.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.events import Key, Resize
from textual.screen import Screen
from textual.widgets import Input, Static, Tab, Tabs, TextArea
from textual.worker import Worker, WorkerState

from jarvis_tui.attention_toasts import TOAST_SECONDS, AttentionToasts
from jarvis_tui.feed import FeedRead, RunView, StoreFeed
from jarvis_tui.messages import (
    ActionFinished,
    CriteriaActed,
    RunViewReceived,
    StoreChanged,
    StreamHistoryReceived,
)
from jarvis_tui.modals.run_details import RunDetailsScreen
from jarvis_tui.run_actions import CRITERIA_ACTIONS, RUN_ACTIONS, availability
from jarvis_tui.run_model import STATE_KEYS, RunModel
from jarvis_tui.safe_text import inert, shown
from jarvis_tui.screens.run_actions_controller import RunActionsController
from jarvis_tui.screens.store_sync import RUN_JOURNAL, STORE_GROUP, StoreSync
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.gate_panel import GatePanel
from jarvis_tui.widgets.key_bar import KeyBar
from jarvis_tui.widgets.progress_stream import ProgressStream
from jarvis_tui.widgets.run_table import SORT_CYCLE, RunTable, RunTableHeader
from jarvis_tui.widgets.status_header import StatusHeader
from jarvis_tui.widgets.steer_composer import SteerComposer

Clock = Callable[[], datetime]

#: From this many columns the panels sit beside the table instead of folding into tabs.
WIDE_COLUMNS = 120
#: Seconds between age refreshes: ages are shown in minutes, so nothing finer is needed.
AGE_REFRESH = 60.0


PANELS = (
    ("progress", "stream", "Progress"),
    ("gates", "gates", "Gates"),
    ("steer", "composer", "Steer"),
)


class MainScreen(Screen[None]):
    """The run table, the progress stream, the gates and the steering composer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority (every key that acts on the selected run, or moves the focus into a text
        # box): the action runs as the App routes the key, so what is typed right behind it,
        # queued in the same read, goes where the action sent the focus (the filter, the
        # steer, a dialog). As ordinary bindings they acted only once the table handled them,
        # and the keys behind had been routed to the table already: `/app` approved the
        # selected run. `check_action` gives them up while a text box has the focus.
        Binding(
            "r", "retry", "Retry", id="run.retry", tooltip="Retry the selected run", priority=True
        ),
        Binding(
            "o",
            "override",
            "Override",
            id="run.override",
            tooltip="Override to done, with a reason",
            priority=True,
        ),
        Binding(
            "a",
            "approve",
            "Approve",
            id="run.approve",
            tooltip="Approve a run in review",
            priority=True,
        ),
        Binding(
            "x",
            "cancel_run",
            "Cancel",
            id="run.cancel",
            tooltip="Cancel, with a reason",
            priority=True,
        ),
        Binding(
            "s",
            "steer",
            "Steer",
            id="run.steer",
            tooltip="Write to a running run's worker",
            priority=True,
        ),
        # Not on the key bar, which is full at 80 columns: the gates panel lists both keys on
        # every run that has criteria, and the help and the palette list them always.
        Binding(
            "v",
            "verify",
            "Verify",
            id="run.verify",
            tooltip="Verify the run's acceptance criteria again, in its checkout",
            show=False,
            priority=True,
        ),
        Binding(
            "A",
            "approve_command",
            "Allow command",
            id="run.approve_command",
            tooltip="Allow the command a run's verification waits on (shows its argv first)",
            show=False,
            priority=True,
        ),
        Binding("enter", "details", "Details", id="run.details", show=False),
        Binding(
            "slash",
            "filter",
            "Filter",
            id="view.filter",
            tooltip="Filter runs by text",
            priority=True,
        ),
        # Priority too, and never given up while typing: the key right behind escape (in one
        # read over a slow link) is for the table, so the focus must be back there before it
        # is routed. As a plain binding it reached the box being left: `º` in the composer.
        # On the key bar only where it does something (`check_action`).
        Binding(
            "escape",
            "back_to_runs",
            "Back to runs",
            id="view.back",
            tooltip="Leave the filter, a panel or the composer for the run table",
            priority=True,
        ),
        Binding("exclamation_mark", "attention", "Attention", id="view.attention"),
        # After the view keys: at 80 columns the bar has no room left for it (help lists it),
        # and the run keys and the filter keep theirs.
        Binding(
            "d",
            "diff",
            "Diff",
            id="run.diff",
            tooltip="The selected run's diff: its files, then the patch",
            priority=True,
        ),
        # Not on the key bar: at 80 columns the bar is full before `d` (help and the palette
        # list it).
        Binding(
            "l",
            "logs",
            "Logs",
            id="run.logs",
            tooltip="The selected run's worker log, followed live while it runs",
            show=False,
            priority=True,
        ),
        Binding("question_mark,f1", "help", "Help", id="help", tooltip="Every key"),
        Binding("S", "sort_next", "Sort", id="view.sort", show=False),
        Binding("R", "sort_reverse", "Reverse sort", id="view.reverse", show=False),
        Binding("t", "toggle_stream", "All runs", id="stream.toggle", show=False),
        Binding("p", "panel('progress')", "Progress", id="panel.progress", show=False),
        Binding("g", "panel('gates')", "Gates", id="panel.gates", show=False),
        Binding("f5", "refresh", "Refresh", id="refresh", show=False),
        *[
            Binding(key, f"state_filter({state!r})", state or "all states", show=False)
            for key, state in STATE_KEYS.items()
        ],
    ]
    #: The actions of the priority bindings above, given up while typing in a text box
    #: (escape is how one leaves the box, so it is kept).
    PRIORITY_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        b.action for b in BINDINGS if isinstance(b, Binding) and b.priority
    ) - {"back_to_runs"}

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
            view=self,
            db_path=workspace_db,
            store_at=store_at,
            live=live,
            poll_interval=poll_interval,
            clock=clock,
            tune_gc=tune_gc,
        )
        """Reads the store and keeps what the reads said (counts, host, spend, read time)."""
        self.actions = RunActionsController(
            self, view=self, sync=self.store_sync, operator=operator
        )
        """Carries out the operator's actions (the `action_*` methods hand them over)."""
        self._bindings_key: tuple[object, ...] = ()
        self._view_line = Text()
        self.attention_toasts = AttentionToasts(clock=lambda: self.clock().timestamp())
        """Runs that started needing a human, for one toast at a time (never behind a dialog)."""

    @property
    def feed(self) -> StoreFeed:
        """The store sync's feed, which the diff and the log read through too."""
        return self.store_sync.feed

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

    def on_screen_suspend(self) -> None:
        # Polling pauses behind a dialog: the operator is deciding on what they see.
        self.store_sync.suspend()

    # -- applying what was read ---------------------------------------------------------------

    def read_store(self) -> None:
        """Read what changed now (everything on the first read)."""
        self.store_sync.read_store()

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        self.store_sync.store_changed(message.read)

    def show_rows(self, read: FeedRead) -> str | None:
        """Put ``read``'s rows in the model and the table (`StoreView.show_rows`).

        Returns:
            The run on show before the rows changed.
        """
        table = self.query_one(RunTable)
        now = self.clock()
        before = table.current
        if read.full:
            self.model.load(read.rows)
            self._replace_rows(table, now)
        elif read.rows:
            self.model.update(read.rows)
            self._apply_rows(table, read.rows, now)
        if read.counts or read.full:
            # The spend column, like the header's "spent", once any agent reported spending.
            spent = self.store_sync.burn is not None
            table.show_spend(spent)
            self.query_one(RunTableHeader).show_spend(spent)
        return before

    def follow_read(self, read: FeedRead, *, first: bool, before: str | None) -> None:
        """What else ``read`` changes on screen (`StoreView.follow_read`)."""
        if not first:
            self.attention_toasts.entered(read.journal)
            self.raise_attention_toast()
        self._show_view_line()
        stream = self.query_one(ProgressStream)
        if stream.all_runs:
            stream.add(read.journal)
        # A run that just became current (the first one shown) is read by `_row_highlighted`.
        table = self.query_one(RunTable)
        on_show = table.current
        if on_show is not None and on_show == before:
            if read.full:
                self.store_sync.read_view(on_show)
            elif on_show in {row["run_id"] for row in read.rows}:
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
            self.store_sync.read_view(run_id)
            return
        view.journal = [*view.journal, *mine][-RUN_JOURNAL:]
        stream = self.query_one(ProgressStream)
        if not stream.all_runs and stream.run_id == run_id:
            stream.add(mine)

    def _apply_rows(self, table: RunTable, rows: list[dict[str, Any]], now: datetime) -> None:
        added = False
        with self.app.batch_update():
            for row in rows:
                if self.model.shows(row):
                    added |= table.upsert(row, now)
                else:
                    table.drop(row["run_id"])
            # New rows land at the bottom; a changed sort value may be out of place.
            if added or self.model.view.attention or self.model.view.sort not in ("age", "run"):
                table.order_by(self.model.sort_key, reverse=self.model.reverse)

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
        if self.store_sync.whole or not self.model.rows:
            text.append(f" · {table.row_count:,} of {len(self.model.rows):,}", style="dim")
        else:
            total = sum(self.counts.values())
            text.append(f" · the newest {len(self.model.rows):,} of {total:,}", style="dim")
            text.append(" (reading the rest…)", style="dim italic")
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
        """
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
            self.store_sync.read_view(run_id)

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
        if worker.group == STORE_GROUP:
            self.store_sync.read_ended(event.state, worker.error)
        elif event.state is WorkerState.ERROR:
            self.notify(
                inert(f"{worker.description}: {worker.error}"),
                title="Action failed",
                severity="error",
                markup=False,
            )

    # -- availability -------------------------------------------------------------------------

    @property
    def run_on_show(self) -> str | None:
        """The run on show: the panels show it and the keys act on it (see the module doc)."""
        return self.query_one(RunTable).current

    def selected_row(self) -> dict[str, Any] | None:
        """The table row of the run on show (in this view or not): its freshest state."""
        run_id = self.run_on_show
        return self.model.rows.get(run_id) if run_id else None

    def action_subject(self, action: str) -> dict[str, Any] | None:
        """What `availability` judges ``action`` on: the selected run's table row, which is
        freshest; for the criteria actions with the run's criteria from its detail, which the
        table does not carry (missing until the detail of this run has been read)."""
        row = self.selected_row()
        if action not in CRITERIA_ACTIONS or row is None:
            return row
        view = self.view
        if view is None or view.run_id != row["run_id"] or view.detail is None:
            return row
        return {**row, "criteria": view.detail.get("criteria") or []}

    def _sync_bindings(self) -> None:
        # Only when what the selected run allows has changed, not on every cursor move or read:
        # each refresh_bindings() walks the bindings of the focused chain and redraws the keys.
        row = self.selected_row()
        allowed = tuple(
            availability(action, self.action_subject(action)).enabled for action in RUN_ACTIONS
        )
        key = (row is not None, allowed)
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.PRIORITY_ACTIONS and self._typing_in_text():
            return False  # not None: the key is not this binding's; it goes on to the text box
        name = "cancel" if action == "cancel_run" else action
        if name in RUN_ACTIONS:
            # None: shown in the footer, dimmed; pressing it says why (`on_key`).
            return True if availability(name, self.action_subject(name)).enabled else None
        if action in ("details", "diff", "logs"):
            return True if self.selected_row() else None
        if action == "back_to_runs":
            return self._back_possible()  # else escape goes on to whatever has the focus
        return True

    def on_key(self, event: Key) -> None:
        # A disabled binding does not run its action; the key arrives here instead, and the
        # operator hears why rather than nothing.
        if isinstance(self.focused, FilterLine) or self.focused is None:
            return
        if self.focused.id == "steer-editor":
            return
        for action, (key, label) in RUN_ACTIONS.items():
            if event.key == key:
                can = availability(action, self.action_subject(action))
                if not can.enabled:
                    event.stop()
                    self.notify(
                        can.reason, title=f"{label}: not possible", severity="warning", markup=False
                    )
                return

    # -- actions: the actions controller's ----------------------------------------------------

    def action_retry(self) -> None:
        self.actions.retry()

    def action_override(self) -> None:
        self.actions.override()

    def action_cancel_run(self) -> None:
        self.actions.cancel()

    def action_approve(self) -> None:
        self.actions.approve()

    def action_verify(self) -> None:
        self.actions.verify()

    def action_approve_command(self) -> None:
        self.actions.approve_command()

    @on(SteerComposer.SendRequested)
    def _send_steer(self, message: SteerComposer.SendRequested) -> None:
        self.actions.steer(message.run_id, message.version, message.message)

    @on(ActionFinished)
    def _action_finished(self, message: ActionFinished) -> None:
        self.actions.action_finished(message)

    @on(CriteriaActed)
    def _criteria_acted(self, message: CriteriaActed) -> None:
        self.actions.criteria_acted(message)

    def steer_sent(self, run_id: str, text: str) -> None:
        """The steer ``text`` was queued for ``run_id`` (`ActionsView.steer_sent`)."""
        self.query_one(SteerComposer).sent(run_id, text)

    # -- actions: the view's ------------------------------------------------------------------

    def action_steer(self) -> None:
        self.action_panel("steer")

    def action_details(self) -> None:
        if self.view is not None and self.view.run_id == self.run_on_show:
            self.app.push_screen(RunDetailsScreen(self.view))

    def action_diff(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        # Imported here: the console's first paint does not need the diff's modules.
        from jarvis_tui.modals.diff_screen import DiffScreen

        self.app.push_screen(DiffScreen(self.feed, str(row["run_id"])))

    def action_logs(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        # Imported here: the console's first paint does not need the log's modules.
        from jarvis_tui.modals.log_screen import LogScreen

        self.app.push_screen(LogScreen(self.feed, str(row["run_id"])))

    def action_help(self) -> None:
        from jarvis_tui.modals.help_screen import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_refresh(self) -> None:
        self.read_store()

    # -- views --------------------------------------------------------------------------------

    def _replace_rows(self, table: RunTable, now: datetime) -> None:
        rows = self.model.visible()
        current = table.current
        gap = 0
        row = self.model.rows.get(current) if current is not None else None
        if current is not None and row is not None and not self.model.shows(row):
            gap = self.model.rank(current, rows)  # the cursor keys move from where it would be
        table.replace_rows(rows, now, gap=gap)

    def _rebuild(self) -> None:
        # A change of view: the run on show stays on show, in the new view or not.
        table = self.query_one(RunTable)
        self._replace_rows(table, self.clock())
        self._show_view_line()
        run_id = table.current
        if run_id is not None and (self.view is None or self.view.run_id != run_id):
            self.store_sync.read_view(run_id)
        elif run_id is None:
            self._show_run(None)

    def action_filter(self) -> None:
        filter_input = self.query_one("#filter", FilterLine)
        self.add_class("-filtering")
        # Focus moves now, not after the queued events as `Widget.focus` would have it: keys
        # typed right behind `/` (or `s`) are text for the filter (or the steer), and sent
        # to the table they would act, `a` approving the selected run.
        self.set_focus(filter_input)

    def _filter_changed(self, value: str) -> None:
        self.model.view.text = value.strip()
        self._rebuild()

    @on(FilterLine.Submitted, "#filter")
    def _filter_submitted(self, event: FilterLine.Submitted) -> None:
        if not event.value.strip():
            self.remove_class("-filtering")
        table = self.query_one(RunTable)
        if not table.current_shown and table.row_count:
            # Enter is "take me to what I found": `/ run-id enter r` retries the run found. The
            # run on show stays while typing, and stays if it is among the matches.
            table.action_jump(0)
        self.set_focus(table)

    def _typing_in_text(self) -> bool:
        """Whether the focus is in a box that takes text (the filter, the steer editor)."""
        return isinstance(self.focused, FilterLine | TextArea | Input)

    def _back_possible(self) -> bool:
        table = self.query_one(RunTable)
        return (
            self.focused is not table
            or self.has_class("-filtering")
            or bool(self.query_one("#filter", FilterLine).value)
        )

    def action_back_to_runs(self) -> None:
        """One step back to the run table: from the filter (clearing it), from a panel or the
        composer (a draft stays), or, on the table, clear a kept filter."""
        table = self.query_one(RunTable)
        filter_input = self.query_one("#filter", FilterLine)
        if self.focused is filter_input:
            # Cleared in the filter's own turn: keys typed before escape may still wait there,
            # and would otherwise land after the clearing.
            filter_input.call_later(self._clear_filter)
        elif self.focused is table:
            self._clear_filter()
        # At once, not after the queued keys as `focus()` would: what follows is for the table.
        self.set_focus(table)

    def _clear_filter(self) -> None:
        self.query_one("#filter", FilterLine).value = ""
        self.remove_class("-filtering")

    def action_attention(self) -> None:
        self.model.view.attention = not self.model.view.attention
        self._rebuild()

    def action_state_filter(self, state: str | None) -> None:
        self.model.view.state = state
        self._rebuild()

    def action_sort_next(self) -> None:
        view = self.model.view
        view.attention = False
        view.sort = SORT_CYCLE[(SORT_CYCLE.index(view.sort) + 1) % len(SORT_CYCLE)]
        view.reverse = view.sort in ("age", "updated", "retries")
        self._rebuild()

    def action_sort_reverse(self) -> None:
        self.model.view.reverse = not self.model.view.reverse
        self._rebuild()

    def set_sort(self, sort: str) -> None:
        self.model.view.attention = False
        self.model.view.sort = sort
        self._rebuild()

    def go_to_run(self, run_id: str) -> None:
        """Select ``run_id``, widening the view if it hides the run."""
        row = self.model.rows.get(run_id)
        if row is None:
            self.notify(f"There is no run {shown(run_id)}.", severity="warning", markup=False)
            return
        if not self.model.shows(row):
            self.model.view.text = ""
            self.model.view.state = None
            self.model.view.attention = False
            self.query_one("#filter", FilterLine).value = ""
            self.remove_class("-filtering")
            self._rebuild()
        table = self.query_one(RunTable)
        table.move_to(run_id)
        self.set_focus(table)

    def action_toggle_stream(self) -> None:
        stream = self.query_one(ProgressStream)
        if stream.all_runs:
            stream.all_runs = False
            run_id = self.run_on_show
            stream.reset(run_id=run_id, all_runs=False, entries=[])
            if run_id is not None:
                self.view = None
                self.store_sync.read_view(run_id)
        else:
            stream.reset(run_id=None, all_runs=True, entries=[])
            self.store_sync.read_all_stream()
        self._bring_forward("progress")
        self._show_view_line()

    def action_panel(self, name: str) -> None:
        """Bring panel ``name`` forward (folded layout) and give it the keys, so the page keys
        scroll it (at full width every panel shows, and the focus is what `p` changes)."""
        self._bring_forward(name)
        # Now, not after the queued keys: a page key typed right behind is for the panel.
        if name == "progress":
            self.set_focus(self.query_one(ProgressStream))
        elif name == "gates":
            self.set_focus(self.query_one(GatePanel))
        else:
            self.set_focus(self.query_one(SteerComposer).editor)

    def _bring_forward(self, name: str) -> None:
        self.query_one(Tabs).active = name
        self._activate_panel(name)

    @on(Tabs.TabActivated, "#panel-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab.id:
            self._activate_panel(event.tab.id)

    def _activate_panel(self, name: str) -> None:
        for tab, panel, _label in PANELS:
            self.query_one(f"#{panel}").set_class(tab == name, "-active")
