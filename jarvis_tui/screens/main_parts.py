"""What the parts of the main screen share: its state, and `do`, the one place where what its
controllers decide is carried out (`jarvis_tui.screens.effects`).

The main screen is written in three parts, each a class the next one extends: its keys
(`main_keys.RunKeys`), its views (`main_views.ViewControls`) and the screen itself
(`main_screen.MainScreen`: the layout, the reads applied, the one funnel for workers).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from jarvis_tui.screens.effects import Dialog, Effects, Focus, Leave, Note, Work

if TYPE_CHECKING:
    from core.service.reads import RunView
    from jarvis_tui.feed import StoreFeed
    from jarvis_tui.run_model import RunModel
    from jarvis_tui.screens.run_actions_controller import RunActionsController
    from jarvis_tui.screens.store_sync import StoreSync


class ScreenParts(Screen[None]):
    """The main screen's state and its carrying out of effects."""

    model: RunModel
    """Every run the console knows, and the current view over them."""
    view: RunView | None
    """The selected run's panels, as last read."""
    store_sync: StoreSync
    actions: RunActionsController
    _bindings_key: tuple[object, ...]

    def do(self, effects: Effects) -> None:
        """Carry out what a controller decided: the screen alone opens dialogs, starts
        workers, raises notifications and ends the console."""
        for effect in effects:
            if isinstance(effect, Work):
                self.run_worker(
                    partial(effect.run, self.post_message),
                    name=effect.name,
                    group=effect.group,
                    description=effect.description,
                    exit_on_error=False,
                    exclusive=effect.exclusive,
                    thread=True,
                )
            elif isinstance(effect, Dialog):
                self.app.push_screen(effect.screen, partial(self._dismissed, effect))
            elif isinstance(effect, Note):
                self.notify(effect.message, title=effect.title, severity=effect.severity,
                            markup=False, timeout=effect.timeout)  # fmt: skip
            elif isinstance(effect, Leave):
                self.app.exit(return_code=effect.code, message=effect.message)
            elif isinstance(effect, Focus):
                self.action_panel(effect.panel)

    def _dismissed(self, dialog: Dialog, result: Any) -> None:
        self.do(dialog.then(result))

    @property
    def feed(self) -> StoreFeed:
        """The store sync's feed, which the diff and the log read through too."""
        return self.store_sync.feed

    def action_panel(self, name: str) -> None:
        raise NotImplementedError  # the views' (`main_views.ViewControls`)

    @property
    def run_on_show(self) -> str | None:
        """The run on show: the panels show it and the keys act on it (see `main_screen`)."""
        from jarvis_tui.widgets.run_table import RunTable

        return self.query_one(RunTable).current

    def selected_row(self) -> dict[str, Any] | None:
        """The table row of the run on show (in this view or not): its freshest state."""
        run_id = self.run_on_show
        return self.model.rows.get(run_id) if run_id else None

    def _back_possible(self) -> bool:
        raise NotImplementedError  # the views'
