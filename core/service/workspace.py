"""Workspaces and where their store is, through the front door.

A workspace is a folder (`--workspace`, else ``$JARVIS_WORKSPACE``, else ``./.jarvis``); its
store is ``--db``, else ``$JARVIS_DB``, else ``[store] url`` in its ``jarvis.toml``, else its
``jarvis.db`` (`core.store.location`). URLs are shown masked.
"""

from __future__ import annotations

from core.store.location import ENV_VAR as STORE_ENV_VAR
from core.store.location import is_postgres, store_location
from core.store.location import shown as shown_location
from core.workspace import DEFAULT_DIR, ENV_VAR, Workspace, WorkspaceError, lane_problem

__all__ = [
    "DEFAULT_DIR",
    "ENV_VAR",
    "STORE_ENV_VAR",
    "Workspace",
    "WorkspaceError",
    "is_postgres",
    "lane_problem",
    "shown_location",
    "store_location",
]
