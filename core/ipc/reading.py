"""Reading an IPC event file without trusting the file or its writer.

The host reads an event only if it is a regular file, not a link, and not over
`MAX_EVENT_BYTES`, and it checks that again on the open file descriptor, so a writer cannot swap
a link or a FIFO in between the check and the read. Below the IPC root each folder is opened
without following links (`OpenFolders` keeps them open for a batch).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from core.contracts.errors import preview
from core.ipc.layout import Rejection

#: The size cap for every event file. Real events are a few hundred bytes.
MAX_EVENT_BYTES = 64 * 1024

READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    # A FIFO swapped in after the lstat must not block the host on open.
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)

_DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)

_CAN_WALK = os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


def file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    return "special file"


def read_event(
    path: Path,
    limit: int = MAX_EVENT_BYTES,
    *,
    root: Path | None = None,
    folders: OpenFolders | None = None,
) -> bytes | Rejection | None:
    """The bytes of an event file, or why they cannot be had; never raises for the file's sake.

    Args:
        path: the event file.
        limit: the size cap in bytes.
        root: when given (the IPC root), the file is opened by walking down from ``root`` one
            folder at a time without following links, so a folder swapped for a link after
            `IpcLayout.classify` looked at it cannot redirect the read.
        folders: with ``root``, the folders already opened that way (`OpenFolders`): a batch of
            files walks down to each folder once.

    Returns:
        The content; ``None`` when the file is gone (another reader or its writer removed it:
        not an error, there is nothing to ingest or quarantine); or a `Rejection` (lane ``None``)
        with code ``symlink``, ``not_regular_file``, ``too_large``, ``outside_tree`` or
        ``unreadable``.
    """
    # In a folder the batch already walked to, the file is looked at and opened relative to
    # that folder's descriptor: no path is resolved again, for the lstat nor for the open.
    held = _held_folder(path, root, folders)
    try:
        info = os.lstat(path) if held is None else os.stat(held[1], dir_fd=held[0],
                                                            follow_symlinks=False)  # fmt: skip
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as exc:
        return _unreadable(exc)
    # Looked at before it is opened: opening a device or a FIFO can act on it.
    early = _refuse(info.st_mode, info.st_size, limit)
    if early is not None:
        return early
    opened = _open_for_read(path, root, folders, held)
    if not isinstance(opened, int):
        return opened
    try:
        info = os.fstat(opened)
        # Checked again on the descriptor: the file may have been replaced since the lstat.
        late = _refuse(info.st_mode, info.st_size, limit)
        if late is not None:
            return late
        # One read of one byte more than the file had: fewer back means the end was reached
        # (the usual case, one system call); all of it means it grew meanwhile, and it is read
        # on up to one byte over the limit, which tells a file grown too large.
        data = os.read(opened, info.st_size + 1)
        if len(data) > info.st_size:
            chunks = [data]
            remaining = limit + 1 - len(data)
            while remaining > 0:
                chunk = os.read(opened, remaining)
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            data = b"".join(chunks)
    except OSError as exc:
        return _unreadable(exc)
    finally:
        os.close(opened)
    if len(data) > limit:
        return _too_large(limit)
    return data


def _held_folder(
    path: Path, root: Path | None, folders: OpenFolders | None
) -> tuple[int, str] | None:
    """The descriptor of the file's folder when the batch holds it open, and the file's name."""
    if root is None or folders is None or not folders.fds or not _CAN_WALK:
        return None
    folder, _, name = os.fspath(path).rpartition(os.sep)
    fd = folders.fds.get(folder)
    if fd is None:  # a relative or unusual spelling: the folder's key is its absolute path
        whole = os.path.abspath(path)
        folder, name = os.path.dirname(whole), os.path.basename(whole)
        fd = folders.fds.get(folder)
    return None if fd is None or not name else (fd, name)


def _refuse(mode: int, size: int, limit: int) -> Rejection | None:
    if stat.S_ISLNK(mode):
        return _symlink()
    if not stat.S_ISREG(mode):
        return Rejection(
            "not_regular_file",
            f"The file is a {file_kind(mode)}, not a regular file.",
            None,
        )
    if size > limit:
        return _too_large(limit)
    return None


def _symlink() -> Rejection:
    return Rejection("symlink", "The file is a symbolic link; only regular files are read.", None)


def _too_large(limit: int) -> Rejection:
    return Rejection("too_large", f"The file is over the {limit:,}-byte limit.", None)


def _unreadable(exc: BaseException) -> Rejection:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return Rejection("unreadable", f"The file cannot be read: {reason}.", None)


class OpenFolders:
    """Folders opened beneath the IPC root without following links, kept open for a batch.

    A folder swapped for a link after it was opened changes nothing: the descriptor is the
    real folder that was walked to. Use as a context manager; every descriptor is closed at
    its end.
    """

    def __init__(self) -> None:
        self.fds: dict[str, int] = {}

    def __enter__(self) -> OpenFolders:
        return self

    def __exit__(self, *_: object) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def _open_for_read(
    path: Path,
    root: Path | None,
    folders: OpenFolders | None = None,
    held: tuple[int, str] | None = None,
) -> int | Rejection | None:
    try:
        if held is not None:
            return os.open(held[1], READ_FLAGS, dir_fd=held[0])
        if root is None or not _CAN_WALK:
            return os.open(path, READ_FLAGS)
        return _open_beneath(path, root, folders)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return _symlink()
        return _unreadable(exc)


def _parts_inside(target: str, base: str) -> list[str] | None:
    """``target``'s path parts below ``base``, or None when it is not below it."""
    relative = os.path.relpath(target, base)
    parts = relative.split(os.sep)
    if os.path.isabs(relative) or os.pardir in parts or relative == os.curdir:
        return None
    return parts


