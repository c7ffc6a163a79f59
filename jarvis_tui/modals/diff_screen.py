"""The selected run's diff (``d``): its files with their line counts, then the patch, coloured,
scrolled, searched, and a key to the file a gate's finding names.

Every read is a thread worker posting a message back (`jarvis_tui.messages`): the opening (where
the diff is, its files and findings, its first page), the count of its lines and where each
file starts (`core.repos.diff.index_patch`), each further page as it comes into view
(`DiffView`), and each search. None holds the patch whole. The workers belong to this screen, so
closing it cancels them, and the passes over the whole patch stop at the next line they read.

A run with no diff (none checked yet, no repository, commits gone) shows core's one sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import Static
from textual.worker import get_current_worker

from core.service.diffs import DiffOpening, index_patch, patch_page, search_patch, shown_line
from core.service.text import mask_secrets
from jarvis_tui.feed import StoreFeed
from jarvis_tui.messages import DiffIndexed, DiffOpened, DiffPageRead, DiffSearched
from jarvis_tui.modals.pane_screen import PaneScreen, pane_bindings
from jarvis_tui.safe_text import inert, shown
from jarvis_tui.widgets.diff_view import PAGE_LINES, DiffView
from jarvis_tui.widgets.filter_line import FilterLine

if TYPE_CHECKING:
    from core.service.diffs import DiffSource, FileChange, PatchIndex, PatchSearch


def _count(value: int | None, sign: str) -> str:
    return "bin" if value is None else f"{sign}{value:,}"


def _path(path: str) -> str:
    return shown_line(mask_secrets(path))


class DiffScreen(PaneScreen):
    """One run's diff; escape closes it (the search first, when it is open)."""

    BINDINGS: ClassVar[list[BindingType]] = pane_bindings(
        "diff", after=[Binding("f", "finding", "Finding", id="diff.finding")]
    )

    def __init__(self, feed: StoreFeed, run_id: str) -> None:
        super().__init__(classes="dialog-screen")
        self.feed = feed
        self.run_id = run_id
        self.opening: DiffOpening | None = None
        """What the opening read found (None until it has)."""
        self.index: PatchIndex | None = None
        """The patch's length and where its files start (None until counted)."""
        self.search: PatchSearch | None = None
        """The last search of the patch that finished."""
        self.matches: list[int] = []
        """Rows holding the last search's text: the file list's, then the patch's."""
        self.match = -1
        """The match last gone to (-1: none yet)."""
        self.finding = -1
        """The finding's file last gone to (-1: none yet)."""
        self._finding_waits = False
        """`f` was pressed before the patch was counted: go once it is."""
        self._note = ""

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog diff", id="diff-dialog"):
            yield Static(
                Text(f"Diff of run {shown(self.run_id)}"),
                classes="dialog-title",
                id="diff-title",
                markup=False,
            )
            yield DiffView(read_page=self._read_page, id="diff-view")
            yield FilterLine(
                placeholder="search the diff (enter searches, escape closes)",
                on_change=lambda _value: None,  # searched on enter: each pass reads the patch
                id="diff-search",
            )
            yield Static("", classes="dialog-hint", id="diff-status", markup=False)

    def on_mount(self) -> None:
        view = self.diff_view
        view.set_head([Text("Reading the diff…", style="dim italic")])
        view.focus()
        self._show_status("")
        self._open()

    @property
    def diff_view(self) -> DiffView:
        return self.query_one("#diff-view", DiffView)

    @property
    def pane(self) -> DiffView:
        return self.diff_view

    @property
    def source(self) -> DiffSource | None:
        return self.opening.source if self.opening is not None else None

    def _show_status(self, note: str | None = None) -> None:
        """The status line: how long the patch is, the search or what a key just did, and the
        keys."""
        if note is not None:
            self._note = note
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.source is not None:
            if self.index is not None:
                line.append(f"{self.index.lines:,} lines", style="bold")
            else:
                line.append("counting lines…", style="italic")
            if self._note:
                line.append(f" · {self._note}")
            keys = " · / search · n N matches"
            if self.opening is not None and self.opening.findings:
                keys += " · f finding"
            line.append(keys + " · ←→ · esc closes", style="dim")
        else:
            if self._note:
                line.append(f"{self._note} · ")
            line.append("escape closes", style="dim")
        self.query_one("#diff-status", Static).update(line, layout=False)

    # -- reading ------------------------------------------------------------------------------

    @work(
        thread=True, exclusive=True, group="diff-open", exit_on_error=False,
        name="diff-open", description="Reading the diff",
    )  # fmt: skip
    def _open(self) -> None:
        self.post_message(DiffOpened(self.feed.diff_opening(self.run_id, page_lines=PAGE_LINES)))

    @work(
        thread=True, exclusive=True, group="diff-index", exit_on_error=False,
        name="diff-index", description="Counting the diff's lines",
    )  # fmt: skip
    def _index(self, source: DiffSource, files: list[str]) -> None:
        worker = get_current_worker()
        index = index_patch(
            source.repo, source.base, source.head, files=files, stop=lambda: worker.is_cancelled
        )
        if index is not None:
            self.post_message(DiffIndexed(index))

    def _read_page(self, page: int) -> None:
        """Read page ``page`` of the patch (the view asks for each page that comes into view)."""
        if self.source is not None:
            self._page(self.source, page, self.index)

    @work(
        thread=True, group="diff-page", exit_on_error=False,
        name="diff-page", description="Reading a page of the diff",
    )  # fmt: skip
    def _page(self, source: DiffSource, page: int, index: PatchIndex | None) -> None:
        got = patch_page(
            source.repo, source.base, source.head, page * PAGE_LINES, PAGE_LINES, index=index
        )
        self.post_message(DiffPageRead(page, got.lines, got.more))

    @work(
        thread=True, exclusive=True, group="diff-search", exit_on_error=False,
        name="diff-search", description="Searching the diff",
    )  # fmt: skip
    def _search(self, source: DiffSource, needle: str) -> None:
        worker = get_current_worker()
        found = search_patch(
            source.repo, source.base, source.head, needle, stop=lambda: worker.is_cancelled
        )
        if found is not None:
            self.post_message(DiffSearched(found))

    # -- what was read ------------------------------------------------------------------------

    @on(DiffOpened)
    def _opened(self, message: DiffOpened) -> None:
        opening = message.opening
        self.opening = opening
        view = self.diff_view
        source = opening.source
        if source is None or opening.first is None:
            self._show_refusal()
            self._show_status("")
            return
        title = Text(f"Diff of run {shown(self.run_id)}")
        title.append(
            f"  attempt {source.attempt} · {source.base[:12]}..{source.head[:12]}", style="dim"
        )
        self.query_one("#diff-title", Static).update(title, layout=False)
        view.set_head(self._file_lines(opening.files, opening.findings))
        view.start_patch()
        view.add_page(0, opening.first.lines, opening.first.more)
        self._show_status("")
        self._index(source, [f.path for f in opening.files])

    def _show_refusal(self) -> None:
        """Why there is no diff, wrapped to the view's width (the view cuts, never wraps)."""
        opening = self.opening
        if opening is None or opening.source is not None:
            return
        why = opening.refusal.message if opening.refusal else "There is no diff to show."
        view = self.diff_view
        width = max(20, view.size.width - 2)
        view.set_head(list(Text(shown(why)).wrap(self.app.console, width)))

    def on_resize(self, event: Resize) -> None:
        self._show_refusal()

    def _file_lines(self, files: list[FileChange], findings: list[str]) -> list[Text]:
        view = self.diff_view
        added_style = view.line_style("added")
        removed_style = view.line_style("removed")
        finding_style = view.line_style("finding")
        added = sum(f.additions or 0 for f in files)
        deleted = sum(f.deletions or 0 for f in files)
        lines = [
            Text.assemble(
                (f"{len(files):,} file{'s' if len(files) != 1 else ''} changed  ", "bold"),
                (f"+{added:,}", added_style),
                " ",
                (f"-{deleted:,}", removed_style),
            )
        ]
        plus = max((len(_count(f.additions, "+")) for f in files), default=1)
        minus = max((len(_count(f.deletions, "-")) for f in files), default=1)
        named = set(findings)
        for change in files:
            line = Text(f"  {change.status:<2}", style="bold")
            line.append(f"{_count(change.additions, '+'):>{plus}} ", style=added_style)
            line.append(f"{_count(change.deletions, '-'):>{minus}}  ", style=removed_style)
            line.append(_path(change.path))
            if change.path in named:
                line.append("  ⚠ finding (f)", style=finding_style)
            lines.append(line)
        lines.append(Text())
        return lines

    @on(DiffIndexed)
    def _indexed(self, message: DiffIndexed) -> None:
        self.index = message.index
        self.diff_view.set_total(message.index.lines)
        self._show_status()
        if self._finding_waits:
            self._finding_waits = False
            self.action_finding()

    @on(DiffPageRead)
    def _page_read(self, message: DiffPageRead) -> None:
        self.diff_view.add_page(message.page, message.lines, message.more)

    @on(DiffSearched)
    def _searched(self, message: DiffSearched) -> None:
        found = message.search
        view = self.diff_view
        if found.needle != view.needle:
            return  # a search since replaced this one
        self.search = found
        needle = found.needle.casefold()
        head = [row for row, line in enumerate(view.head) if needle in line.plain.casefold()]
        self.matches = head + [view.row_of(line) for line in found.matches]
        self.match = -1
        if not self.matches:
            self._show_status(f"no match for {inert(found.needle, keep_lines=False)}")
            return
        self.action_match(1)

    # -- keys ---------------------------------------------------------------------------------

    def action_search(self) -> None:
        if self.source is None:
            return
        search = self.query_one("#diff-search", FilterLine)
        search.value = ""  # a new search, as in a pager: n and N go on with the last one
        self.add_class("-searching")
        # Focus now, not after the queued keys: what is typed right behind `/` is the search.
        self.set_focus(search)

    @on(FilterLine.Submitted, "#diff-search")
    def _search_submitted(self, event: FilterLine.Submitted) -> None:
        event.stop()
        self.remove_class("-searching")
        self.set_focus(self.diff_view)
        needle = event.value.strip()
        source = self.source
        view = self.diff_view
        if not needle or source is None:
            view.needle = ""
            self.search, self.matches, self.match = None, [], -1
            view.refresh()
            self._show_status("")
            return
        view.needle = needle
        view.refresh()
        self.search, self.matches, self.match = None, [], -1
        self._show_status(f"searching for {inert(needle, keep_lines=False)}…")
        self._search(source, needle)

    def action_match(self, direction: int) -> None:
        """Go to the next (1) or previous (-1) match of the search, around the end."""
        if not self.matches:
            if self.search is None and not self.diff_view.needle:
                self._show_status("/ searches the diff first")
            return
        view = self.diff_view
        if self.match < 0:
            # The first match from where the operator is looking, in the direction asked.
            after = [i for i, row in enumerate(self.matches) if row >= view.top]
            if direction > 0:
                self.match = after[0] if after else 0
            else:
                self.match = (after[0] - 1) % len(self.matches) if after else len(self.matches) - 1
        else:
            self.match = (self.match + direction) % len(self.matches)
        view.go_to_row(self.matches[self.match], above=3)
        assert self.search is not None
        more = "+" if self.search.more else ""
        self._show_status(
            f"match {self.match + 1:,} of {len(self.matches):,}{more} for "
            f"{inert(self.search.needle, keep_lines=False)}"
        )

    def action_finding(self) -> None:
        """Go to the first hunk of the next file a gate's finding names."""
        findings = self.opening.findings if self.opening is not None else []
        if not findings:
            if self.source is not None:
                self._show_status("no finding of this run's gates names a file in its diff")
            return
        if self.index is None:
            self._finding_waits = True
            self._show_status("finding the file in the diff…")
            return
        self.finding = (self.finding + 1) % len(findings)
        path = findings[self.finding]
        line = self.index.first_hunk(path)
        if line is None:
            self._show_status(f"{_path(path)} has no part in the patch")
            return
        # The file's header lines above its first hunk stay in sight: they say what it is.
        span = self.index.spans[self.index.span_at(line)]
        self.diff_view.go_to_row(self.diff_view.row_of(line), above=min(8, line - span.start))
        self._show_status(f"finding {self.finding + 1} of {len(findings)}: {_path(path)}")
