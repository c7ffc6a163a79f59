"""The IPC tree watched with inotify, read on the caller's own thread.

A watcher thread (watchfiles) cost the host as much CPU per event as reading the event: the
kernel queued six or so events per file (the writer's temporary file made, written, closed and
renamed, then the host's own unlink), a Rust thread gathered them, and a Python thread turned each
into an enum and a tuple, filtered it and passed the path on through a queue. Here the kernel is
asked only for what can bring an event file (a name created, moved in or closed after writing)
and the host's loop reads them itself, when its wait on this descriptor ends: no thread, no
queue, no debounce.

Every folder of the tree is watched (the host's quarantine and the lanes' ``input/`` aside, which
only the host and runners write to), without following links: a linked folder is never entered,
the sweep moves it aside. A folder made or moved in is watched and then listed, since a file
written into it before the watch began would never be reported. A folder moved out is no longer
watched. Anything the kernel could not report (its queue overflowed, a watch could not be added)
is said (`TreeWatch.read`'s ``lost``, `TreeWatch.complete`): the caller then sweeps the whole
tree.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from typing import Any

from core.ipc.layout import ERRORS, HOST_SNAPSHOTS, INPUT, JSON_SUFFIX

log = logging.getLogger("jarvis.host")

try:  # Linux only; elsewhere the host watches with watchfiles (`core.host.inbox`)
    from inotify_simple import INotify
    from inotify_simple import flags as _in
except (ImportError, OSError):  # pragma: no cover - not Linux
    INotify = None

if INotify is not None:
    _FILE_IN = _in.CREATE | _in.MOVED_TO | _in.CLOSE_WRITE
    MASK = int(_FILE_IN | _in.MOVE_SELF | _in.DONT_FOLLOW | _in.ONLYDIR | _in.EXCL_UNLINK)
    _ISDIR, _OVERFLOW, _IGNORED = int(_in.ISDIR), int(_in.Q_OVERFLOW), int(_in.IGNORED)
    _MOVE_SELF, _NEW = int(_in.MOVE_SELF), int(_in.CREATE | _in.MOVED_TO)


def _skipped(parts: tuple[str, ...]) -> bool:
    """Folders the host does not watch: its quarantine, and each lane's ``input/``."""
    return parts == (ERRORS,) or (len(parts) == 2 and parts[1] == INPUT)


class TreeWatch:
    """The inotify watches on one IPC tree. Make with `open`; `close` when done."""

    def __init__(self, root: str, inotify: Any) -> None:
        self.root = root
        self._inotify = inotify
        self._paths: dict[int, str] = {}
        """Each watch's folder, as a path under the root."""
        self._ids: dict[int, tuple[int, int]] = {}
        """Each watch's folder's (device, inode), to tell a folder moved away from one moved in."""
        self.complete = True
        """False once a folder could not be watched (the user's inotify watches are used up):
        the watch then sees only part of the tree, and the caller sweeps all of it as if
        polling."""

    @staticmethod
    def supported() -> bool:
        """Whether this system has inotify (Linux)."""
        return INotify is not None

    @classmethod
    def open(cls, root: str) -> TreeWatch | None:
        """A watch on every folder under ``root``, or None where inotify cannot be had (not
        Linux, or the user's inotify instances are used up): the caller watches otherwise."""
        if INotify is None:
            return None
        try:
            inotify = INotify(nonblocking=True)
        except OSError as exc:
            log.warning("cannot watch the IPC tree with inotify: %s", exc.strerror or exc)
            return None
        watch = cls(os.path.normpath(root), inotify)
        for _ in watch._add_tree(watch.root):
            pass
        return watch

    def fileno(self) -> int:
        """The descriptor to wait on (readable when events are queued)."""
        return int(self._inotify.fileno())

    def close(self) -> None:
        self._inotify.close()
        self._paths.clear()
        self._ids.clear()

    def read(self) -> tuple[list[str], bool]:
        """The files reported since the last read (without waiting), in the order they came,
        and whether the kernel's queue overflowed, losing events (the caller then sweeps the
        whole tree)."""
        found: list[str] = []
        lost = False
        paths = self._paths
        for wd, mask, _, name in self._inotify.read(timeout=0):
            if mask & _OVERFLOW:
                lost = True
                continue
            folder = paths.get(wd)
            if folder is None:
                continue  # a watch already let go; its last events mean nothing now
            if mask & _IGNORED:
                self._forget(wd)  # its folder was removed
            elif mask & _MOVE_SELF:
                self._moved(wd, folder)
            elif mask & _ISDIR:
                if mask & _NEW:
                    found += self._new_folder(os.path.join(folder, name))
            elif name.endswith(JSON_SUFFIX) and not name.startswith("."):
                if name in HOST_SNAPSHOTS and os.path.dirname(folder) == self.root:
                    continue  # the host's own snapshots at the top of a lane
                found.append(os.path.join(folder, name))
        return found, lost

    def _new_folder(self, path: str) -> list[str]:
        """Watch a folder made or moved in (and the folders in it), then list its files: one
        written before the watch began is never reported."""
        found: list[str] = []
        for folder in self._add_tree(path):
            try:
                with os.scandir(folder) as entries:
                    found += sorted(
                        entry.path
                        for entry in entries
                        if entry.name.endswith(JSON_SUFFIX) and not entry.name.startswith(".")
                    )
            except OSError:
                continue  # gone again, or not a folder: nothing to take
        return found

    def _add_tree(self, top: str) -> Iterator[str]:
        """Watch ``top`` and every real folder below it, yielding each one watched."""
        pending = [top]
        while pending:
            folder = pending.pop()
            parts = self._parts(folder)
            if parts is None or _skipped(parts):
                continue
            try:
                wd = self._inotify.add_watch(folder, MASK)
                info = os.stat(folder, follow_symlinks=False)
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    if self.complete:
                        log.warning(
                            "cannot watch %s: the user's inotify watches are used up "
                            "(fs.inotify.max_user_watches); the host sweeps the whole tree",
                            folder,
                        )
                    self.complete = False
                continue  # gone, a link (ONLYDIR, DONT_FOLLOW), or not a folder
            self._paths[wd] = folder
            self._ids[wd] = (info.st_dev, info.st_ino)
            yield folder
            try:
                with os.scandir(folder) as entries:
                    pending += [e.path for e in entries if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue

    def _parts(self, folder: str) -> tuple[str, ...] | None:
        if folder == self.root:
            return ()
        inside = os.path.join(self.root, "")
        return tuple(folder[len(inside) :].split(os.sep)) if folder.startswith(inside) else None

    def _moved(self, wd: int, folder: str) -> None:
        """A watched folder was moved: moved within the tree, it was watched again where it
        came in (the same watch, its path changed); moved out, it and the folders below it
        are no longer watched, and their files are no longer the host's."""
        try:
            info = os.stat(folder, follow_symlinks=False)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            if (info.st_dev, info.st_ino) == self._ids.get(wd):
                return  # already watched where it came in
        below = os.path.join(folder, "")
        for other, path in list(self._paths.items()):
            if other == wd or path.startswith(below):
                self._forget(other)
                try:
                    self._inotify.rm_watch(other)
                except OSError:
                    pass  # already gone with its folder

    def _forget(self, wd: int) -> None:
        self._paths.pop(wd, None)
        self._ids.pop(wd, None)
