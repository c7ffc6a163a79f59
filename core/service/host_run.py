"""Running the engine for a workspace (`jarvis host`): the host, what stops it, and `serve`,
which runs it with a driver's fault turned into the store's own error."""

from __future__ import annotations

from core.host.fleet import HostNameHeld, HostNameTaken
from core.host.host import Host, HostFailed

__all__ = ["Host", "HostFailed", "HostNameHeld", "HostNameTaken", "serve"]


def serve(host: Host) -> None:
    """Run ``host`` until it is stopped.

    Raises:
        StoreError: the store failed in a way the host cannot go on from (a driver's fault
            that escaped its loop included, named by the store it is).
        HostLockHeld, HostNameHeld, HostNameTaken, HostFailed: as `Host.run`.
    """
    host.run()
