"""Go to a run by its id (``:``, as in k9s and vim): completion from the store as it is typed.

The completion is the store's, never the console's window: each change of the text reads the
few runs whose id starts with it (`core.service.window.run_ids_from`, an indexed page), off the
screen's thread. The first completes the box (right arrow or tab takes it, as in a shell) and
the few found are listed under it with their states. Enter goes to the run named exactly; an
id no run has is said in the dialog, which stays open to correct it.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Static

from jarvis_tui.feed import StoreFeed
from jarvis_tui.safe_text import one_line, shown

#: Runs listed under the box (and read per key): enough to choose from, a page of the index.
COMPLETIONS = 6


class RunIdSuggester(Suggester):
    """The first run id, by id, that starts with what is typed (read from the store)."""

    def __init__(self, feed: StoreFeed) -> None:
        # No cache: a run created while the box is open is completed too.
        super().__init__(use_cache=False, case_sensitive=True)
        self.feed = feed

    async def get_suggestion(self, value: str) -> str | None:
        found = await asyncio.to_thread(self.feed.run_ids_from, value, limit=1)
        return str(found[0]["run_id"]) if found else None


class JumpDialog(ModalScreen[str | None]):
    """Dismisses with the id of an existing run, or None when the operator backs out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back out", id="jump.cancel"),
        Binding("tab", "complete", "Complete", show=False, id="jump.complete"),
    ]

    def __init__(self, feed: StoreFeed) -> None:
        super().__init__(classes="dialog-screen")
        self.feed = feed
        self.found: list[dict[str, Any]] = []
        """The runs listed under the box, for what it held when they were read."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog jump"):
            yield Static("Go to run", classes="dialog-title")
            yield Input(
                placeholder="run id (tab or → completes)",
                suggester=RunIdSuggester(self.feed),
                id="jump-id",
            )
            yield Static("", id="jump-found", classes="dialog-body")
            yield Static("", id="jump-error", classes="dialog-error")
            yield Static("enter goes to the run · escape backs out", classes="dialog-hint")

    def on_mount(self) -> None:
        # At once, not after the queued keys: what is typed right behind `:` is the id.
        self.set_focus(self.query_one("#jump-id", Input))

    @property
    def box(self) -> Input:
        return self.query_one("#jump-id", Input)

    @on(Input.Changed, "#jump-id")
    def _changed(self, event: Input.Changed) -> None:
        self.query_one("#jump-error", Static).update("")
        self._look_up(event.value.strip())

    @work(exclusive=True, group="jump-look-up", exit_on_error=False,
          description="Look up run ids")  # fmt: skip
    async def _look_up(self, prefix: str) -> None:
        found = await asyncio.to_thread(self.feed.run_ids_from, prefix, limit=COMPLETIONS)
        if prefix != self.box.value.strip():
            return  # typed on meanwhile: that text's look-up answers
        self.found = found
        grid = Table.grid(padding=(0, 2))
        for row in found:  # two columns: the states line up
            grid.add_row(Text(shown(row["run_id"]), style="bold"),
                         Text(one_line(row["state"]), style="dim"))  # fmt: skip
        listed: Table | Text = grid
        if prefix and not found:
            listed = Text(f"no run id starts with {shown(prefix)}", style="dim italic")
        self.query_one("#jump-found", Static).update(listed)

    def action_complete(self) -> None:
        # The box's own right arrow at its end takes the suggestion shown.
        self.box.action_end()
        self.box.action_cursor_right()

    @on(Input.Submitted, "#jump-id")
    async def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        run_id = event.value.strip()
        if not run_id:
            self.dismiss(None)
            return
        found = await asyncio.to_thread(self.feed.run_ids_from, run_id, limit=1)
        if found and found[0]["run_id"] == run_id:
            self.dismiss(run_id)
            return
        self.query_one("#jump-error", Static).update(
            Text(f"There is no run {shown(run_id)}: type a run's id, or escape.")
        )
