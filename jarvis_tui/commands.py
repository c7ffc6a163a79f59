"""The command palette (ctrl+p): run actions, "go to run…", views, sorts, themes.

The run actions are the engine's registry (`core.service.actions.ACTIONS`), each once.

Titles read "category: action" so typing the category lists its commands.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from core.service.actions import ACTIONS, availability
from core.service.window import RunsView
from jarvis_tui.run_model import STATE_KEYS
from jarvis_tui.safe_text import shown
from jarvis_tui.theme import THEMES
from jarvis_tui.widgets.run_table import SORT_CYCLE, SORTS

if TYPE_CHECKING:
    from jarvis_tui.screens.main_screen import MainScreen

#: At most this many "go to run" hits per search: the palette is for finding one run.
MAX_RUN_HITS = 30
#: Runs matching the text read for the palette; those whose id holds it are offered.
RUN_LOOKUP = 200
#: What begins a "go to run" search, longest first.
GO_TO = ("go to run", "go to")

Command = tuple[str, str, Callable[[], object]]


class JarvisCommands(Provider):
    """Commands over the main screen's selected run and view."""

    def _main(self) -> MainScreen | None:
        from jarvis_tui.screens.main_screen import MainScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def _commands(self, main: MainScreen) -> Iterator[Command]:
        row = main.selected_row()
        run_id = shown(row["run_id"]) if row else "(no run selected)"
        for action, entry in ACTIONS.items():
            key, label = entry.key, entry.label
            can = availability(action, main.action_subject(action))
            if can.enabled:
                yield (
                    f"Run: {label} {run_id}",
                    f"key {key}",
                    partial(main.action_run_action, action),
                )
            else:
                yield (
                    f"Run: {label} {run_id}",
                    f"not possible: {can.reason}",
                    partial(main.notify, can.reason, title=f"{label}: not possible",
                            severity="warning", markup=False),
                )  # fmt: skip
        yield "Run: Details", "key enter", main.action_details
        yield f"Run: Diff {run_id}", "key d", main.action_diff
        yield f"Run: Logs {run_id}", "key l", main.action_logs
        yield f"Run: Copy id, branch, commit or PR URL of {run_id}", "key y", main.action_copy
        yield f"Marks: Mark or unmark {run_id}", "key space", main.action_mark
        yield "Marks: Unmark every run", "key U", main.action_clear_marks
        yield "View: Go to run by id", "key :", main.action_jump
        yield "View: Needs a human (attention)", "key !", main.action_attention
        for key, state in STATE_KEYS.items():
            label = state or "every state"
            yield f"View: Only {label}", f"key {key}", partial(main.action_state_filter, state)
        yield "View: Filter by text", "key /", main.action_filter
        for sort in SORT_CYCLE:
            yield f"Sort: By {SORTS[sort][0]}", "key S cycles", partial(main.set_sort, sort)
        yield "Stream: Toggle all runs / selected run", "key t", main.action_toggle_stream
        yield "Console: Mute or unmute notifications (an hour)", "key Z", main.action_mute
        yield "Fleet: Lanes and hosts (pause, resume a lane)", "key F", main.action_fleet
        yield "Fleet: Quarantined files (show, replay)", "key Q", main.action_quarantine
        for name in THEMES:
            yield f"Theme: {name}", "change the console's colours", partial(self._theme, name)

    def _theme(self, name: str) -> None:
        self.app.theme = name

    async def discover(self) -> Hits:
        main = self._main()
        if main is None:
            return
        for title, help_text, callback in self._commands(main):
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        main = self._main()
        if main is None:
            return
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands(main):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
        async for hit in self._run_hits(main, query):
            yield hit

    async def _run_hits(self, main: MainScreen, query: str) -> AsyncIterator[Hit]:
        # "go to run": a plain substring of the run id, looked up in the store (the console
        # holds a window of the runs, not all of them), off the screen's thread. "go to" with
        # no id yet lists the newest runs: help advertises it, and it offered nothing.
        needle = go_to_needle(query)
        if needle is None:
            return
        view = RunsView(text=needle, sort="run", descending=False) if needle else RunsView()
        page = await asyncio.to_thread(main.feed.window, view, limit=RUN_LOOKUP)
        found = 0
        for row in page.rows:
            run_id = str(row["run_id"])
            if needle in run_id.lower():
                title = f"Go to run: {shown(run_id)}"
                yield Hit(0.9, title, partial(main.go_to_run, run_id), help=str(row["state"]))
                found += 1
                if found >= MAX_RUN_HITS:
                    return


def go_to_needle(query: str) -> str | None:
    """The part of a palette search that names a run: what follows "go to run" (or "go to"),
    "" when the search is "go to run" or a start of it (list runs), the search itself else;
    None when there is nothing to look up."""
    text = query.lower().strip()
    for prefix in GO_TO:
        if text.startswith(prefix):
            return text.removeprefix(prefix).strip(" :")
    if len(text) >= 2 and GO_TO[0].startswith(text):
        return ""
    return text or None
