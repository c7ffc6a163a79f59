"""A yes/no question about one run: `y` or the first button confirms, `n` or escape keeps."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmDialog(ModalScreen[bool]):
    """Dismisses with True to go ahead, False to leave things as they are.

    Subclasses name the question (``TITLE``, ``CONFIRM``, ``KEEP``) and write its `body`.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", "Confirm", id="dialog.confirm"),
        Binding("n,escape", "dismiss(False)", "Keep", id="dialog.keep"),
    ]

    TITLE_TEXT: ClassVar[str] = ""
    CONFIRM: ClassVar[str] = ""
    """The first button's label, e.g. ``Retry``; ``(y)`` is added."""
    KEEP: ClassVar[str] = ""
    """The second button's label, e.g. ``Keep as is``; ``(n)`` is added."""
    BODY_ID: ClassVar[str | None] = None

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")

    def body(self) -> Text:
        raise NotImplementedError

    def title_text(self) -> str:
        return self.TITLE_TEXT

    def confirm_label(self) -> str:
        return self.CONFIRM

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text(), classes="dialog-title", markup=False)
            yield Static(self.body(), id=self.BODY_ID, classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm_label()} (y)", variant="warning", id="confirm")
                yield Button(f"{self.KEEP} (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm", Button).focus()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")


class ActionConfirmDialog(ConfirmDialog):
    """The confirmation of an operator action that declares nothing more to ask
    (`core.service.actions`): its title, its question, its verb on the first button."""

    KEEP = "Keep as is"

    def __init__(self, title: str, body: Text, *, confirm: str) -> None:
        super().__init__()
        self._title, self._confirm, self._body = title, confirm, body

    def body(self) -> Text:
        return self._body

    def title_text(self) -> str:
        return self._title

    def confirm_label(self) -> str:
        return self._confirm
