"""What the host's rooms share: the workspace, its configuration, its store and its workers.

The host is one thread that owns the store connection and the worker table (docs/architecture.md,
the host); each room (`inbox`, `launching`, `supervision`, `outcomes`, `recovery`) does one kind
of the host's work on that thread, and reaches what it shares with the others here, never
through the `Host` that wires them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.host.config import HostConfig
from core.host.workers import WorkerProcess
from core.ipc.layout import IpcLayout
from core.store.api import RunStore
from core.workspace import Workspace


@dataclass(eq=False)
class Shared:
    workspace: Workspace
    config: HostConfig
    layout: IpcLayout
    name: str
    """This host's name among the store's hosts."""
    lanes: Sequence[str] | None
    """The lanes whose queued runs it claims (None: every lane)."""
    stopping: threading.Event
    workers: dict[str, WorkerProcess] = field(default_factory=dict)
    """The running workers, by run id: a worker leaves only once its end is committed."""
    opened: RunStore | None = None
    """The store, once `Host.run` has opened it."""

    @property
    def store(self) -> RunStore:
        """The store the loop works on; only the loop's steps ask, after `Host.run` opened it."""
        assert self.opened is not None, "the host's store is opened by Host.run"
        return self.opened
