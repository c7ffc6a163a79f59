"""The host's change feed on the wire: where its socket is, and how a message is framed.

A host serves what changed in the store to the workspace's consoles through a Unix socket,
``<workspace>/feed.sock``, so that fifty consoles cost the store one reader, not fifty pollers
(`core.host.change_feed` serves it, `core.service.change_feed` reads it). A message is one line
of JSON (UTF-8, no newline inside: `json.dumps` escapes every control character). The socket is
made readable and writable by its owner only: it carries what the store holds, and a console
that cannot connect reads the store itself, as it does when no host runs.

Messages, each an object with ``v`` (`VERSION`) and ``kind``:

- ``hello``: the first line on a connection: ``seq``, the journal position the feed goes on
  from, and ``pid``, the host's.
- ``changes``: ``from_seq`` and ``to_seq`` (the journal positions before and after), and what a
  console's read of those changes would find: ``entries`` (the journal entries between, oldest
  first; null when there were more than a message carries, and the reader reads the store),
  ``rows`` (the table rows of the runs they name), ``counts`` (runs per state), ``burn`` (what
  agents spent, or null), ``hosts`` (the live and lost hosts), ``cut`` (the journal's horizon
  when retention removed entries a reader at ``from_seq`` has not read, else null).
- ``tick``: nothing changed; ``seq`` and ``hosts``, once a second, so a reader knows the feed
  is alive and sees the hosts' heartbeats age.

A reader that finds a message's ``from_seq`` ahead of its own position has missed something (it
connected late, or fell behind and was dropped) and reads the store from its position, as
before; the feed only spares it the reads while it keeps up.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

SOCKET_NAME = "feed.sock"
VERSION = 1
MAX_LINE = 16 * 1024 * 1024
"""A reader drops a connection whose line grows past this (a feed gone wrong)."""


def socket_path(workspace_root: Path) -> Path:
    """Where the workspace's host serves its feed."""
    return workspace_root / SOCKET_NAME


def encode(message: dict[str, Any]) -> bytes:
    """One message as its line."""
    body = {"v": VERSION, **message}
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=_plain)
    return text.encode() + b"\n"


def _plain(value: Any) -> Any:
    """What JSON cannot say as it is: a database's decimal as a number, the rest as text."""
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def decode(line: bytes) -> dict[str, Any] | None:
    """One line as a message; None for anything that is not one of this version's."""
    try:
        found = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(found, dict) or found.get("v") != VERSION or "kind" not in found:
        return None
    return found


@contextmanager
def short_path(path: Path) -> Iterator[str]:
    """``path`` as a socket address of fewer than 108 bytes, whatever the folder's depth.

    A Unix socket's address is limited to 107 bytes; a workspace deep in a home folder or a
    test's temporary folder is often longer. The folder is opened and named through
    ``/proc/self/fd``, which is short (Linux; elsewhere the path is used as it is).
    """
    raw = os.fspath(path)
    if len(raw.encode()) < 100 or not os.path.isdir("/proc/self/fd"):
        yield raw
        return
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def connect(workspace_root: Path, *, timeout: float = 2.0) -> socket.socket:
    """A connection to the workspace's feed.

    Raises:
        OSError: no host serves one (no socket, or nobody listening on it).
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(timeout)
        with short_path(socket_path(workspace_root)) as address:
            sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return sock
