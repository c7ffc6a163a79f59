"""The Textual console: wiring only. Widgets live in `jarvis_tui.widgets`, palettes in
`jarvis_tui.theme`, styling in ``themes/base.tcss``.

The store is read in thread workers (each opens its own `SqliteStore`: SQLite connections belong
to one thread) that post `RunsSnapshotReceived` / `RunDetailReceived`. When live, the next read is
armed with `set_timer` only after the previous one finished, and a read that finds the journal
where it was does nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.events import Resize
from textual.timer import Timer
from textual.widgets import DataTable, Footer
from textual.worker import Worker, WorkerState

from core.run_views import run_detail, run_summary
from core.store.sqlite_store import SqliteStore
from jarvis_tui.messages import RunDetailReceived, RunsSnapshotReceived
from jarvis_tui.safe_text import inert
from jarvis_tui.theme import DEFAULT_THEME, register_themes
from jarvis_tui.widgets.detail_panel import DetailPanel
from jarvis_tui.widgets.run_table import RunTable
from jarvis_tui.widgets.status_header import StatusHeader

Clock = Callable[[], datetime]

#: Seconds between the end of one store read and the start of the next.
POLL_INTERVAL = 0.5
#: From this many columns the table and the detail sit side by side.
WIDE_COLUMNS = 120


def _stylesheet() -> Path:
    # Installed: the wheel ships themes/ as jarvis_tui/themes/. Checkout: themes/ is beside us.
    here = Path(__file__).resolve().parent
    for candidate in (here / "themes" / "base.tcss", here.parent / "themes" / "base.tcss"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("themes/base.tcss is not installed beside the console")


class JarvisApp(App[None]):
    """The operator console over one workspace's store."""

    CSS_PATH = _stylesheet()
    TITLE = "jarvis"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Leave the console"),
        Binding("r", "refresh", "Refresh", id="refresh", tooltip="Read the store now"),
    ]

    def __init__(
        self,
        workspace_db: Path,
        *,
        theme: str = DEFAULT_THEME,
        live: bool = True,
        clock: Clock | None = None,
    ) -> None:
        super().__init__()
        register_themes(self)
        self.theme = theme
        self.workspace_db = workspace_db
        """The ``jarvis.db`` the console reads."""
        self.live = live
        """Keep polling the store (False in tests: read once, deterministically)."""
        self._clock: Clock = clock or datetime.now
        self._seen_seq = -1
        self._poll_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield StatusHeader(self.workspace_db.parent, id="status")
        with Container(id="body"):
            yield RunTable(id="runs")
            yield DetailPanel(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_runs()

    def on_resize(self, event: Resize) -> None:
        self.screen.set_class(event.size.width >= WIDE_COLUMNS, "-wide")

    # -- reading the store ------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.refresh_runs()

    def refresh_runs(self) -> None:
        """Read the store now, whether or not the journal moved."""
        self._read_runs(force=True, selected=self._selected())

    def _poll(self) -> None:
        self._poll_timer = None
        self._read_runs(force=False, selected=self._selected())

    def _selected(self) -> str | None:
        return self.query_one(DetailPanel).run_id

    @work(
        thread=True, exclusive=True, group="store", exit_on_error=False,
        name="read-runs", description="Read the run list from the store",
    )  # fmt: skip
    def _read_runs(self, *, force: bool, selected: str | None) -> None:
        # A reader: the schema is the writers' business, so polling never takes the write lock.
        store = SqliteStore(self.workspace_db, migrate=False)
        try:
            seq = store.last_seq()
            if not force and seq == self._seen_seq:
                return  # nothing was journalled since the last read: an idle console idles
            rows = [run_summary(row) for row in store.list_runs()]
            counts: dict[str, int] = {}
            for row in rows:
                counts[row["state"]] = counts.get(row["state"], 0) + 1
            self.post_message(RunsSnapshotReceived(rows, counts, seq))
            if selected is not None:
                self.post_message(RunDetailReceived(selected, run_detail(store, selected)))
        finally:
            store.close()

    @work(
        thread=True, exclusive=True, group="detail", exit_on_error=False,
        name="read-detail", description="Read one run's detail from the store",
    )  # fmt: skip
    def _read_detail(self, run_id: str) -> None:
        # A reader: the schema is the writers' business, so polling never takes the write lock.
        store = SqliteStore(self.workspace_db, migrate=False)
        try:
            self.post_message(RunDetailReceived(run_id, run_detail(store, run_id)))
        finally:
            store.close()

    # -- applying what was read -------------------------------------------------------------------

    @on(RunsSnapshotReceived)
    def _show_runs(self, message: RunsSnapshotReceived) -> None:
        self._seen_seq = message.last_seq
        self.query_one(RunTable).apply(message.rows)
        read_at = self._clock().strftime("%H:%M:%S")
        self.query_one(StatusHeader).show_counts(message.counts, read_at)

    @on(RunDetailReceived)
    def _show_detail(self, message: RunDetailReceived) -> None:
        self.query_one(DetailPanel).show(message.run_id, message.detail)

    @on(DataTable.RowHighlighted, "#runs")
    def _run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._read_detail(str(event.row_key.value))

    # -- one funnel for worker outcomes -----------------------------------------------------------

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        worker: Worker[Any] = event.worker
        if event.state is WorkerState.ERROR:
            self.notify(
                inert(f"{worker.description}: {worker.error}"),
                title="Store read failed",
                severity="error",
                markup=False,
            )
        if (
            worker.group == "store"
            and event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)
            and self.live
        ):
            if self._poll_timer is not None:
                self._poll_timer.stop()
            self._poll_timer = self.set_timer(POLL_INTERVAL, self._poll)
