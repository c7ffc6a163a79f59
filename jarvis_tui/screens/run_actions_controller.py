"""The main screen's operator actions: ask what needs asking, write through core, say the outcome.

Every action goes through `core.operator_actions` on a thread worker with the version the
operator was looking at, so a run another process moved first is refused, not acted on twice;
the result comes back as `ActionFinished` and becomes a notification with core's sentence.
Verifying a run's acceptance criteria again and allowing a criterion's command go through
`core.criteria.run_criteria` the same way, and come back as `CriteriaActed`. Every write opens
its store through `RunActionsController.open_store`, the one place that says how.

Which actions a run allows, and the sentence when it does not, is `jarvis_tui.run_actions`,
which loads no Textual; this module carries the actions out.

Where Textual's parts live, as in `jarvis_tui.screens.store_sync`: the controller is a plain
class given the screen, whose workers its writes are (`Screen.run_worker` with the metadata
`@work` would give them), whose app its dialogs are pushed on, and whose `@on` handlers hand it
`ActionFinished`, `CriteriaActed` and the composer's send. A failed write reaches the screen's
one funnel for worker outcomes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, Protocol

from rich.text import Text
from textual.screen import Screen

from core import operator_actions
from core.criteria import run_criteria
from core.identity import operator_name
from core.lifecycle import Action, is_legal
from core.store.api import RunStore
from jarvis_tui.feed import RunView
from jarvis_tui.messages import ActionFinished, CriteriaActed
from jarvis_tui.modals.allow_command_dialog import AllowCommandDialog
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.modals.retry_dialog import RetryDialog
from jarvis_tui.run_actions import PendingCommand, criterion_command, pending_commands
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.screens.store_sync import StoreSync
from jarvis_tui.state_look import shown_stage, state_text

_VERBS = {
    "retry": "Retried",
    "override": "Overrode",
    "approve": "Approved",
    "cancel": "Cancelled",
    "steer": "Steer queued for",
}


class ActionsView(Protocol):
    """What `RunActionsController` needs of what the operator sees: the main screen."""

    @property
    def run_on_show(self) -> str | None:
        """The run the panels show and the keys act on."""

    @property
    def view(self) -> RunView | None:
        """The run on show's panels, as last read."""

    def selected_row(self) -> dict[str, Any] | None:
        """The table row of the run on show: its freshest state."""

    def steer_sent(self, run_id: str, text: str) -> None:
        """The steer ``text`` was queued for ``run_id``: the composer records it."""


