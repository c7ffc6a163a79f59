"""A `TextPane` of one row per line (not wrapped) that is searched: ``/``, then ``n`` and ``N``.

Every row holding the text (any case) is highlighted; the match gone to is marked and brought
into view a few rows below the top. Going to a match holds the pane still: a pane that follows
new lines (the progress stream) stops following while a match is gone to, so new lines never
move the match away; the bottom (``G``, ``end``) follows again. What the search found, or that
it found nothing, is the pane's subtitle (`search_note`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType

from jarvis_tui.modals.search_prompt import SearchPrompt
from jarvis_tui.safe_text import inert
from jarvis_tui.widgets.text_pane import TextPane

#: Rows kept above the match gone to.
ABOVE = 3


class SearchablePane(TextPane):
    """Rows searched for a text; the match gone to is held in view."""

    DEFAULT_CSS = """
    SearchablePane > .searchable-pane--match { background: $warning 50%; }
    SearchablePane > .searchable-pane--current { background: $primary 40%; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"searchable-pane--match", "searchable-pane--current"}

    #: What the search prompt calls the pane ("the progress stream").
    SEARCHED = "the pane"

    def __init__(
        self,
        *,
        max_lines: int | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
        classes: str | None = None,
    ) -> None:
        # One row per line: a match is a line, and rows move only when lines are let go.
        super().__init__(wrap=False, max_lines=max_lines, id=id, classes=classes)
        self.needle = ""
        """The text searched for ("" no search)."""
        self.current: int | None = None
        """The row of the match gone to, or None."""
        self.search_note = ""
        """What the last search found: ``match 2 of 5 for x``, ``no match for x``."""

    @classmethod
    def search_bindings(cls, prefix: str) -> list[BindingType]:
        """``/``, ``n`` and ``N``, with ids ``prefix.search``, ``.next``, ``.previous``."""
        return [
            Binding("slash", "search", "Search", show=False, id=f"{prefix}.search"),
            Binding("n", "match(1)", "Next match", show=False, id=f"{prefix}.next"),
            Binding("N", "match(-1)", "Previous match", show=False, id=f"{prefix}.previous"),
        ]

    # -- searching ------------------------------------------------------------------------------

    def action_search(self) -> None:
        self.app.push_screen(SearchPrompt(self.SEARCHED, value=self.needle), self.search_for)

    def search_for(self, needle: str | None) -> None:
        """Search for ``needle`` from the top row on screen ("" ends the search; None: the
        operator backed out, nothing changes)."""
        if needle is None:
            return
        self.needle = needle
        self.current = None
        self.search_note = ""
        if needle:
            self.action_match(1)
        self.searched()
        self.redraw()

    def matches(self) -> list[int]:
        """The rows holding the search, any case."""
        wanted = self.needle.casefold()
        if not wanted:
            return []
        return [index for index, row in enumerate(self.rows) if wanted in row.plain.casefold()]

    def action_match(self, direction: int) -> None:
        """Go to the next (1) or previous (-1) match, round the end."""
        if not self.needle:
            self.search_note = "/ searches first"
            self.searched()
            return
        found = self.matches()
        what = inert(self.needle, keep_lines=False)
        if not found:
            self.search_note = f"no match for {what}"
            self.searched()
            # Said aloud too: where the panels fold into tabs the pane has no subtitle.
            self.notify(self.search_note, title="Search", severity="warning", markup=False)
            return
        start = self.current if self.current is not None else self.top - direction
        if direction > 0:
            after = [index for index in found if index > start]
            target = after[0] if after else found[0]
        else:
            before = [index for index in found if index < start]
            target = before[-1] if before else found[-1]
        self.current = target
        self.search_note = f"match {found.index(target) + 1} of {len(found)} for {what}"
        self.scroll_to_row(target - ABOVE)
        self.searched()
        self.redraw()

    def searched(self) -> None:
        """Called when what the search found changed (a subclass shows `search_note`)."""

    # -- content ----------------------------------------------------------------------------------

    def append_lines(self, lines: Iterable[Text]) -> int:
        dropped = super().append_lines(lines)
        if dropped and self.current is not None:
            # The match gone to keeps its place, or is gone with the rows let go.
            self.current = self.current - dropped if self.current >= dropped else None
            self.redraw()
        return dropped

    def row_text(self, index: int) -> Text:
        row = super().row_text(index)
        if not self.needle and self.current is None:
            return row
        row = row.copy()
        if index == self.current:  # first: the match's own highlight shows over it
            row.stylize(self._style("searchable-pane--current"))
        if self.needle:
            row.highlight_words([self.needle], self._style("searchable-pane--match"),
                                case_sensitive=False)  # fmt: skip
        return row

    def _style(self, component: str) -> Style:
        return self.get_component_rich_style(component)
