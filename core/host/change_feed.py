"""The host's change feed: what changed in the store, read once and sent to every console.

Each console used to poll the store twice a second on a connection of its own; fifty of them on
a busy workspace were fifty readers taking the database from the host that writes it. Here one
thread of the host reads what changed (only while anyone listens: a look at the journal's
position every `LOOK_EVERY_S`, and the entries, the runs they name and the counts when it
moved) and writes it to every console connected to the workspace's socket (`core.feed_wire`).
It reads the store, not the host's own commits, so what the CLI, other consoles and other hosts
commit is in it too, and every reader gets what its own read would have found.

A console that falls behind (its socket's buffer and `MAX_BACKLOG` full) is dropped: it reads
the store from where it was, as it does with no feed, and connects again. A store fault drops
every console the same way and is said once; the host's loop never waits on the feed.
"""

from __future__ import annotations

import logging
import os
import selectors
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

from core.feed_wire import encode, short_path, socket_path
from core.service.fleet import Fleet
from core.store.errors import StoreError
from core.store.location import open_store

log = logging.getLogger("jarvis.host")

LOOK_EVERY_S = 0.05
"""How often the feed looks at the journal's position while anyone listens."""
STREAM_GAP_S = 0.25
"""The least time between two messages of changes: the first change after a quiet spell goes
out at once (within `LOOK_EVERY_S`), a stream of them four times a second, so a console on a
busy workspace decodes a few messages a second, not twenty."""
TICK_EVERY_S = 1.0
"""A message at least this often, changes or not: readers know the feed is alive."""
MAX_ENTRIES = 2000
"""Journal entries one message carries; more, and the readers read the store instead."""
MAX_BACKLOG = 8 * 1024 * 1024
"""Bytes waiting for one reader before it is dropped (it reads the store and comes back)."""
IDLE_CLOSE_S = 30.0
"""With nobody listening this long, the feed's store connection is closed."""


