"""A workspace: the directory that holds one fleet's store (``jarvis.db``) and IPC tree.

Chosen by ``--workspace DIR``, else ``JARVIS_WORKSPACE``, else ``./.jarvis``. Only the commands
that start work create one (`Workspace.resolve` with ``create``); the others find it or say there
is none, so a mistyped path never grows a fresh, empty workspace that hides the real one. Lane
folders are names, never paths: `lane_dir` refuses any name that could leave the tree.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DIR = ".jarvis"
ENV_VAR = "JARVIS_WORKSPACE"

_LANE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class WorkspaceError(Exception):
    """The workspace cannot be used; ``str()`` says why in a sentence.

    Attributes:
        code: ``no_workspace`` when there is none (and none was made), else
            ``workspace_unusable``.
    """

    def __init__(self, message: str, code: str = "workspace_unusable") -> None:
        super().__init__(message)
        self.code = code


def lane_problem(name: str) -> str | None:
    """Why ``name`` is not a usable lane folder name, or None."""
    if not _LANE.fullmatch(name):
        return (
            f"lane {name!r} must be 1-64 letters, digits, '-' or '_', starting with a letter or "
            "digit (it names a folder in the IPC tree)."
        )
    return None


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def db_path(self) -> Path:
        return self.root / "jarvis.db"

    @property
    def ipc_dir(self) -> Path:
        return self.root / "data" / "ipc"

    def lane_dir(self, lane: str) -> Path:
        problem = lane_problem(lane)
        if problem:
            raise WorkspaceError(problem)
        return self.ipc_dir / lane

    @classmethod
    def resolve(
        cls, explicit: str | os.PathLike[str] | None = None, *, create: bool = True
    ) -> Workspace:
        """The workspace named by the argument, the environment, or the default.

        Args:
            create: make the directory and its IPC tree when missing, and insist it is writable.
                Without it, the directory must exist and nothing is written.

        Raises:
            WorkspaceError: it cannot be made or used, or (without ``create``) does not exist.
        """
        chosen = explicit or os.environ.get(ENV_VAR) or DEFAULT_DIR
        root = Path(chosen).expanduser()
        if not create:
            if not root.is_dir():
                raise WorkspaceError(
                    f"There is no workspace at {root}; nothing was created. `jarvis dispatch`, "
                    "`jarvis host` and `jarvis tui` create a workspace.",
                    "no_workspace",
                )
            return cls(root.resolve())
        try:
            root.mkdir(parents=True, exist_ok=True)
            (root / "data" / "ipc").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(
                f"Cannot use {root} as a workspace: {exc.strerror or exc}."
            ) from None
        if not os.access(root, os.W_OK):
            raise WorkspaceError(f"Cannot use {root} as a workspace: it is not writable.")
        return cls(root.resolve())
