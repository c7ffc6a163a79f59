"""How a run's stage looks on a terminal: a symbol and a style, shared by the CLI and the console.

Never colour alone: the symbol carries the meaning without it (monochrome terminals, NO_COLOR,
colour blindness, screenshots in a ticket). Every stage of the lifecycle has one look, the
stages of verification (the sub-machine of ``running``) and of an approved run's merge (of
``review_requested``) included; importing this module checks that the looks and
`core.lifecycle.STAGES` name the same stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from core.lifecycle import MergeState, RunState, VerificationState
from core.service.stages import STAGES, Stage, label, stage_of, state_of
from jarvis_tui.safe_text import one_line, shown

S, V, M = RunState, VerificationState, MergeState

#: Stage → (symbol, style). Every symbol is one cell wide in every terminal (no emoji: they are
#: two cells in some) and in the common monospace fonts (a glyph a font lacks is a box). The
#: stages of verification: a quarter, then half of the way; a hollow ◆, a smaller decision; a
#: ◆ in a frame, decided and in the host's hands.
STATE_LOOK: dict[str, tuple[str, str]] = {
    S.QUEUED: ("○", "dim"),
    S.RUNNING: ("▶", "cyan"),
    V.PENDING: ("◔", "cyan"),
    V.VERIFYING: ("◑", "cyan"),
    V.AWAITING_APPROVAL: ("◇", "bold yellow"),
    S.REVIEW_REQUESTED: ("◆", "yellow"),
    M.MERGING: ("◈", "cyan"),
    S.FAILED_CONTRACT: ("⊘", "red"),
    S.FAILED: ("✗", "bold red"),
    S.DONE: ("✓", "green"),
}
MERGE_LOOKS = frozenset(M)
"""Sub-stages a table cell shows alone (`state_text`)."""
if list(STATE_LOOK) != list(STAGES):
    raise AssertionError(f"STATE_LOOK must follow core.lifecycle.STAGES: {list(STAGES)}")

#: Steer receipt status → (symbol, style), in the order a steer moves through them.
STEER_LOOK: dict[str, tuple[str, str]] = {
    "pending": ("…", "dim"),
    "delivered": ("→", "cyan"),
    "acked": ("✓", "green"),
    "expired": ("⊗", "bold red"),
}

_UNKNOWN = ("?", "")


def shown_stage(run: Mapping[str, Any]) -> Stage | None:
    """Where a run shown stands (`core.lifecycle.stage_of`); None for a row that does not say."""
    try:
        return stage_of(run)
    except (KeyError, ValueError):
        return None


def run_label(run: Mapping[str, Any]) -> str:
    """Where the run stands in words: ``review_requested (merging)`` (its state when the row
    names no stage the lifecycle knows)."""
    stage = shown_stage(run)
    return label(stage) if stage is not None else str(run.get("state") or "?")


def look(stage: str) -> tuple[str, str]:
    """``stage``'s (symbol, style); ``?`` for a name the lifecycle does not know."""
    return STATE_LOOK.get(stage, _UNKNOWN)


def sub_stage(run: Mapping[str, Any]) -> str | None:
    """The run's stage in its state's sub-machine (``verifying``, ``merging``), if any."""
    stage = shown_stage(run)
    return None if stage is None or state_of(stage) is stage else stage.value


def state_text(
    state: str,
    overridden: bool = False,
    sub: str | None = None,
    *,
    compact: bool = False,
) -> Text:
    """The state as ``symbol name`` in its style, with an ``(overridden)`` mark when it was.

    A run in a state's sub-machine adds its sub-stage (`sub_stage`): its symbol and name
    (``▶ running ◑ verifying``, ``◆ review_requested ◈ merging``), or its symbol alone with
    ``compact`` (a table cell: ``▶ running ◑``), where a merge shows alone (``◈ merging``).
    """
    symbol, style = look(state)
    if compact and sub in MERGE_LOOKS:
        # ``review_requested ◈`` is wider than a table's state column: the merge says it all.
        sub_symbol, sub_style = look(sub)
        return Text(f"{sub_symbol} {sub}", style=sub_style)
    text = Text(f"{symbol} {state}", style=style)
    if sub and sub in STATE_LOOK:
        sub_symbol, sub_style = look(sub)
        text.append(f" {sub_symbol}" if compact else f" {sub_symbol} {sub}", sub_style)
    if overridden:
        text.append(" (overridden)", style="magenta")
    return text


def run_state_text(run: Mapping[str, Any], *, compact: bool = False) -> Text:
    """`state_text` for a run (a row with ``state``, its sub-stages' columns, ``overridden``)."""
    return state_text(
        str(run.get("state") or ""), bool(run.get("overridden")), sub_stage(run), compact=compact
    )


def merge_text(merge: Mapping[str, Any]) -> Text:
    """Where an approved run's merge stands, or what it came to (`core.repos.approval`'s
    ``merge_status``), on one line: the host's note inert."""
    note = one_line(str(merge.get("note") or ""), 300)
    if merge.get("pending"):
        symbol, style = look(M.MERGING)
        return Text.assemble((f"{symbol} merge pending: ", style), note)
    if merge.get("refused"):
        return Text.assemble((f"! merge refused ({shown(merge['refused'])}): ", "bold yellow"),
                             note)  # fmt: skip
    done = shown(str(merge.get("done") or "")).replace("_", " ")
    return Text.assemble((f"⑂ {done}: ", "green"), note)


def steer_text(status: str) -> Text:
    """A steer receipt's status as ``symbol status``."""
    symbol, style = STEER_LOOK.get(status, ("?", ""))
    return Text(f"{symbol} {status}", style=style)
