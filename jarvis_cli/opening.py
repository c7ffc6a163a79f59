"""The store of one command: opened through the engine's front door, closed when it ends.

Every command that reads or changes runs opens its workspace's store here (`open_store`), so
how a command opens one, and how a store problem ends it (exit 2, the store's sentence and
code), is said once.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from core.service.errors import StoreError
from core.service.fleet import Access, Fleet, open_fleet, workspace_store
from core.service.workspace import Workspace, WorkspaceError
from jarvis_cli.inputs import UsageError
from jarvis_cli.output import write_error
from jarvis_tui.ages import in_largest_unit, seconds_since

#: How long a command waits for another process's write lock before it gives up (exit 2,
#: ``store_busy``). A host's transactions take milliseconds; 30 s means something is stuck.
BUSY_TIMEOUT_S = 30.0


def age(stamp: str, now: datetime) -> str:
    """How long ago an ISO timestamp was, in the largest whole unit: 42s, 7m, 3h, 2d."""
    seconds = seconds_since(stamp, now)
    return "?" if seconds is None else in_largest_unit(seconds)


def workspace_root(args: argparse.Namespace) -> Path:
    """The workspace a command that opened its store (`open_store`) works in."""
    return Workspace.resolve(getattr(args, "workspace", None), create=False).root


def reopen(args: argparse.Namespace, fleet: Fleet) -> Fleet:
    """The same store opened again for reading: what a store opened as the file was (a
    read-only directory with no writer) needs to see what a writer committed since."""
    assert fleet.path is not None
    return open_fleet(fleet.path, fleet.root, access="read", busy_timeout_s=BUSY_TIMEOUT_S)


@contextmanager
def open_store(args: argparse.Namespace, *, access: Access) -> Iterator[Fleet]:
    """The workspace's store for one command; any store problem is an I/O error (exit 2).

    The store is the workspace's jarvis.db unless ``--db``, ``JARVIS_DB`` or ``[store] url``
    names another. Opening refuses a missing workspace (unless ``access`` is ``create``), an
    empty, damaged or too new store, a database server that cannot be reached; a fault while
    the command uses it (disk full, lock held past the busy timeout, read-only, I/O error, a
    lost connection) ends the command the same way, with the store's sentence and code, never
    as a verdict on what the command was given.
    """
    try:
        workspace = Workspace.resolve(getattr(args, "workspace", None), create=access == "create")
        location = workspace_store(workspace.root, getattr(args, "db", None))
        fleet = open_fleet(location, workspace.root, access=access, busy_timeout_s=BUSY_TIMEOUT_S)
    except WorkspaceError as exc:
        raise UsageError(exc.code, str(exc)) from None
    except StoreError as exc:
        raise UsageError(exc.code, exc.message) from None
    if fleet.created:
        write_error(f"jarvis: created a new workspace store at {fleet.location}.")
    try:
        yield fleet
    except StoreError as exc:
        raise UsageError(exc.code, exc.message) from None
    finally:
        fleet.close()
