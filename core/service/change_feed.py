"""A console's end of the host's change feed (`core.feed_wire`, `core.host.change_feed`).

`FeedListener` is a `ChangeListener` that connects to the workspace's host and keeps the
messages it sends; `changes_after` merges those that take a reader on from its position, so a
live view applies what changed without reading the store. While no host serves a feed (none
runs, or an older one), it is the store's own listener (PostgreSQL's LISTEN, or nothing on
SQLite: the reader polls), and it tries to connect again every `RETRY_S`.
"""

from __future__ import annotations

import collections
import os
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.feed_wire import MAX_LINE, connect, decode
from core.service.reads import HostLine
from core.store.changes import ChangeListener, listener_for

RETRY_S = 2.0
"""How often a listener with no feed tries to connect to one."""
KEEP = 2000
"""Messages kept for a reader that has not read them yet (further behind, it reads the store)."""
FRESH_S = 3.0
"""A feed heard from within this long answers a read (it ticks every second); older, the reader
reads the store itself, so a console's read time never stands for a feed that went quiet."""
SILENT_S = 30.0
"""A feed that said nothing this long (it ticks every second) is taken for gone. Generous: a
host on a saturated machine ticks late, and a console that let go of it read the store
itself, adding to the load (a host that died closes the socket, which is seen at once)."""


@dataclass
class FedChanges:
    """What the feed says changed after a reader's position: as its own read would find it."""

    to_seq: int
    """The journal position the changes take the reader to."""
    entries: list[dict[str, Any]]
    """The journal entries after the reader's position, oldest first."""
    rows: dict[str, dict[str, Any]]
    """The table rows of the runs the entries name, by run id."""
    counts: dict[str, int] | None
    """Runs per state (None: no change said them)."""
    burn: dict[str, Any] | None
    hosts: tuple[HostLine, ...]
    pid: int | None
    """The host serving the feed (it holds the workspace)."""
    changed: bool = field(default=False)
    """Anything after the reader's position."""


