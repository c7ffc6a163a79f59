"""The main screen's moves of a power user: go to a run by id (``:``), copy a value of the
selected run (``y``), and marks (space, ``U``) that the action keys then act on.

Marks belong to runs, not to lines: a marked run stays marked when the view changes or it
leaves the window, and the table shows the marks of the runs it holds. While any run is
marked, the keys of the actions marks take (`jarvis_tui.bulk.BULK_ACTIONS`: retry, approve,
cancel, override) act on the marked runs, asking once for all of them; the others still act on
the selected run. Runs the action went through for are unmarked; refused ones stay marked, to
look at.
"""

from __future__ import annotations

from typing import Any

from jarvis_tui.bulk import BULK_ACTIONS
from jarvis_tui.messages import BulkFinished
from jarvis_tui.modals.copy_dialog import FIELDS, CopyDialog, clipboard_text, run_values
from jarvis_tui.modals.jump_dialog import JumpDialog
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.screens.bulk_actions import BulkActions
from jarvis_tui.screens.main_signals import SignalControls
from jarvis_tui.widgets.run_table import RunTable


class RunMoves(SignalControls):
    """Jumping, copying and marking, over the views."""

    _bulk: BulkActions | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mark_rows: dict[str, dict[str, Any]] = {}
        """The marked runs' rows as marked (a run out of the window is asked at that version)."""

    @property
    def bulk(self) -> BulkActions:
        if self._bulk is None:
            self._bulk = BulkActions(self.actions)
        return self._bulk

    # -- going to a run -----------------------------------------------------------------------

    def action_jump(self) -> None:
        """Ask for a run id, completed from the store, and go to it (`go_to_run`: a filter
        that hides the run is cleared)."""
        self.app.push_screen(JumpDialog(self.feed), self._jumped)

    def _jumped(self, run_id: str | None) -> None:
        if run_id:
            self.go_to_run(run_id)

    # -- copying ------------------------------------------------------------------------------

    def action_copy(self) -> None:
        row = self.selected_row()
        if row is None:
            self.notify("No run is selected: nothing to copy.", severity="warning", markup=False)
            return
        view = self.view
        detail = view.detail if view is not None and view.run_id == row["run_id"] else None
        values = run_values(row, detail)
        run_id = str(row["run_id"])
        self.app.push_screen(CopyDialog(run_id, values),
                             lambda field: self._copy(run_id, values, field))  # fmt: skip

    def _copy(self, run_id: str, values: dict[str, str | None], field: str | None) -> None:
        if field is None:
            return
        what = next(what for _key, what, name in FIELDS if name == field)
        value = values.get(field)
        if value is None:
            self.notify(f"Run {shown(run_id)} has no {what} yet: nothing was copied.",
                        title="Nothing copied", severity="warning", markup=False)  # fmt: skip
            return
        text, cleaned = clipboard_text(value)
        self.app.copy_to_clipboard(text)
        note = " (control characters left out)" if cleaned else ""
        self.notify(f"{one_line(text, 120)}{note}", title=f"Copied run {shown(run_id)}'s {what}",
                    markup=False)  # fmt: skip

    # -- marks --------------------------------------------------------------------------------

    @property
    def marked(self) -> list[str]:
        """The marked runs, in the order marked."""
        return list(self.query_one(RunTable).marked)

    def action_mark(self) -> None:
        """Mark the selected run, or unmark it."""
        row = self.selected_row()
        if row is None:
            return
        run_id = str(row["run_id"])
        marked = self.marked
        rows = self._marks()
        if run_id in rows:
            del rows[run_id]
            marked.remove(run_id)
        else:
            rows[run_id] = row
            marked.append(run_id)
        self._set_marks(marked)

    def action_clear_marks(self) -> None:
        if self.marked:
            self._marks().clear()
            self._set_marks([])

    def _marks(self) -> dict[str, dict[str, Any]]:
        return self._mark_rows

    def _set_marks(self, run_ids: list[str]) -> None:
        self.query_one(RunTable).set_marked(run_ids)
        self._show_view_line()
        self.refresh_bindings()

    def acts_on_marks(self, action: str) -> bool:
        """Whether ``action``'s key acts on the marked runs rather than the selected one."""
        return action in BULK_ACTIONS and bool(self.query_one(RunTable).marked)

    def action_run_action(self, name: str) -> None:
        if not self.acts_on_marks(name):
            super().action_run_action(name)
            return
        rows = self._marks()
        # The freshest row of each: the window's when it holds the run, else as marked.
        fresh = [self.model.rows.get(run_id) or rows[run_id] for run_id in self.marked]
        self.do(self.bulk.asked(name, fresh))

    def on_bulk_finished(self, message: BulkFinished) -> None:
        result = message.result
        done = set(result.done)
        rows = self._marks()
        for run_id in done:
            rows.pop(run_id, None)
        for outcome in result.outcomes:
            if not outcome.ok and outcome.run is not None and outcome.request.run_id in rows:
                # Refused as it now stands (moved since it was marked, say): the next press
                # asks about the run the operator has just been told of, not the old version.
                rows[outcome.request.run_id] = dict(outcome.run)
        self._set_marks([run_id for run_id in self.marked if run_id not in done])
        self.do([*self.bulk.finished(result), self.store_sync.read_store()])
