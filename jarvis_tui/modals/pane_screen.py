"""What the diff and the log screens share: one pane of a run's text, a search line over it,
and a status line where a failed read is said (a toast would wait until the screen closes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual import on
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from jarvis_tui.safe_text import inert


def pane_bindings(
    prefix: str, *, before: Sequence[BindingType] = (), after: Sequence[BindingType] = ()
) -> list[BindingType]:
    """The keys of a pane screen: escape and q close it, / searches, n and N go from match to
    match; ``before`` and ``after`` the search keys, the screen's own (ids ``prefix.…``)."""
    return [
        Binding("escape", "back", "Close", id=f"{prefix}.close"),
        Binding("q", "dismiss(None)", "Close", show=False, id=f"{prefix}.quit"),
        *before,
        Binding("slash", "search", "Search", id=f"{prefix}.search"),
        Binding("n", "match(1)", "Next match", id=f"{prefix}.next"),
        Binding("N", "match(-1)", "Previous match", id=f"{prefix}.previous"),
        *after,
    ]


class PaneScreen(ModalScreen[None]):
    """A run's diff or log over the console; escape closes the search first, then the screen."""

    @property
    def pane(self) -> Widget:
        """The pane of text the keys go back to."""
        raise NotImplementedError

    def _show_status(self, note: str | None = None) -> None:
        raise NotImplementedError

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        worker: Worker[Any] = event.worker
        if event.state is WorkerState.ERROR:
            # Said here, in the dialog: a toast would wait until it closes.
            self._show_status(inert(f"{worker.description} failed: {worker.error}"))

    def action_back(self) -> None:
        """Close the search if it is open, else the screen."""
        if self.has_class("-searching"):
            self.remove_class("-searching")
            self.set_focus(self.pane)
            return
        self.dismiss(None)