class RunActionsController:
    """Carries out the operator's actions on the run on show.

    Args:
        screen: The screen the workers belong to and the dialogs open over.
        view: What the actions take their run from (the same screen).
        sync: The screen's reads: each action reads again when it finishes, and writes to
            the store its feed reads.
        operator: Who the console acts as (`core.identity.operator_name` decides if None).
    """

    def __init__(
        self,
        screen: Screen[Any],
        view: ActionsView,
        sync: StoreSync,
        operator: str | None,
    ) -> None:
        self._screen = screen
        self._view = view
        self._sync = sync
        self.operator = operator_name(operator)
        """Who the console acts as (recorded with every action)."""
        self._verifying: set[str] = set()
        """Runs this console is verifying right now (a second ``v`` would only repeat it)."""

    @contextmanager
    def open_store(self) -> Iterator[RunStore]:
        """A store to write to, closed when the block ends: every write of the console's opens
        its store here, so how a console opens one for writing is said once."""
        store = self._sync.feed.open_writer()
        try:
            yield store
        finally:
            store.close()

    # -- what the operator asked --------------------------------------------------------------

    def retry(self) -> None:
        """Retry the run on show, once the operator confirms."""
        row = self._view.selected_row()
        if row is None:
            return
        snapshot = dict(row)
        dialog = RetryDialog(snapshot)

        def confirmed(ok: bool | None) -> None:
            if ok:
                self._act("retry", snapshot["run_id"], int(snapshot["version"]),
                          fresh=dialog.fresh)  # fmt: skip

        self._screen.app.push_screen(dialog, confirmed)

    def override(self) -> None:
        """Override the run on show to done, with the operator's reason."""
        self._with_reason(
            "override",
            "Override",
            "Mark it done although it failed. It stays marked as overridden wherever it is shown.",
        )

    def cancel(self) -> None:
        """Cancel the run on show, with the operator's reason."""
        self._with_reason(
            "cancel",
            "Cancel",
            "Stop it: a running worker is stopped, and the run is failed with your reason.",
        )

    def _with_reason(self, action: str, verb: str, consequence: str) -> None:
        row = self._view.selected_row()
        if row is None:
            return
        snapshot = dict(row)
        body = Text.assemble(
            f"{verb} run ",
            (shown(snapshot["run_id"]), "bold"),
            ", which is ",
            state_text(str(snapshot["state"]), verification=snapshot.get("verification_state")),
            f"?\n\n{consequence}",
        )
        if snapshot.get("state_reason"):
            body.append("\n\nWhy it stopped: ", style="dim")
            body.append(one_line(snapshot["state_reason"], 300))

        def given(reason: str | None) -> None:
            if reason:
                self._act(action, snapshot["run_id"], int(snapshot["version"]), reason)

        self._screen.app.push_screen(ReasonDialog(f"{verb} run", body, confirm=verb), given)

    def approve(self) -> None:
        """Approve the run on show."""
        row = self._view.selected_row()
        if row is not None:
            self._act("approve", row["run_id"], int(row["version"]))

    def verify(self) -> None:
        """Verify the run on show's acceptance criteria again, in its checkout."""
        row = self._view.selected_row()
        if row is None:
            return
        run_id = str(row["run_id"])
        if run_id in self._verifying:
            self._screen.notify(
                f"Run {shown(run_id)} is being verified by this console already.",
                title="Verify: not possible",
                severity="warning",
                markup=False,
            )
            return
        self._verifying.add(run_id)
        self._screen.notify(
            f"Verifying run {shown(run_id)}'s acceptance criteria in its checkout…",
            title="Verify",
            markup=False,
        )
        self._run(
            partial(self._verify, run_id, str(row["state"])),
            name="verify",
            description="Verify a run's acceptance criteria",
        )

    def approve_command(self) -> None:
        """Allow the first command the run on show's verification waits on, once confirmed."""
        row = self._view.selected_row()
        if row is None:
            return
        run_id = str(row["run_id"])
        view = self._view.view
        if view is None or view.run_id != run_id or view.detail is None:
            self._screen.notify(
                f"Run {shown(run_id)} is still being read; try again in a moment.",
                title="Allow command: not yet",
                severity="warning",
                markup=False,
            )
            return
        waiting = pending_commands({**view.detail, **row})  # the row's state is the newer
        if not waiting:
            # The latest results name no command that waits (read before the host recorded
            # them, or a command since allowed): verifying again settles which one waits.
            self._screen.notify(
                f"Run {shown(run_id)} waits for approval, but its latest verification names no "
                "command to allow. Press v to verify it again.",
                title="Allow command: nothing to allow",
                severity="warning",
                markup=False,
            )
            return
        command = waiting[0]
        # The version the operator decides on: a verification that moved on since (verified
        # again, say) makes the approval stale, not silently applied to another stage.
        version = int(row["version"])

        def confirmed(ok: bool | None) -> None:
            if ok:
                self._run(
                    partial(self._approve_command, run_id, command, version),
                    name="approve-command",
                    description="Allow a criterion's command",
                )

        self._screen.app.push_screen(
            AllowCommandDialog(run_id, command, more=len(waiting) - 1), confirmed
        )

    def steer(self, run_id: str, version: int, text: str) -> None:
        """Send the composer's ``text`` to ``run_id``'s worker (as of ``version``)."""
        if run_id != self._view.run_on_show:
            # The composer shows the run on show; a send that raced a change of run is not
            # sent anywhere, and the draft stays with its run.
            self._screen.notify(
                f"Not sent: run {shown(run_id)} is no longer on show. Its draft is kept with it.",
                title="Cannot steer",
                severity="warning",
                markup=False,
            )
            return
        self._act("steer", run_id, version, text)

    # -- writing, on the screen's workers -----------------------------------------------------

    def _run(self, work: Callable[[], None], *, name: str, description: str) -> None:
        # What `@work(thread=True, group="act", exit_on_error=False, …)` on a method of the
        # screen did: the screen's worker (see the module doc).
        self._screen.run_worker(
            work, name=name, group="act", description=description, exit_on_error=False, thread=True
        )

    def _act(
        self,
        action: str,
        run_id: str,
        version: int,
        text: str | None = None,
        *,
        fresh: bool = False,
    ) -> None:
        self._run(
            partial(self._apply, action, run_id, version, text, fresh),
            name="act",
            description="Apply an operator action",
        )

    def _apply(
        self, action: str, run_id: str, version: int, text: str | None, fresh: bool = False
    ) -> None:
        # In the worker's thread.
        with self.open_store() as store:
            if action == "retry":
                result = operator_actions.retry(
                    store, run_id, self.operator, expected_version=version, fresh=fresh
                )
            elif action == "approve":
                result = operator_actions.approve(
                    store, run_id, self.operator, expected_version=version
                )
            elif action == "override":
                result = operator_actions.override(
                    store, run_id, self.operator, text, expected_version=version
                )
            elif action == "cancel":
                result = operator_actions.cancel(
                    store, run_id, self.operator, text, expected_version=version
                )
            else:
                result = operator_actions.steer(
                    store, run_id, self.operator, text, expected_version=version
                )
        self._screen.post_message(ActionFinished(action, run_id, result, text=text))

    def _verify(self, run_id: str, state_before: str) -> None:
        # In the worker's thread. Imported here, not at start: the configuration's models cost
        # first paint ~0.15 s.
        from core.criteria.allowlist import DEFAULT_POLICY
        from core.host.config import ConfigError, load_config

        root = self._sync.feed.root
        problem: str | None = None
        try:
            policy = load_config(root).verify_policy()
        except (ConfigError, OSError) as exc:
            # The host would refuse such a file; verifying with the defaults (a smaller
            # allowlist: more commands wait for approval, none runs that would not) still
            # tells the operator something, and the notification says which policy was used.
            policy, problem = DEFAULT_POLICY, str(exc)
        try:
            with self.open_store() as store:
                outcome = run_criteria.reverify(store, root, run_id, policy)
        finally:
            # Straight from this thread: one set operation is atomic, and the set only guards
            # against a second ``v`` (a worker that failed must not leave the run marked).
            self._verifying.discard(run_id)
        self._screen.post_message(
            CriteriaActed(run_id, outcome, policy_problem=problem, state_before=state_before)
        )

    def _approve_command(self, run_id: str, command: PendingCommand, version: int) -> None:
        # In the worker's thread.
        with self.open_store() as store:
            change = run_criteria.approve_command(
                store, run_id, command.key, self.operator, expected_version=version
            )
        self._screen.post_message(CriteriaActed(run_id, change, command=command))

    # -- what came of it ----------------------------------------------------------------------

    def action_finished(self, message: ActionFinished) -> None:
        """Say what an action did, or core's refusal, and read the store again."""
        result = message.result
        if result.ok and result.run is not None:
            state = result.run["state"]
            extra = f", retry {result.run['retry_count']}" if message.action == "retry" else ""
            # What approving did with the branch (merged, recommended, left), in git's words.
            merged = f" {shown(str(result.merge['note']))}" if result.merge else ""
            self._screen.notify(
                f"{_VERBS[message.action]} run {shown(message.run_id)}: now {state}{extra}."
                f"{merged}",
                title="Done",
                markup=False,
            )
            if message.action == "steer" and message.text is not None:
                self._view.steer_sent(message.run_id, message.text)
        elif result.refusal is not None:
            self._screen.notify(
                result.refusal.message,
                title=f"Refused ({result.refusal.code})",
                severity="error",
                markup=False,
                timeout=10,
            )
        self._sync.read_store()

    def criteria_acted(self, message: CriteriaActed) -> None:
        """Say what verifying or allowing a command did, or core's refusal, and read again."""
        outcome = message.outcome
        run_id = shown(message.run_id)
        if message.policy_problem:
            self._screen.notify(
                f"jarvis.toml cannot be used, so run {run_id} was verified with the default "
                f"policy: {one_line(message.policy_problem, 300)}",
                title="Default verify policy",
                severity="warning",
                markup=False,
                timeout=10,
            )
        if not outcome.ok:
            self._screen.notify(
                outcome.message,
                title=f"Refused ({outcome.code})",
                severity="error",
                markup=False,
                timeout=10,
            )
        elif isinstance(outcome, run_criteria.Reverified):
            self._notify_verified(run_id, outcome, message.state_before)
        elif message.command is not None:
            later = (
                "the host verifies it again shortly"
                if self._sync.host
                else "no host is running: press v to verify it now"
            )
            self._screen.notify(
                f"Allowed {one_line(json.dumps(message.command.argv), 200)} for run {run_id}; "
                f"{later}.",
                title="Done",
                markup=False,
            )
        self._sync.read_store()

    def _notify_verified(
        self, run_id: str, outcome: run_criteria.Reverified, before: str | None
    ) -> None:
        results = (outcome.results or {}).get("criteria_results") or []
        run = outcome.run or {}
        keys = {
            command.key
            for command in pending_commands(
                {
                    "state": run.get("state"),
                    "verification_state": run.get("verification_state"),
                    "verification": outcome.results,
                    "approved_commands": run_criteria.approved_of(run),
                }
            )
        }
        passed = waiting = 0
        for result in results:
            command = criterion_command(result.get("criterion") or {})
            if result.get("passed"):
                passed += 1
            elif command is not None and command.key in keys:
                waiting += 1
        failed = len(results) - passed - waiting
        counts = f"{passed} of {len(results)} criteria passed, {failed} failed"
        if waiting:
            counts += f", {waiting} waiting for your approval (A)"
        state = str(run.get("state") or "")
        if not state:
            after = "it is no longer in the store"
        elif state != before:
            after = f"it is now {state}"
        else:
            # Verifying again decides only a run still waiting on verification: a decided run
            # keeps its state, and the operator judges the new results.
            after = f"it stays {state}"
            stage = shown_stage(run)
            overridable = stage is not None and is_legal(stage, Action.OVERRIDE)
            if overridable and not failed and not waiting:
                after += " (override it if the work is done)"
        self._screen.notify(
            f"Run {run_id}: {counts}; {after}.",
            title="Verified" if not failed else "Verified: criteria failed",
            severity="information" if not failed else "warning",
            markup=False,
        )
