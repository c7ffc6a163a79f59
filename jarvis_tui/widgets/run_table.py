"""The run table: one row per run, keyed by run id, updated in place as changes arrive.

The table holds only what is visible under the current view (filter text, state filter,
attention view); the full model of every run lives in `RunModel`, which the screen owns. Live
changes touch only the rows that changed; only an operator's change of view rebuilds the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import STEER_LOOK, state_text

Row = dict[str, Any]

#: (key, label, width). Fixed widths: a live update never makes the columns jump. The columns an
#: operator decides by come first, so an 80-column terminal still shows them.
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("run", "run", 18),
    ("state", "state", 18),
    ("retries", "↻", 2),
    ("overridden", "ovr", 3),
    ("age", "age", 4),
    ("gates", "gates", 5),
    ("steers", "steers", 7),
    ("lane", "lane", 16),
    ("task", "task", 10),
    ("progress", "last progress", 60),
)

SORTS: dict[str, tuple[str, Callable[[Row], Any]]] = {
    "age": ("age", lambda r: r.get("created_at") or ""),
    "updated": ("updated", lambda r: r.get("updated_at") or ""),
    "run": ("run id", lambda r: r["run_id"]),
    "state": ("state", lambda r: r.get("state") or ""),
    "lane": ("lane", lambda r: r.get("lane") or ""),
    "task": ("task type", lambda r: r.get("task_type") or ""),
    "retries": ("retries", lambda r: r.get("retry_count") or 0),
}
"""Sort key name → (label, key function over a table row)."""

SORT_CYCLE = ("age", "updated", "state", "run", "lane", "task", "retries")


def parse_time(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def age_text(stamp: str | None, now: datetime) -> str:
    """A coarse age (``42s``, ``7m``, ``3h``, ``12d``): coarse enough to change rarely."""
    moment = parse_time(stamp)
    if moment is None:
        return ""
    if moment.tzinfo is None or now.tzinfo is None:
        moment, now = moment.replace(tzinfo=None), now.replace(tzinfo=None)
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 60:
        return "<1m"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return ""  # unreachable: seconds >= 60 here


def gates_text(gates: dict[str, int] | None) -> Text:
    if not gates:
        return Text("")
    passed, total = gates["passed"], gates["total"]
    if passed == total:
        return Text(f"✓{passed}/{total}", style="green")
    return Text(f"✗{passed}/{total}", style="bold red")


def steers_text(steers: dict[str, int]) -> Text:
    """The run's steer receipts by status, e.g. ``✓2 ⌛1``."""
    text = Text()
    for status, (symbol, style) in STEER_LOOK.items():
        count = steers.get(status)
        if count:
            if text:
                text.append(" ")
            text.append(f"{symbol}{count}", style=style)
    return text


class RunCell(Text):
    """The run-id cell, which remembers its run: `DataTable.sort` hands a key function cells,
    not row keys, and the shown id may differ from the real one (masked, escaped)."""

    run_id: str


def _run_cell(run_id: str) -> RunCell:
    cell = RunCell(shown(run_id), no_wrap=True)
    cell.run_id = run_id
    return cell


def cells(row: Row, now: datetime) -> tuple[Text, ...]:
    """The table cells for one run, every worker-supplied string made inert.

    Cells are `Text`, never `str`: DataTable parses a `str` cell as markup.
    """
    return (
        _run_cell(str(row["run_id"])),
        state_text(str(row["state"])),
        Text(str(row.get("retry_count") or 0) if row.get("retry_count") else "", justify="right"),
        Text("!" if row.get("overridden") else "", style="bold magenta"),
        Text(age_text(row.get("created_at"), now), justify="right"),
        gates_text(row.get("gates")),
        steers_text(row.get("steers") or {}),
        Text(shown(row.get("lane") or ""), no_wrap=True),
        Text(shown(row.get("task_type") or ""), no_wrap=True),
        Text(one_line(row.get("last_progress_summary") or ""), no_wrap=True),
    )


def _same(old: Text, new: Text) -> bool:
    # Text's own == ignores the base style, and a state's colour lives there.
    return old.plain == new.plain and old.style == new.style and old.spans == new.spans


class RunTable(DataTable[Text]):
    """The runs of the current view, keyed by run id."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        for key, label, width in COLUMNS:
            self.add_column(label, key=key, width=width)

    @property
    def run_ids(self) -> list[str]:
        """The run ids shown, top to bottom."""
        return [
            str(self.coordinate_to_cell_key(Coordinate(i, 0)).row_key.value)
            for i in range(self.row_count)
        ]

    @property
    def selected_run_id(self) -> str | None:
        """The run under the cursor, if any."""
        if self.row_count == 0:
            return None
        return str(self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value)

    def replace_rows(self, rows: Iterable[Row], now: datetime, keep: str | None) -> None:
        """Show exactly ``rows`` in order (a change of view), keeping the cursor on ``keep``."""
        with self.app.batch_update():
            self.clear()
            for row in rows:
                self.add_row(*cells(row, now), key=row["run_id"])
            self.move_to(keep)

    def upsert(self, row: Row, now: datetime) -> bool:
        """Bring one run's row up to date, adding it if absent. True when a row was added."""
        run_id = row["run_id"]
        new = cells(row, now)
        if run_id in self.rows:
            for (column, _label, _width), value in zip(COLUMNS, new, strict=True):
                if not _same(self.get_cell(run_id, column), value):
                    self.update_cell(run_id, column, value, update_width=False)
            return False
        self.add_row(*new, key=run_id)
        return True

    def order_by(self, key: Callable[[str], Any], *, reverse: bool) -> None:
        """Re-order the rows by ``key(run_id)``, the cursor staying on its run."""
        keep = self.selected_run_id
        self.sort("run", key=lambda cell: key(cell.run_id), reverse=reverse)
        self.move_to(keep)

    def drop(self, run_id: str) -> None:
        if run_id in self.rows:
            self.remove_row(run_id)

    def move_to(self, run_id: str | None) -> None:
        """Put the cursor on ``run_id`` when it is shown (else leave it where it is)."""
        if run_id is not None and run_id in self.rows:
            self.move_cursor(row=self.get_row_index(run_id), animate=False, scroll=True)
