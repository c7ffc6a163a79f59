"""The main screen's operator actions: what to ask, the request, and what came of it.

Every action is declared once in the engine's registry (`core.service.actions`): what it asks
first decides the dialog (a confirmation, a reason), and every one goes through the same
`act(request)` as the command line, on a thread worker, with the version the operator was
looking at, so a run another process moved first is refused, not acted on twice. The outcome
comes back as `ActionFinished` and becomes a notification with the engine's sentence. Every
write opens its store through `RunActionsController.open_store`, the one place that says how.

The controller drives nothing itself: each of its methods returns what should happen (a dialog
to open, a worker to start, a notification: `jarvis_tui.screens.effects`) and the screen does
it. What is said of an outcome is `jarvis_tui.screens.action_notes`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from rich.text import Text

from core.service.action_types import ActionRequest
from core.service.actions import ACTIONS, operator_name
from core.service.criteria import PendingCommand, pending_commands
from core.service.fleet import Fleet
from jarvis_tui.messages import ActionFinished
from jarvis_tui.modals.allow_command_dialog import AllowCommandDialog
from jarvis_tui.modals.confirm_dialog import ActionConfirmDialog
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.modals.retry_dialog import RetryDialog
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.screens.action_notes import outcome_notes
from jarvis_tui.screens.effects import Dialog, Effect, Effects, Focus, Note, Post, Work
from jarvis_tui.screens.store_sync import StoreSync
from jarvis_tui.state_look import state_text, sub_stage


class ActionsView(Protocol):
    """What `RunActionsController` needs of what the operator sees: the main screen."""

    @property
    def run_on_show(self) -> str | None:
        """The run the panels show and the keys act on."""

    @property
    def view(self) -> Any:
        """The run on show's panels, as last read (a `core.service.reads.RunView`)."""

    def selected_row(self) -> dict[str, Any] | None:
        """The table row of the run on show: its freshest state."""

    def steer_sent(self, run_id: str, text: str) -> None:
        """The steer ``text`` was queued for ``run_id``: the composer records it."""


