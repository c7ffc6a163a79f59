"""A table of a dialog's rows (the fleet's lanes, the quarantined files) that moves by the keys the
run table moves by: less's and vim's ``j`` ``k`` ``g`` ``G`` besides the arrows, each with an id
(``list.…``) so a keymap can change them."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import CellType


class ListTable(DataTable[CellType]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("g", "scroll_top", "First", show=False, id="list.top"),
        Binding("G", "scroll_bottom", "Last", show=False, id="list.bottom"),
    ]
