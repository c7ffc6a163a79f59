"""Ask for the text to search a pane for (``/`` in the progress stream): one line, enter
searches, escape backs out. The box has the keys as soon as it opens: what is typed right
behind ``/`` is the search."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class SearchPrompt(ModalScreen[str | None]):
    """Dismisses with the text to search for ("" clears the search), None when backed out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back out", id="search.cancel"),
    ]

    def __init__(self, what: str, *, value: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.what = what
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog search"):
            yield Static(f"Search {self.what}", classes="dialog-title", markup=False)
            yield Input(self.value, placeholder="text (any case)", id="search-text")
            yield Static("enter searches · n N next and previous · escape backs out",
                         classes="dialog-hint")  # fmt: skip

    def on_mount(self) -> None:
        # At once, not after the queued keys: what is typed right behind `/` is the search.
        self.set_focus(self.query_one("#search-text", Input))

    @on(Input.Submitted, "#search-text")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())
