"""The main screen's keys: its bindings, which of them can act now, and the operator actions.

The run actions' keys come from the engine's registry (`core.service.actions.ACTIONS`): one
binding each, dimmed on the key bar when the run on show does not allow it (`check_action`
returns None), and the key then says why (`on_key`). The other keys are the view's.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.events import Key
from textual.widgets import Input, TextArea

from core.service.actions import ACTIONS, availability
from jarvis_tui.run_model import STATE_KEYS, RunModel
from jarvis_tui.screens.main_parts import ScreenParts
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.progress_stream import ProgressStream


def run_action_bindings() -> list[BindingType]:
    """A binding for each operator action of the registry, in its order.

    Priority: the action runs as the App routes the key, so what is typed right behind it,
    queued in the same read, goes where the action sent the focus (the filter, the steer, a
    dialog). As ordinary bindings they acted only once the table handled them, and the keys
    behind had been routed to the table already: `/app` approved the selected run.
    `check_action` gives them up while a text box has the focus.
    """
    return [
        Binding(
            entry.key,
            f"run_action({name!r})",
            entry.label,
            id=f"run.{name}",
            tooltip=entry.tooltip,
            show=entry.show,
            priority=True,
        )  # fmt: skip
        for name, entry in ACTIONS.items()
    ]


def main_bindings() -> list[BindingType]:
    """Every binding of the main screen: the operator actions', then the view's."""
    return [
        *run_action_bindings(),
        Binding("enter", "details", "Details", id="run.details", show=False),
        Binding(
            "slash",
            "filter",
            "Filter",
            id="view.filter",
            tooltip="Filter runs by text",
            priority=True,
        ),  # fmt: skip
        # Priority too, and never given up while typing: the key right behind escape (in one
        # read over a slow link) is for the table, so the focus must be back there before it
        # is routed. As a plain binding it reached the box being left: `º` in the composer.
        # On the key bar only where it does something (`check_action`).
        Binding(
            "escape",
            "back_to_runs",
            "Back to runs",
            id="view.back",
            tooltip="Leave the filter, a panel or the composer for the run table",
            priority=True,
        ),  # fmt: skip
        Binding("exclamation_mark", "attention", "Attention", id="view.attention"),
        *move_bindings(),
        # After the view keys: at 80 columns the bar has no room left for it (help lists it),
        # and the run keys and the filter keep theirs.
        Binding(
            "d",
            "diff",
            "Diff",
            id="run.diff",
            tooltip="The selected run's diff: its files, then the patch",
            priority=True,
        ),
        # Not on the key bar: at 80 columns the bar is full before `d` (help and the palette
        # list it).
        Binding(
            "l",
            "logs",
            "Logs",
            id="run.logs",
            tooltip="The selected run's worker log, followed live while it runs",
            show=False,
            priority=True,
        ),  # fmt: skip
        Binding("question_mark,f1", "help", "Help", id="help", tooltip="Every key"),
        Binding("S", "sort_next", "Sort", id="view.sort", show=False),
        Binding("R", "sort_reverse", "Reverse sort", id="view.reverse", show=False),
        Binding("t", "toggle_stream", "All runs", id="stream.toggle", show=False),
        Binding("p", "panel('progress')", "Progress", id="panel.progress", show=False),
        # Not g: g and G are the top and the bottom of the table and the panes, as in less.
        Binding("c", "panel('gates')", "Gates", id="panel.gates", show=False),
        Binding("f5", "refresh", "Refresh", id="refresh", show=False),
        Binding(
            "Z",
            "mute",
            "Mute",
            id="console.mute",
            show=False,
            tooltip="Mute the bell and desktop notifications for an hour; again to unmute",
        ),
        Binding(
            "F",
            "fleet",
            "Fleet",
            id="view.fleet",
            show=False,
            tooltip="The lanes (pause, resume) and the hosts",
        ),
        Binding(
            "Q",
            "quarantine",
            "Quarantine",
            id="view.quarantine",
            show=False,
            tooltip="The files the host refused: why, their content, replay",
        ),
        *[
            Binding(
                key,
                f"state_filter({str(state) if state else None!r})",
                state or "all states",
                show=False,
                id=f"view.state.{state or 'all'}",
            )  # fmt: skip
            for key, state in STATE_KEYS.items()
        ],
    ]


def move_bindings() -> list[BindingType]:
    """Going to a run by id, copying, marks. Priority, as the action keys: what is typed right
    behind ``:`` or ``y`` is for the dialog it opens, and an action key right behind a mark
    acts on the marks (`check_action` gives them up while typing)."""
    return [
        Binding("colon", "jump", "Go to run", id="view.jump", show=False, priority=True,
                tooltip="Go to a run by id (completed from the store)"),
        Binding("y", "copy", "Copy", id="run.copy", show=False, priority=True,
                tooltip="Copy the run's id, branch, commit or PR URL"),
        Binding("space", "mark", "Mark", id="marks.toggle", show=False, priority=True,
                tooltip="Mark the run or unmark it: action keys act on the marked runs"),
        Binding("U", "clear_marks", "Unmark all", id="marks.clear", show=False, priority=True),
    ]  # fmt: skip


class RunKeys(ScreenParts):
    """The main screen's keys: which can act on the run on show, and acting."""

    #: The actions of the priority bindings, given up while typing in a text box (escape is
    #: how one leaves the box, so it is kept).
    PRIORITY_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {"run_action", "filter", "diff", "logs", "jump", "copy", "mark", "clear_marks"}
    )

    model: RunModel

    def action_subject(self, action: str) -> dict[str, Any] | None:
        """What `availability` judges ``action`` on: the selected run's table row, which is
        freshest; for an action judged on the run's criteria with them from its detail, which
        the table does not carry (missing until the detail of this run has been read)."""
        row = self.selected_row()
        if not ACTIONS[action].needs_detail or row is None:
            return row
        view = self.view
        if view is None or view.run_id != row["run_id"] or view.detail is None:
            return row
        return {**row, "criteria": view.detail.get("criteria") or []}

    def _sync_bindings(self) -> None:
        # Only when what the selected run allows has changed, not on every cursor move or read:
        # each refresh_bindings() walks the bindings of the focused chain and redraws the keys.
        row = self.selected_row()
        allowed = tuple(
            availability(action, self.action_subject(action)).enabled for action in ACTIONS
        )
        key = (row is not None, allowed)
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.PRIORITY_ACTIONS and self._typing_in_text():
            return False  # not None: the key is not this binding's; it goes on to the text box
        if action == "filter" and isinstance(self.focused, ProgressStream):
            return False  # `/` in the progress stream searches it (the stream's own binding)
        if action == "run_action":
            name = str(parameters[0])
            if self.acts_on_marks(name):
                return True  # the marked runs: each is judged by the engine, and said
            # None: shown in the footer, dimmed; pressing it says why (`on_key`).
            return True if availability(name, self.action_subject(name)).enabled else None
        if action in ("details", "diff", "logs"):
            return True if self.selected_row() else None
        if action == "back_to_runs":
            return self._back_possible()  # else escape goes on to whatever has the focus
        return True

    def on_key(self, event: Key) -> None:
        # A disabled binding does not run its action; the key arrives here instead, and the
        # operator hears why rather than nothing.
        if isinstance(self.focused, FilterLine) or self.focused is None:
            return
        if self.focused.id == "steer-editor":
            return
        for action, entry in ACTIONS.items():
            if event.key == entry.key and not self.acts_on_marks(action):
                can = availability(action, self.action_subject(action))
                if not can.enabled:
                    event.stop()
                    self.notify(can.reason, title=f"{entry.label}: not possible",
                                severity="warning", markup=False)  # fmt: skip
                return

    def acts_on_marks(self, action: str) -> bool:
        """Whether ``action``'s key acts on the marked runs (`main_moves.RunMoves`)."""
        return False

    def _typing_in_text(self) -> bool:
        """Whether the focus is in a box that takes text (the filter, the steer editor)."""
        return isinstance(self.focused, FilterLine | TextArea | Input)

    def action_run_action(self, name: str) -> None:
        """Operator action ``name`` on the run on show: what it asks first, then the act."""
        self.do(self.actions.asked(name))
