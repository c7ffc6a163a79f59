"""What an operator action is made of: its declaration, a request to carry it out, the outcome.

`core.service.actions` declares every action once with these (`OperatorAction`); the console
builds its keys, key bar, palette and help from the declarations, the command line its verbs,
options and dispatch, and both carry an action out with one `ActionRequest` through `act`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.lifecycle import Action, Stage, allowed_from, move_text

if TYPE_CHECKING:
    from core.store.api import RunStore

Asks = Literal["nothing", "confirm", "reason", "text"]
"""What the console asks before it acts: nothing, a confirmation, a reason (a required text in
a dialog), or a text written elsewhere (the steer composer)."""


@dataclass(frozen=True)
class Option:
    """One option of an action, as the command line takes it and a request carries it."""

    name: str
    """The request's option (`ActionRequest.options`) and the parsed argument's name."""
    flag: str | None
    """``--reason``; None for a positional argument."""
    help: str = ""
    takes: Literal["flag", "text"] = "text"
    """``flag``: present or not; ``text``: a value."""
    required: bool = False
    metavar: str | None = None


@dataclass(frozen=True)
class Refusal:
    """Why an action was not carried out: a stable code and a sentence (and the option it is
    about, where there is one)."""

    code: str
    message: str
    field: str = ""

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class ActionRequest:
    """One operator action on one run, as the operator asked for it."""

    action: str
    """The action's name in the registry (`OperatorAction.name`)."""
    run_id: str
    operator: str
    """Who acts (recorded with the action)."""
    expected_version: int | None = None
    """The run's version the operator was looking at: a run changed since is refused."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The action's own options (`OperatorAction.options`, and what the console adds)."""
    strict: bool = False
    """Refuse (`ServiceError`) rather than fall back to defaults when the workspace's
    configuration cannot be used: the command line's choice; the console says and goes on."""


@dataclass(frozen=True)
class Outcome:
    """What came of an `ActionRequest`: done (the run as it is now) or refused."""

    request: ActionRequest
    ok: bool
    run: dict[str, Any] | None
    refusal: Refusal | None = None
    steer_id: str | None = None
    merge: dict[str, Any] | None = None
    """What an approval did with the run's branch (`core.repos.merge.MergeOutcome`)."""
    results: dict[str, Any] | None = None
    """A verification's results (verifying only)."""
    policy_problem: str | None = None
    """Why ``jarvis.toml`` could not be used, when verifying fell back to the default policy."""

    def to_json(self) -> dict[str, Any]:
        """The JSON the engine gives an operator action's result (`ActionResult.to_json`)."""
        from core.operator_actions import ActionResult
        from core.operator_actions import Refusal as EngineRefusal

        refusal = self.refusal
        shape = EngineRefusal(refusal.code, refusal.message) if refusal else None
        return ActionResult(self.ok, self.run, shape, self.steer_id, self.merge).to_json()


EngineCall = Callable[["RunStore", Path, ActionRequest], Outcome]
"""An action's engine call: the store to act in, the workspace, the request."""
Check = Callable[[str, Stage, Mapping[str, Any]], str | None]
"""Why an action cannot apply to a run (its id, its stage, its row), or None when it can."""


@dataclass(frozen=True)
class OperatorAction:
    """One operator action, declared once: what the console and the command line build from."""

    name: str
    """How requests, bindings and the palette name it."""
    key: str
    """The console's key."""
    label: str
    """The key bar's and the palette's word."""
    tooltip: str
    help: str
    """The help screen's line: ``{stages}`` becomes the stages it applies to, ``{symbols}``
    their symbols."""
    call: EngineCall
    move: Action | None = None
    """The lifecycle's move it makes, if it is one: the stages it applies to are the move's."""
    stages: tuple[Stage, ...] | None = None
    """The stages it applies to, when it is not a move."""
    check: Check | None = None
    """Why it cannot apply to a run, beyond its stages (and instead of the lifecycle's
    sentence)."""
    asks: Asks = "nothing"
    consequence: str = ""
    """What acting does, as the console's dialog says it before asking."""
    needs_detail: bool = False
    """It is judged on the run's acceptance criteria, which a table row does not carry."""
    show: bool = True
    """On the console's key bar (every action is in the help and the palette)."""
    done: str = ""
    """The notification's verb when it went through: ``Retried``."""
    verb: str | None = None
    """The command line's verb; None: the console's only."""
    verb_help: str = ""
    """The verb's help: ``{move}`` becomes the lifecycle's move (``failed → queued``)."""
    options: tuple[Option, ...] = ()
    expect_version_help: str = (
        "refuse if the run is no longer at this version (what you were looking at)"
    )

    @property
    def applies_to(self) -> tuple[Stage, ...]:
        """The stages from which it can act, in lifecycle order."""
        if self.stages is not None:
            return self.stages
        return allowed_from(self.move) if self.move is not None else ()

    @property
    def verb_line(self) -> str:
        """The verb's help, the move filled in."""
        return self.verb_help.format(move=move_text(self.move) if self.move else "")


@dataclass(frozen=True)
class Availability:
    enabled: bool
    reason: str
    """Why not (empty when enabled)."""
