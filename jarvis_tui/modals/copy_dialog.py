"""Copy a value of the selected run (``y``, as in vim's yank): its id, branch, commit or PR URL.

The dialog lists each value with its key (``i`` ``b`` ``c`` ``p``), so ``y b`` copies the branch
at once and a value the run does not have yet is seen missing before it is asked for. The
copy itself is the App's (`App.copy_to_clipboard`: an OSC 52 escape, which terminals pass to
the clipboard of the machine the operator sits at, over SSH too).

The values come from workers: what is copied is made inert first (`clipboard_text`): no
control character reaches the escape or the paste (a newline pasted in a shell runs what came
before it), and a secret the engine's scanner knows is masked, as everywhere on screen.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from core.service.text import mask_secrets
from jarvis_tui.safe_text import one_line, shown

#: (key, what, field of the run) in the dialog's order.
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("i", "id", "run_id"),
    ("b", "branch", "branch_name"),
    ("c", "commit", "commit_sha"),
    ("p", "PR URL", "pr_url"),
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clipboard_text(value: object) -> tuple[str, bool]:
    """``value`` as it may be copied: secrets masked, control characters removed; and whether
    any were removed (the operator is told)."""
    text = mask_secrets(str(value))
    clean = _CONTROL.sub("", text)
    return clean, clean != text


def run_values(row: dict[str, Any], detail: dict[str, Any] | None) -> dict[str, str | None]:
    """Each field's value for the run (``detail``: its full record when read, which alone
    holds the branch), None when the run has none (yet)."""
    merged = {**(detail or {}), **row}
    values: dict[str, str | None] = {}
    for _key, _what, field in FIELDS:
        value = merged.get(field)
        values[field] = str(value) if value not in (None, "") else None
    return values


class CopyDialog(ModalScreen[str | None]):
    """Dismisses with the field chosen (``branch_name``…), or None when backed out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *[
            Binding(key, f"dismiss({field!r})", f"Copy the {what}", id=f"copy.{field}")
            for key, what, field in FIELDS
        ],
        Binding("escape,q", "dismiss(None)", "Back out", id="copy.cancel"),
    ]

    def __init__(self, run_id: str, values: dict[str, str | None]) -> None:
        super().__init__(classes="dialog-screen")
        self.run_id = run_id
        self.values = values

    def compose(self) -> ComposeResult:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="ellipsis", no_wrap=True)
        for key, what, field in FIELDS:
            value = self.values.get(field)
            grid.add_row(
                key,
                what,
                Text(one_line(value, 120)) if value else Text("none yet", style="dim italic"),
            )
        with Vertical(classes="dialog copy"):
            yield Static(Text(f"Copy from run {shown(self.run_id)}"), classes="dialog-title")
            yield Static(grid, classes="dialog-body")
            yield Static("a key copies to the clipboard · escape backs out", classes="dialog-hint")
