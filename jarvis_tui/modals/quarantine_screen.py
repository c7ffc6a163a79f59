"""The quarantine (``Q``): the files the host refused, newest first, each with its reason and
its content (inert: masked and escaped, never markup), and replayed (``r``, after a yes) back
where it was found for the host to read again (`core.service.quarantine`).

The folder is read by a thread worker when the view opens, on ``f5`` and after a replay; a
file's content when the cursor rests on it. What a replay came to is said on the status line.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from core.service.quarantine import (
    Quarantined,
    quarantined,
    quarantined_content,
    replay_quarantined,
)
from jarvis_tui.feed import StoreFeed
from jarvis_tui.modals.confirm_dialog import ConfirmDialog
from jarvis_tui.modals.fleet_screen import cell
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.widgets.list_table import ListTable

COLUMNS = ("quarantined", "code", "lane", "state", "file")
#: The most files listed (the newest: names start with the time they were quarantined).
MAX_LISTED = 500


def _when(stamp: str) -> str:
    # 2026-11-28T03:00:00.123456Z → 11-28 03:00:00: the day and the time an operator scans.
    return stamp[5:19].replace("T", " ") if len(stamp) >= 19 else stamp


def _where(entry: Quarantined) -> Text:
    if entry.replayed_at:
        return cell("replayed", "dim")
    if entry.replayable:
        return cell("to replay", "yellow")
    if entry.outcome not in ("moved", "copied"):
        return cell(f"not here ({shown(entry.outcome)})", "red")
    return cell("kept", "red")


def file_cells(entry: Quarantined) -> tuple[Text, ...]:
    return (
        cell(_when(entry.quarantined_at), "dim"),
        cell(shown(entry.code), "bold"),
        cell(shown(entry.lane or "?")),
        _where(entry),
        cell(shown(entry.name)),
    )


def _place(original: str, root: Path) -> str:
    """Where the file was found: under the workspace, said from it."""
    try:
        return str(Path(original).relative_to(root.resolve()))
    except ValueError:
        return original or "?"


def reason_text(entry: Quarantined, content: str | None, root: Path, *, read: bool) -> Text:
    """The reason, then the file as text: every value from the file or its writer inert."""
    text = Text()
    text.append(f"{shown(entry.code)}: ", style="bold yellow")
    text.append(one_line(entry.message, 2000))
    text.append(f"\nfound at {shown(_place(entry.original_path, root))}", style="dim")
    text.append(f"\nquarantined {shown(entry.quarantined_at)} as {shown(entry.name)}", style="dim")
    if entry.why_not:
        text.append(f"\nnot replayable: {one_line(entry.why_not, 500)}", style="dim")
    text.append("\n\n")
    if not read:
        text.append("reading…", style="dim")
    elif content is None:
        text.append("The file is not in the quarantine to show.", style="dim")
    else:
        text.append(shown(content))
    return text


class ReplayDialog(ConfirmDialog):
    TITLE_TEXT = "Replay a quarantined file"
    CONFIRM = "Replay"
    KEEP = "Keep it quarantined"

    def __init__(self, entry: Quarantined) -> None:
        super().__init__()
        self.entry = entry

    def body(self) -> Text:
        return Text(
            f"Put {shown(self.entry.name)} back at {shown(self.entry.original_path)} for the "
            "host to read again. If it is refused again, it is quarantined again."
        )


class QuarantineScreen(ModalScreen[None]):
    """The quarantined files; escape closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="quarantine.close"),
        Binding("q,Q", "dismiss(None)", "Close", show=False, id="quarantine.quit"),
        Binding("r", "replay", "Replay", id="quarantine.replay"),
        Binding("f5", "read", "Refresh", id="quarantine.refresh"),
    ]

    def __init__(self, feed: StoreFeed, *, operator: str) -> None:
        super().__init__(classes="dialog-screen")
        self.root = feed.root
        self.operator = operator
        self.files: list[Quarantined] = []
        self.note = ""
        """What the last replay came to."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog quarantine", id="quarantine-dialog"):
            yield Static("Quarantine: files the host refused", classes="dialog-title",
                         markup=False)  # fmt: skip
            table: DataTable[Text] = ListTable(id="quarantine-files", cursor_type="row")
            yield table
            with VerticalScroll(id="quarantine-pane"):
                yield Static("", id="quarantine-file")
            yield Static("reading…", classes="dialog-hint", id="quarantine-status", markup=False)

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#quarantine-files", DataTable)

    def on_mount(self) -> None:
        self.table.add_columns(*COLUMNS)
        self.table.focus()
        self.action_read()

    def selected(self) -> Quarantined | None:
        if not self.files or self.table.row_count == 0:
            return None
        return self.files[min(max(self.table.cursor_row, 0), len(self.files) - 1)]

    @work(
        thread=True, exclusive=True, group="quarantine-read", description="reading the quarantine"
    )
    def action_read(self) -> None:
        files, _ = quarantined(self.root, limit=MAX_LISTED)
        self.app.call_from_thread(self._show, files)

    def _show(self, files: list[Quarantined]) -> None:
        keep = self.selected()
        self.files = files
        self.table.clear()
        for entry in files:
            self.table.add_row(*file_cells(entry), key=entry.name)
        names = [entry.name for entry in files]
        if keep is not None and keep.name in names:
            self.table.move_cursor(row=names.index(keep.name))
        waiting = sum(1 for entry in files if entry.replayable)
        said = f"{len(files)} files, {waiting} to replay. r replays the selected file; esc closes."
        if not files:
            said = "Nothing is quarantined: the host accepted every file it found."
        self.query_one("#quarantine-status", Static).update(
            Text(" ".join(part for part in (self.note, said) if part))
        )
        self._read_selected()

    @on(DataTable.RowHighlighted, "#quarantine-files")
    def _moved(self, event: DataTable.RowHighlighted) -> None:
        self._read_selected()

    def _read_selected(self) -> None:
        entry = self.selected()
        pane = self.query_one("#quarantine-file", Static)
        if entry is None:
            pane.update("")
            return
        pane.update(reason_text(entry, None, self.root, read=False))
        self._read_content(entry)

    @work(thread=True, exclusive=True, group="quarantine-file", description="reading a file")
    def _read_content(self, entry: Quarantined) -> None:
        content = quarantined_content(self.root, entry.name)
        self.app.call_from_thread(self._shown, entry, content)

    def _shown(self, entry: Quarantined, content: str | None) -> None:
        if self.selected() == entry:
            self.query_one("#quarantine-file", Static).update(
                reason_text(entry, content, self.root, read=True)
            )

    def action_replay(self) -> None:
        entry = self.selected()
        if entry is None:
            return
        if not entry.replayable:
            self.note = f"{entry.name} cannot be replayed: {(entry.why_not or '').rstrip('.')}."
            self._show(self.files)
            return
        self.app.push_screen(ReplayDialog(entry), partial(self._answered, entry))

    def _answered(self, entry: Quarantined, yes: bool | None) -> None:
        if yes:
            self._replay(entry)

    @work(thread=True, group="quarantine-replay", description="replaying a file")
    def _replay(self, entry: Quarantined) -> None:
        done = replay_quarantined(self.root, entry.name, self.operator)
        if done.ok:
            note = f"Replayed {entry.name}: the host reads it again."
        else:
            note = f"Refused: {done.message}"
        files, _ = quarantined(self.root, limit=MAX_LISTED)
        self.app.call_from_thread(self._replayed, shown(note), files)

    def _replayed(self, note: str, files: list[Quarantined]) -> None:
        self.note = note
        self._show(files)