class FeedListener(ChangeListener):
    """The host's feed for one reader, or ``fallback`` while none is served.

    `wait` runs on one thread (the reader's listener thread); `changes_after` and `consumed` on
    others: the messages are kept under a lock.
    """

    may_hear = True

    def __init__(self, root: Path, fallback: ChangeListener) -> None:
        super().__init__()
        self.root = root
        self.fallback = fallback
        self._sock: socket.socket | None = None
        self._buffer = bytearray()
        self._messages: collections.deque[dict[str, Any]] = collections.deque(maxlen=KEEP)
        self._lock = threading.Lock()
        self._hello: dict[str, Any] | None = None
        self._hosts: tuple[HostLine, ...] = ()
        self._next_try = 0.0
        self._heard_at = 0.0
        self.connects = 0
        """Connections made (each starts a run of messages the reader must first catch up to)."""

    @property
    def hears_changes(self) -> bool:  # type: ignore[override]
        return self._sock is not None or self.fallback.hears_changes

    @property
    def listens(self) -> int:  # type: ignore[override]
        return self.fallback.listens + self.connects

    @property
    def connected(self) -> bool:
        return self._sock is not None

    @property
    def fresh(self) -> bool:
        """Connected and heard from within `FRESH_S`: what it says is as good as a read."""
        return self._sock is not None and time.monotonic() - self._heard_at <= FRESH_S

    def wait(self, timeout: float) -> int | None:
        """Block until the feed says something (its newest position) or ``timeout`` passes."""
        if self._sock is None and not self._connect():
            return self.fallback.wait(timeout)
        sock = self._sock
        assert sock is not None
        try:
            ready, _, _ = select.select([sock], [], [], timeout)
            if not ready:
                if time.monotonic() - self._heard_at > SILENT_S:
                    self._disconnect()
                return None
            data = sock.recv(1 << 16)
        except (OSError, ValueError):
            data = b""
        if not data or len(self._buffer) + len(data) > MAX_LINE:
            self._disconnect()
            return None
        self._heard_at = time.monotonic()
        self._buffer += data
        newest: int | None = None
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            message = decode(line)
            if message is None:
                continue
            newest = self._keep(message) or newest
        return newest

    def _keep(self, message: dict[str, Any]) -> int | None:
        kind = message["kind"]
        with self._lock:
            if "hosts" in message:
                self._hosts = _hosts(message["hosts"])
            if kind == "hello":
                self._hello = message
                self._messages.clear()
                return None
            if kind == "changes":
                self._messages.append(message)
                return int(message["to_seq"])
        return None

    def _connect(self) -> bool:
        if self.closed or time.monotonic() < self._next_try:
            return False
        self._next_try = time.monotonic() + RETRY_S
        try:
            sock = connect(self.root)
        except OSError:
            return False
        with self._lock:
            self._sock = sock
            self._buffer.clear()
            self._hello = None
            self._messages.clear()
        self._heard_at = time.monotonic()
        self.connects += 1
        return True

    def _disconnect(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
            self._hello = None
            self._messages.clear()
        if sock is not None:
            sock.close()
        self._next_try = time.monotonic() + RETRY_S

    def close(self) -> None:
        super().close()
        self.fallback.close()
        self._disconnect()

    # -- for the reader -----------------------------------------------------------------------

    def changes_after(self, position: int) -> FedChanges | None:
        """What the feed says changed after ``position``, or None when it cannot say (not
        connected, the reader is behind what it kept, or changes too many for a message):
        the reader reads the store then."""
        with self._lock:
            hello = self._hello
            if self._sock is None or hello is None or not self.fresh:
                return None
            if position < int(hello["seq"]):
                return None  # changed before this connection's first message: unseen by it
            later = [m for m in self._messages if int(m["to_seq"]) > position]
            hosts = self._hosts
        pid = int(hello["pid"]) if isinstance(hello.get("pid"), int) else None
        if not later:
            return FedChanges(position, [], {}, None, None, hosts, pid)
        if int(later[0]["from_seq"]) > position:
            return None  # a gap: some change never reached this reader
        entries: list[dict[str, Any]] = []
        rows: dict[str, dict[str, Any]] = {}
        for before, message in zip([None, *later], later, strict=False):
            if before is not None and message["from_seq"] != before["to_seq"]:
                return None
            if message.get("entries") is None or message.get("cut") is not None:
                return None  # too many, or retention cut them: a read of the store says
            entries += [e for e in message["entries"] if int(e["seq"]) > position]
            rows.update({row["run_id"]: row for row in message.get("rows") or ()})
        last = later[-1]
        return FedChanges(
            int(last["to_seq"]), entries, rows, last.get("counts"), last.get("burn"), hosts, pid,
            changed=True,
        )  # fmt: skip

    def urgent_after(self, position: int) -> bool:
        """Whether the messages after ``position`` hold more than runs' progress (or cannot
        say: too many changes, retention's cut)."""
        with self._lock:
            for message in self._messages:
                if int(message["to_seq"]) <= position:
                    continue
                entries = message.get("entries")
                if entries is None or message.get("cut") is not None:
                    return True
                if any(entry.get("kind") != "progress" for entry in entries):
                    return True
        return False

    def consumed(self, position: int) -> None:
        """The reader is at ``position``: the messages it took are let go."""
        with self._lock:
            while self._messages and int(self._messages[0]["to_seq"]) <= position:
                self._messages.popleft()


def _hosts(found: Any) -> tuple[HostLine, ...]:
    lines = []
    for item in found if isinstance(found, list) else ():
        if isinstance(item, list) and len(item) == 4:
            name, lanes, state, heartbeat = item
            held = tuple(lanes) if lanes is not None else None
            lines.append(HostLine(str(name), held, state, heartbeat))
    return tuple(lines)


NO_FEED = "JARVIS_NO_FEED"
"""Set (to anything but empty): a console reads the store itself, as with no host (to compare)."""


def feed_listener(root: Path, location: str | Path) -> ChangeListener:
    """The listener a live view of the workspace at ``root`` uses: the host's feed (a
    `FeedListener`), else the store's own (`core.store.changes.listener_for`)."""
    if os.environ.get(NO_FEED):
        return listener_for(location)
    return FeedListener(root, listener_for(location))


__all__ = ["NO_FEED", "FedChanges", "FeedListener", "feed_listener"]
