"""Every key the console answers to, grouped as an operator thinks of them.

The operator actions and the states each applies to are the engine's registry
(`core.service.actions.ACTIONS`), the state filter's keys and the symbols the lifecycle's: never
a list of their own.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from core.lifecycle import MergeState, VerificationState
from core.service.actions import ACTIONS
from core.service.stages import MERGE_PARENT, PARENT, Stage, or_list
from jarvis_tui.run_model import STATE_KEYS
from jarvis_tui.state_look import look


def _symbols(stages: tuple[Stage, ...]) -> str:
    return "  ".join(f"{look(stage)[0]} {stage}" for stage in stages)


def action_lines() -> tuple[tuple[str, str], ...]:
    """(key, what it does) of every operator action of the registry, in its order."""
    return tuple(
        (entry.key, entry.help.format(stages=or_list(entry.applies_to) if entry.applies_to
                                      else "", symbols=_symbols(entry.applies_to)))
        for entry in ACTIONS.values()
    )  # fmt: skip


_FILTERS = [state for state in STATE_KEYS.values() if state]

_VERIFICATION = tuple(VerificationState)
_ESCAPE = "Back to the run table (from the filter, clearing it; a panel; the steer)"

Sections = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def help_sections() -> Sections:
    """(section, [(keys, what it does)]). tests/tui checks every main-screen binding is listed."""
    return (
        (
            "Act on the selected run",
            (
                *action_lines(),
                ("enter", "Everything about the run: dispatch, gates, steers, audit"),
                ("d", "The run's diff: files, then the patch (/ search, n N, f a finding's file)"),
                ("l", "The run's worker log, live while it runs (t stderr, / search, n N)"),
                (
                    "y",
                    "Copy the run's id, branch, commit or PR URL (then i b c p) to the clipboard",
                ),
            ),
        ),
        (
            "Marks",
            (
                ("space", "Mark the selected run, or unmark it (+ before its id)"),
                ("U", "Unmark every run"),
                (
                    "r a x o",
                    "With runs marked: retry, approve, cancel or override them all, "
                    "asked once (one reason), each run's result said",
                ),
            ),
        ),
        (
            "Move",
            (
                ("↑↓ j k", "Up and down: the table, a panel, the log, the diff"),
                ("g G", "The first and the last (home end; in the stream G follows again)"),
                ("^d ^u", "Half a page down and up (ctrl+d ctrl+u; pgdn pgup a page)"),
            ),
        ),
        (
            "Find runs",
            (
                ("/", "Filter by text (run id, lane, task, state, progress); escape clears"),
                (
                    ":",
                    "Go to a run by id, completed from the store (tab takes it); a filter "
                    "hiding it is cleared",
                ),
                ("!", "Attention view: runs that need a human, the longest-waiting first"),
                (f"1-{len(_FILTERS)}", f"Only {', '.join(_FILTERS)}"),
                (
                    "",
                    f"{_symbols((PARENT,))} and its criteria: {_symbols(tuple(VerificationState))}",
                ),
                (
                    "",
                    f"{_symbols((MERGE_PARENT,))} approved, its host merging: "
                    f"{_symbols(tuple(MergeState))}",
                ),
                ("0", "Every state again"),
                ("S", "Sort by the next column (age, updated, state, run, lane, task, retries)"),
                ("R", "Reverse the sort"),
                ("ctrl+p", "Command palette: run actions, go to run…, views, theme"),
            ),
        ),
        (
            "Panels",
            (
                ("p c", "Go to the progress stream, or the gates: the page keys scroll it"),
                (
                    "escape",
                    "Back to the run table (from the filter, clearing it; a panel; the steer)",
                ),
                ("t", "Progress stream: the selected run, or all runs at once"),
                ("end G", "Progress stream: follow the newest entry again (scrolling up pauses)"),
                (
                    "/ n N",
                    "Progress stream: search it (any case), the next and previous match; "
                    "a match holds it still",
                ),
                ("tab", "Move between the table and the panels"),
            ),
        ),
        (
            "Console",
            (
                ("F", "Fleet: every lane (worker, sandbox, runs; p pauses, u resumes) and host"),
                ("Q", "Quarantine: the files the host refused, why, their content; r replays"),
                ("f5", "Read the store now"),
                ("Z", "Mute the bell and desktop notifications for an hour; Z again unmutes"),
                ("? f1", "This help"),
                ("q", "Quit (a host this console started keeps the runs going)"),
            ),
        ),
    )


HELP: Sections = help_sections()


def help_table() -> Group:
    """One heading and one two-column grid per section (a heading in the key column would
    widen it for every row)."""
    parts: list[Text | Table] = []
    for section, keys in help_sections():
        parts.append(Text(section, style="bold underline"))
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True, width=7)
        table.add_column()
        for key, what in keys:
            table.add_row(key, what)
        parts.extend([table, Text("")])
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss(None)", "Close help", id="help.close"),
    ]

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield Static("Keys", classes="dialog-title")
            yield Static(help_table(), classes="dialog-body")
            yield Static("escape closes", classes="dialog-hint")
