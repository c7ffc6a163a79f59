"""Every run the console knows, and which of them the current view shows, in which order.

Plain Python (no widgets), so the rules of the view are tested on their own: the text filter
(`/`), the state filter (number keys), the attention view (`!`) and the sort order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.run_views import needs_attention
from jarvis_tui.widgets.run_table import SORTS

Row = dict[str, Any]

#: Number key → state filter (0 shows every state).
STATE_KEYS: dict[str, str | None] = {
    "0": None,
    "1": "queued",
    "2": "running",
    "3": "review_requested",
    "4": "failed_contract",
    "5": "failed",
    "6": "done",
}


@dataclass
class View:
    """What the operator asked to see."""

    text: str = ""
    """Case-insensitive substring of run id, lane, task type, state or last progress."""
    state: str | None = None
    """Only runs in this state."""
    attention: bool = False
    """Only runs that need a human, the longest-waiting first (overrides the sort)."""
    sort: str = "age"
    """A key of `SORTS`."""
    reverse: bool = True
    """Descending: newest first for ``age``."""

    def describe(self) -> str:
        """The view in words, for the table's title."""
        parts = ["needs a human, oldest first" if self.attention else "all runs"]
        if self.state:
            parts.append(f"state {self.state}")
        if self.text:
            parts.append(f"matching “{self.text}”")
        if not self.attention:
            label = SORTS[self.sort][0]
            parts.append(f"by {label} {'↓' if self.reverse else '↑'}")
        return " · ".join(parts)


def _haystack(row: Row) -> str:
    fields = ("run_id", "lane", "task_type", "state", "last_progress_summary", "state_reason")
    return "\n".join(str(row.get(name) or "") for name in fields).lower()


class RunModel:
    """Rows by run id, and the view over them."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.view = View()
        self._haystacks: dict[str, tuple[Row, str]] = {}

    def load(self, rows: Iterable[Row]) -> None:
        """Replace every row (a full read)."""
        self.rows = {row["run_id"]: row for row in rows}

    def update(self, rows: Iterable[Row]) -> None:
        for row in rows:
            self.rows[row["run_id"]] = row

    def shows(self, row: Row) -> bool:
        """Whether ``row`` belongs in the current view."""
        view = self.view
        if view.attention and not needs_attention(row):
            return False
        if view.state and row.get("state") != view.state:
            return False
        return not view.text or view.text.lower() in self._haystack(row)

    def _haystack(self, row: Row) -> str:
        # Cached per row object: a filter keystroke over 10,000 runs must not rebuild them all.
        cached = self._haystacks.get(row["run_id"])
        if cached is None or cached[0] is not row:
            cached = (row, _haystack(row))
            self._haystacks[row["run_id"]] = cached
        return cached[1]

    def sort_key(self, run_id: str) -> Any:
        row = self.rows.get(run_id)
        if row is None:
            return ("", run_id)
        if self.view.attention:
            # Oldest wait first: when the run last changed is when it started waiting.
            return (row.get("updated_at") or "", run_id)
        return (SORTS[self.view.sort][1](row), run_id)

    @property
    def reverse(self) -> bool:
        return False if self.view.attention else self.view.reverse

    def visible(self) -> list[Row]:
        """The rows of the current view, in order."""
        rows = [row for row in self.rows.values() if self.shows(row)]
        rows.sort(key=lambda row: self.sort_key(row["run_id"]), reverse=self.reverse)
        return rows

    def attention_count(self) -> int:
        return sum(1 for row in self.rows.values() if needs_attention(row))
