"""Where a run stands, as the front ends name and group it: the lifecycle's words.

The front ends import the lifecycle's enums themselves (`core.lifecycle.RunState`,
`VerificationState`, `Action`); what the lifecycle decides or phrases comes through here.
"""

from __future__ import annotations

from core.lifecycle import (
    MERGE_PARENT,
    NEEDS_HUMAN,
    PARENT,
    STAGES,
    Stage,
    label,
    merge_of,
    or_list,
    stage_of,
    state_of,
    verification_of,
)
from core.moves import moved
from core.run_views import needs_attention

__all__ = [
    "MERGE_PARENT",
    "NEEDS_HUMAN",
    "PARENT",
    "STAGES",
    "Stage",
    "label",
    "merge_of",
    "moved",
    "needs_attention",
    "or_list",
    "stage_of",
    "state_of",
    "verification_of",
]