def _open_beneath(
    path: Path, root: Path, folders: OpenFolders | None = None
) -> int | Rejection | None:
    target = os.path.abspath(path)
    # The root may be spelled as given or by its real location, as `IpcLayout.classify` allows.
    # The real location is resolved only when the given spelling does not fit: resolving it is
    # a system call per folder, and this runs for every event file.
    base = os.path.abspath(root)
    parts = _parts_inside(target, base)
    if parts is None:
        real = os.path.realpath(root)
        if real != base:
            base = real
            parts = _parts_inside(target, base)
    if parts is None:
        return Rejection("outside_tree", "The file is not inside the IPC tree.", None)
    # Walked down from the deepest folder on the way that the batch already holds open: a
    # batch's runs share their lane and its progress folder, so each is walked to once.
    folder, depth, owned = -1, 0, False
    if folders is not None:
        for depth in range(len(parts) - 1, -1, -1):
            folder = folders.fds.get(os.path.join(base, *parts[:depth]), -1)
            if folder >= 0:
                break
    if folder < 0:
        folder, depth, owned = os.open(base, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0)), 0, True
        if folders is not None:
            folders.fds.setdefault(base, folder)
            owned = folders.fds[base] != folder
    walked = os.path.join(base, *parts[:depth])
    try:
        for part in parts[depth:-1]:
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=folder)
            except NotADirectoryError:
                # Linux says ENOTDIR, not ELOOP, for a link opened with O_DIRECTORY|O_NOFOLLOW.
                if stat.S_ISLNK(os.lstat(part, dir_fd=folder).st_mode):
                    return Rejection(
                        "symlink",
                        f"The folder {preview(part)} on the file's path is a symbolic link.",
                        None,
                    )
                return None
            if owned:
                os.close(folder)
            folder, owned = inner, True
            walked = os.path.join(walked, part)
            if folders is not None and walked not in folders.fds:
                folders.fds[walked] = folder  # kept open for the batch's next file below it
                owned = False
        return os.open(parts[-1], READ_FLAGS, dir_fd=folder)
    finally:
        if owned:
            os.close(folder)
