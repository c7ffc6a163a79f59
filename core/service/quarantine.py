"""The files the host quarantined in a workspace, and replaying one: what `jarvis quarantine`
and the console's quarantine view show and do (`core.ipc.replay` says how, and why it is safe).

These read the workspace's folder, not the store: `jarvis errors` lists the store's history of
refusals (every host's), this lists what lies in ``data/ipc/errors/`` now and can be put back.
"""

from __future__ import annotations

from pathlib import Path

from core.ipc.layout import IpcLayout
from core.ipc.replay import Quarantined, Replayed, content, listing, replay

__all__ = ["Quarantined", "Replayed", "quarantined", "quarantined_content", "replay_quarantined"]


def _layout(root: Path) -> IpcLayout:
    return IpcLayout(root / "data" / "ipc")


def quarantined(root: Path, *, limit: int = 100) -> tuple[list[Quarantined], int]:
    """The newest ``limit`` files quarantined in the workspace at ``root``, newest first, and
    how many there are in all."""
    return listing(_layout(root), limit=limit)


def quarantined_content(root: Path, name: str) -> str | None:
    """The start of the quarantined file ``name`` as text, to be shown inert; None when there is
    no such file to show (gone, replayed, or not a regular file)."""
    return content(_layout(root), name)


def replay_quarantined(root: Path, name: str, operator: str) -> Replayed:
    """Put the quarantined file ``name`` back where the host found it, for it to ingest again;
    a refusal (``unknown_name``, ``not_replayable``, ``target_exists``, ``lane_gone``,
    ``io_error``) is data, never raised."""
    return replay(_layout(root), name, operator)
