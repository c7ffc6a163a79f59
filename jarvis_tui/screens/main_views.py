"""The main screen's views: the filter, the state and attention views, the sort, going to a
run, the progress stream's scope, the panels, and the run's own screens (details, diff, log).

A change of view never changes the run on show: it stays on show, in the new view or not. The
store sorts and filters: a change of view reads a page of the new view around the run on show,
in a worker; until it arrives the table shows what it showed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from textual import on
from textual.widgets import Tabs

from core.lifecycle import RunState
from core.service.reads import RunView
from jarvis_tui.modals.run_details import RunDetailsScreen
from jarvis_tui.run_model import PAGE
from jarvis_tui.safe_text import shown
from jarvis_tui.screens.main_keys import RunKeys
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.gate_panel import GatePanel
from jarvis_tui.widgets.progress_stream import ProgressStream
from jarvis_tui.widgets.run_table import SORT_CYCLE, RunTable
from jarvis_tui.widgets.steer_composer import SteerComposer

Clock = Callable[[], datetime]

#: (tab id, panel id, label) for the folded layout.
PANELS = (
    ("progress", "stream", "Progress"),
    ("gates", "gates", "Gates"),
    ("steer", "composer", "Steer"),
)


class ViewControls(RunKeys):
    """What the operator sees of the runs, and where the keys go."""

    clock: Clock

    def read_store(self) -> None:
        """Read what changed now (everything on the first read)."""
        self.do([self.store_sync.read_store()])

    def _show_view_line(self) -> None:
        raise NotImplementedError  # the screen's

    def _show_run(self, view: RunView | None) -> None:
        raise NotImplementedError  # the screen's

    def action_details(self) -> None:
        if self.view is not None and self.view.run_id == self.run_on_show:
            self.app.push_screen(RunDetailsScreen(self.view, self.feed))

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

    def action_fleet(self) -> None:
        # Imported here: the console's first paint does not need the fleet view.
        from jarvis_tui.modals.fleet_screen import FleetScreen

        live = self.store_sync.live
        self.app.push_screen(FleetScreen(self.feed, operator=self.actions.operator,
                                         clock=self.clock, live=live))  # fmt: skip

    def action_quarantine(self) -> None:
        from jarvis_tui.modals.quarantine_screen import QuarantineScreen

        self.app.push_screen(QuarantineScreen(self.feed, operator=self.actions.operator))

    def action_help(self) -> None:
        from jarvis_tui.modals.help_screen import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_refresh(self) -> None:
        self.read_store()

    def _replace_rows(self, table: RunTable, now: datetime, *, shift: int = 0) -> None:
        model = self.model
        table.replace_rows(model.visible(), now, shift=shift)
        table.set_window(first_at=model.offset, total=model.total,
                         more_before=model.more_before, more_after=model.more_after)  # fmt: skip

    _view_reading = False
    """A change of view's read is in flight."""
    _view_read_due = False
    """The view changed again while it was: one more read when it ends."""

    def _rebuild(self) -> None:
        # A change of view: the run on show stays on show, in the new view or not; the page
        # read is the one around it when the new view holds it. One read at a time: keys
        # typed faster than the store answers make one more read, for the latest view, not a
        # queue of reads for views already gone.
        self.model.changed_view()
        if self._view_reading:
            self._view_read_due = True
        else:
            self._read_view_window()
        self._show_view_line()

    def _read_view_window(self) -> None:
        self._view_reading = True
        ask = replace(self.model.ask(), size=PAGE)
        self.do([self.store_sync.read_window(ask, "view", around=self.run_on_show)])

    def view_read_ended(self) -> None:
        """A change of view's read ended (however): read again if the view changed since."""
        self._view_reading = False
        if self._view_read_due:
            self._view_read_due = False
            self._read_view_window()

    def _rebuild_now(self) -> None:
        """Read the view now, on this thread: the keys that follow act on what it shows."""
        model = self.model
        model.changed_view()
        page = self.feed.window(model.view.runs_view(), limit=PAGE, around=self.run_on_show)
        table = self.query_one(RunTable)
        model.take(page, keep=table.current)
        model.view_pending = False
        self._replace_rows(table, self.clock())
        self._show_view_line()

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
        if self.model.view_pending:
            self._rebuild_now()
        if not table.current_shown and table.row_count:
            # Enter is "take me to what I found": `/ run-id enter r` retries the run found. The
            # run on show stays while typing, and stays if it is among the matches.
            table.action_jump(0)
        self.set_focus(table)

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
        self.model.view.state = RunState(state) if state else None
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
        model = self.model
        page = self.feed.window(model.view.runs_view(), limit=PAGE, around=run_id)
        if run_id not in {row["run_id"] for row in page.rows}:
            model.view.text = ""
            model.view.state = None
            model.view.attention = False
            self.query_one("#filter", FilterLine).value = ""
            self.remove_class("-filtering")
            page = self.feed.window(model.view.runs_view(), limit=PAGE, around=run_id)
            if run_id not in {row["run_id"] for row in page.rows}:
                self.notify(f"There is no run {shown(run_id)}.", severity="warning", markup=False)
                return
        model.changed_view()
        table = self.query_one(RunTable)
        model.take(page, keep=table.current)
        model.view_pending = False
        self._replace_rows(table, self.clock())
        table.move_to(run_id)
        self._show_view_line()
        self.set_focus(table)

    def action_toggle_stream(self) -> None:
        stream = self.query_one(ProgressStream)
        if stream.all_runs:
            stream.all_runs = False
            run_id = self.run_on_show
            stream.reset(run_id=run_id, all_runs=False, entries=[])
            if run_id is not None:
                self.view = None
                self.do([self.store_sync.read_view(run_id)])
        else:
            stream.reset(run_id=None, all_runs=True, entries=[])
            self.do([self.store_sync.read_all_stream()])
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