class _Reader:
    """One connected console: its socket and what is still to be sent to it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = bytearray()


class ChangeFeed:
    """The feed's thread and socket. `start` and `join` are called from the host's loop only.

    Args:
        store_at: the workspace's store (a connection of the feed's own is opened on it).
        root: the workspace (its socket is there).
        stopping: set when the host stops; the thread ends within `LOOK_EVERY_S` or so.
    """

    def __init__(self, store_at: str | Path, root: Path, stopping: threading.Event) -> None:
        self.store_at = store_at
        self.path = socket_path(root)
        self.root = root
        self.stopping = stopping
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._fleet: Fleet | None = None
        self._seq: int | None = None
        """The position the last message reached (None until someone first listened)."""
        self._readers: dict[int, _Reader] = {}
        self._selector = selectors.DefaultSelector()
        self._problem: str | None = None
        self.sent = 0
        """Messages written, counted once per message (not per reader): for tests."""

    def start(self) -> None:
        """Serve the feed; without it (the socket cannot be made) consoles read the store."""
        try:
            self._listener = self._bind()
        except OSError as exc:
            log.warning("no change feed for consoles (%s); they read the store themselves", exc)
            return
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._thread = threading.Thread(target=self._run, name="change-feed", daemon=True)
        self._thread.start()

    def _bind(self) -> socket.socket:
        # The host holds the workspace's lock: a socket file already there is a dead host's.
        try:
            if stat.S_ISSOCK(os.lstat(self.path).st_mode):
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            with short_path(self.path) as address:
                old = os.umask(0o177)  # owner only, from the moment it exists
                try:
                    sock.bind(address)
                finally:
                    os.umask(old)
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        return sock

    def join(self) -> None:
        """Wait for the thread (the host is stopping), close every connection, remove the socket."""
        if self._thread is not None:
            self._thread.join()
        for reader in list(self._readers.values()):
            self._drop(reader)
        if self._listener is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            self._listener.close()  # closing twice (after a failure) is harmless
            self._listener = None
        self._close_store()
        self._selector.close()

    # -- the thread -------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._serve()
        except Exception:
            # A bug of the feed's: the host goes on without it. Every console is let go and
            # the socket closed, so they read the store themselves, as with no host.
            log.exception("the change feed stopped; consoles read the store themselves")
            for reader in list(self._readers.values()):
                self._drop(reader)
            if self._listener is not None:
                self._selector.unregister(self._listener)
                self._listener.close()

    def _serve(self) -> None:
        next_tick = 0.0
        next_change = 0.0
        quiet_since = time.monotonic()
        while not self.stopping.is_set():
            wait = LOOK_EVERY_S if self._readers else 0.5
            for key, mask in self._selector.select(wait):
                if key.data is None:
                    self._accept()
                elif mask & selectors.EVENT_READ:
                    self._hear(key.data)
                elif mask & selectors.EVENT_WRITE:
                    self._flush(key.data)
            now = time.monotonic()
            if not self._readers:
                if self._fleet is not None and now - quiet_since > IDLE_CLOSE_S:
                    self._close_store()
                continue
            quiet_since = now
            if now < next_change:
                continue  # the last message of changes went out a moment ago
            try:
                sent = self._publish(tick=now >= next_tick)
            except StoreError as exc:
                self._fault(exc)
                continue
            if sent:
                next_tick = now + TICK_EVERY_S
                if sent == "changes":
                    next_change = now + STREAM_GAP_S

    def _store(self) -> Fleet:
        if self._fleet is None:
            self._fleet = Fleet(open_store(self.store_at, migrate=False), self.root)
        return self._fleet

    def _close_store(self) -> None:
        fleet, self._fleet = self._fleet, None
        if fleet is not None:
            try:
                fleet.close()
            except StoreError:
                pass

    def _fault(self, exc: StoreError) -> None:
        """The store failed: every reader goes back to reading it (and says what it finds)."""
        if str(exc) != self._problem:
            log.warning("the change feed cannot read the store (%s); consoles read it", exc)
            self._problem = str(exc)
        for reader in list(self._readers.values()):
            self._drop(reader)
        self._close_store()
        self._seq = None
        self.stopping.wait(1.0)

    def _accept(self) -> None:
        assert self._listener is not None
        try:
            sock, _ = self._listener.accept()
        except OSError:
            return
        sock.setblocking(False)
        reader = _Reader(sock)
        try:
            if self._seq is None:
                self._seq = self._store().last_seq()
            hello = {"kind": "hello", "seq": self._seq, "pid": os.getpid()}
        except StoreError as exc:
            sock.close()
            self._fault(exc)
            return
        self._readers[sock.fileno()] = reader
        self._selector.register(sock, selectors.EVENT_READ, reader)
        self._send(reader, encode(hello))

    def _hear(self, reader: _Reader) -> None:
        # Readers say nothing; what they send is read and dropped, and an end means they left.
        try:
            data = reader.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(reader)

    def _publish(self, *, tick: bool) -> str | None:
        """Send what changed since the last message (or a tick when due); the kind sent."""
        fleet = self._store()
        seq = fleet.last_seq()
        start = self._seq if self._seq is not None else seq
        if seq == start:
            if not tick:
                return None
            message: dict[str, Any] = {"kind": "tick", "seq": seq, "hosts": self._hosts(fleet)}
        else:
            entries: list[dict[str, Any]] | None = fleet.journal(start, limit=MAX_ENTRIES + 1)
            cut = fleet.journal_cut(start)
            rows: list[dict[str, Any]] = []
            assert entries is not None
            if len(entries) > MAX_ENTRIES or cut is not None:
                entries, end = None, seq
            else:
                end = entries[-1]["seq"] if entries else seq
                named = list(dict.fromkeys(entry["run_id"] for entry in entries))
                rows = fleet.table_rows(named) if named else []
            summary = fleet.summary()
            message = {
                "kind": "changes",
                "from_seq": start,
                "to_seq": end,
                "entries": entries,
                "rows": rows,
                "counts": summary.counts,
                "burn": summary.burn,
                "hosts": self._hosts(fleet),
                "cut": cut,
            }
            self._seq = end
        self._problem = None
        line = encode(message)
        for reader in list(self._readers.values()):
            self._send(reader, line)
        self.sent += 1
        return str(message["kind"])

    @staticmethod
    def _hosts(fleet: Fleet) -> list[list[Any]]:
        return [
            [h.name, list(h.lanes) if h.lanes is not None else None, h.state, h.heartbeat_at]
            for h in fleet.live_hosts()
        ]

    def _send(self, reader: _Reader, line: bytes) -> None:
        if len(reader.out) + len(line) > MAX_BACKLOG:
            self._drop(reader)  # it fell behind: it reads the store, and comes back
            return
        was_empty = not reader.out
        reader.out += line
        if was_empty:
            self._flush(reader)

    def _flush(self, reader: _Reader) -> None:
        try:
            while reader.out:
                sent = reader.sock.send(reader.out)
                del reader.out[:sent]
        except BlockingIOError:
            pass
        except OSError:
            self._drop(reader)
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if reader.out else 0)
        try:
            self._selector.modify(reader.sock, events, reader)
        except (KeyError, ValueError):
            pass

    def _drop(self, reader: _Reader) -> None:
        self._readers.pop(reader.sock.fileno(), None)
        try:
            self._selector.unregister(reader.sock)
        except (KeyError, ValueError):
            pass
        reader.sock.close()
