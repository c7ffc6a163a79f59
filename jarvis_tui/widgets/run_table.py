"""The run table: one row per run, keyed by run id, updated in place as snapshots arrive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from jarvis_tui.safe_text import inert
from jarvis_tui.state_look import state_text

#: (key, label, width). Fixed widths: a live update never makes the columns jump.
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("run", "run", 18),
    ("lane", "lane", 16),
    ("state", "state", 20),
    ("retries", "retries", 7),
    ("overridden", "ovr", 3),
    ("progress", "last progress", 40),
)


def cells(row: dict[str, Any]) -> tuple[Text, ...]:
    """The table cells for one run summary, every worker-supplied string made inert.

    Cells are `Text`, never `str`: DataTable parses a `str` cell as markup.
    """
    return (
        Text(inert(str(row["run_id"]))),
        Text(inert(str(row.get("lane") or ""))),
        state_text(str(row["state"])),
        Text(str(row.get("retry_count") or 0), justify="right"),
        Text("!" if row.get("overridden") else "", style="bold"),
        Text(inert(str(row.get("last_progress_summary") or "")), no_wrap=True),
    )


def _same(old: Text, new: Text) -> bool:
    # Text's own == ignores the base style, and a state's colour lives there.
    return old.plain == new.plain and old.style == new.style and old.spans == new.spans


class RunTable(DataTable[Text]):
    """Runs, most recently updated first. `apply` brings it up to date without a rebuild."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        for key, label, width in COLUMNS:
            self.add_column(label, key=key, width=width)

    @property
    def run_ids(self) -> list[str]:
        """The run ids shown, top to bottom."""
        return [str(key.value) for key in self.rows]

    def apply(self, rows: Sequence[dict[str, Any]]) -> None:
        """Show ``rows``: drop runs that are gone, change only cells that changed, add new runs.

        Rows keep their keys (and the cursor its run) across updates; nothing is cleared.
        """
        wanted = {str(row["run_id"]): row for row in rows}
        with self.app.batch_update():
            for key in list(self.rows):
                if key.value not in wanted:
                    self.remove_row(key)
            for run_id, row in wanted.items():
                new = cells(row)
                if run_id in self.rows:
                    for (column, _label, _width), value in zip(COLUMNS, new, strict=True):
                        if not _same(self.get_cell(run_id, column), value):
                            self.update_cell(run_id, column, value, update_width=False)
                else:
                    self.add_row(*new, key=run_id)