class RunActionsController:
    """Decides what the operator's actions on the run on show take.

    Args:
        view: What the actions take their run from (the main screen).
        sync: The screen's reads: each action reads again when it finishes, and writes to
            the store its feed reads.
        operator: Who the console acts as (`core.service.actions.operator_name` decides
            if None).
    """

    def __init__(self, view: ActionsView, sync: StoreSync, operator: str | None) -> None:
        self._view = view
        self._sync = sync
        self.operator = operator_name(operator)
        """Who the console acts as (recorded with every action)."""
        self._verifying: set[str] = set()
        """Runs this console is verifying right now (a second ``v`` would only repeat it)."""

    @contextmanager
    def open_store(self) -> Iterator[Fleet]:
        """A store to write to, closed when the block ends: every write of the console's opens
        its store here, so how a console opens one for writing is said once."""
        fleet = self._sync.feed.open_writer()
        try:
            yield fleet
        finally:
            fleet.close()

    # -- what the operator asked --------------------------------------------------------------

    def asked(self, name: str) -> Effects:
        """The operator asked for action ``name`` on the run on show (a key, the palette)."""
        entry = ACTIONS[name]
        row = self._view.selected_row()
        if row is None:
            return []
        snapshot = dict(row)
        run_id, version = str(snapshot["run_id"]), int(snapshot["version"])
        if name == "verify":
            return self._verify(run_id, str(snapshot["state"]))
        if name == "approve_command":
            return self._approve_command(run_id, version)
        if entry.asks == "text":
            return [Focus("steer")]  # written in the composer; its send acts (`steer`)
        if name == "retry":
            retry = RetryDialog(snapshot)
            return [Dialog(retry, lambda ok: self._act(
                name, run_id, version, fresh=retry.fresh) if ok else [])]  # fmt: skip
        if entry.asks == "reason":
            return [Dialog(self._reason_dialog(name, snapshot),
                           lambda reason: self._act(name, run_id, version, reason=reason)
                           if reason else [])]  # fmt: skip
        if entry.asks == "confirm":
            body = Text.assemble(f"{entry.label} run ", (shown(run_id), "bold"), "?")
            dialog = ActionConfirmDialog(f"{entry.label} run", body, confirm=entry.label)
            return [Dialog(dialog, lambda ok: self._act(name, run_id, version) if ok else [])]
        return self._act(name, run_id, version)

    def _reason_dialog(self, name: str, snapshot: dict[str, Any]) -> ReasonDialog:
        entry = ACTIONS[name]
        body = Text.assemble(
            f"{entry.label} run ",
            (shown(snapshot["run_id"]), "bold"),
            ", which is ",
            state_text(str(snapshot["state"]), sub=sub_stage(snapshot)),
            f"?\n\n{entry.consequence}",
        )
        if snapshot.get("state_reason"):
            body.append("\n\nWhy it stopped: ", style="dim")
            body.append(one_line(snapshot["state_reason"], 300))
        return ReasonDialog(f"{entry.label} run", body, confirm=entry.label)

    def _verify(self, run_id: str, state_before: str) -> Effects:
        if run_id in self._verifying:
            return [Note(f"Run {shown(run_id)} is being verified by this console already.",
                         "Verify: not possible", "warning")]  # fmt: skip
        self._verifying.add(run_id)
        notice = Note(f"Verifying run {shown(run_id)}'s acceptance criteria in its checkout…",
                      "Verify")  # fmt: skip
        # No version: verifying again records results on whatever the run is now.
        request = ActionRequest("verify", run_id, self.operator,
                                options={"state_before": state_before})  # fmt: skip
        return [notice, self._work(request, "verify", "Verify a run's acceptance criteria")]

    def _approve_command(self, run_id: str, version: int) -> Effects:
        view = self._view.view
        if view is None or view.run_id != run_id or view.detail is None:
            return [Note(f"Run {shown(run_id)} is still being read; try again in a moment.",
                         "Allow command: not yet", "warning")]  # fmt: skip
        row = self._view.selected_row() or {}
        waiting = pending_commands({**view.detail, **row})  # the row's state is the newer
        if not waiting:
            # The latest results name no command that waits (read before the host recorded
            # them, or a command since allowed): verifying again settles which one waits.
            return [Note(
                f"Run {shown(run_id)} waits for approval, but its latest verification names no "
                "command to allow. Press v to verify it again.",
                "Allow command: nothing to allow", "warning",
            )]  # fmt: skip
        command = waiting[0]
        # The version the operator decides on: a verification that moved on since (verified
        # again, say) makes the approval stale, not silently applied to another stage.
        request = ActionRequest("approve_command", run_id, self.operator, version,
                                {"key": command.key, "command": command})  # fmt: skip
        work = self._work(request, "approve-command", "Allow a criterion's command")
        dialog = AllowCommandDialog(run_id, command, more=len(waiting) - 1)
        return [Dialog(dialog, lambda ok: [work] if ok else [])]

    def steer(self, run_id: str, version: int, text: str) -> Effects:
        """Send the composer's ``text`` to ``run_id``'s worker (as of ``version``)."""
        if run_id != self._view.run_on_show:
            # The composer shows the run on show; a send that raced a change of run is not
            # sent anywhere, and the draft stays with its run.
            return [Note(
                f"Not sent: run {shown(run_id)} is no longer on show. Its draft is kept with it.",
                "Cannot steer", "warning",
            )]  # fmt: skip
        return self._act("steer", run_id, version, message=text)

    # -- writing, on the screen's workers -----------------------------------------------------

    def _act(self, name: str, run_id: str, version: int, **options: Any) -> Effects:
        request = ActionRequest(name, run_id, self.operator, version, options)
        return [self._work(request, "act", "Apply an operator action")]

    def _work(self, request: ActionRequest, name: str, description: str) -> Effect:
        def work(post: Post) -> None:
            # In the worker's thread.
            try:
                with self.open_store() as fleet:
                    outcome = fleet.act(request)
            finally:
                if request.action == "verify":
                    # A set operation is atomic, and the set only guards against a second
                    # ``v`` (a worker that failed must not leave the run marked).
                    self._verifying.discard(request.run_id)
            post(ActionFinished(outcome))

        return Work(work, name, "act", description)

    # -- what came of it ----------------------------------------------------------------------

    def finished(self, message: ActionFinished) -> Effects:
        """Say what an action did, or the engine's refusal, and read the store again."""
        outcome = message.outcome
        request = outcome.request
        if (outcome.ok and request.action == "steer" and outcome.run is not None
                and "message" in request.options):  # fmt: skip
            self._view.steer_sent(request.run_id, str(request.options["message"]))
        return [*outcome_notes(outcome, host_running=bool(self._sync.host)),
                self._sync.read_store()]  # fmt: skip


__all__ = ["ActionsView", "PendingCommand", "RunActionsController"]
