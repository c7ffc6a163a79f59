"""Writing and quarantining IPC files without trusting the files or their writers.

Writers (host and workers alike) write a temp file and rename it into place, so a reader never
sees half a document. How the host reads an event is `core.ipc.reading`'s (re-exported here). A
file the host refuses is moved to ``errors/`` with a reason beside it, never deleted
(docs/ipc.md).
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.ipc.reading import MAX_EVENT_BYTES, READ_FLAGS, OpenFolders, file_kind, read_event
from core.workspace import lane_problem

__all__ = [
    "MAX_EVENT_BYTES", "REASON_SUFFIX", "OpenFolders", "QuarantineError", "atomic_write_json",
    "quarantine", "read_event",
]  # fmt: skip

REASON_SUFFIX = ".reason.json"

_WRITE_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)

# Quarantined names keep the original's readable part; anything else becomes '_'.
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]")
_NAME_KEEP = 100


class QuarantineError(OSError):
    """The errors folder cannot be created or written; nothing can be quarantined."""


def utc_now() -> datetime:
    """The current time in UTC (the default clock for `quarantine`)."""
    return datetime.now(UTC)


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` so that readers see the old file or the new, never half.

    The document goes to ``.<name>.<random>.tmp`` in the same folder (a name every reader
    ignores), then is renamed over ``path``. There is no fsync: what the IPC tree needs is safety
    against a process crashing mid-write, which the atomic rename gives; surviving a power cut
    would cost a disk flush per event for files that are transient anyway.

    Raises:
        TypeError, ValueError: ``obj`` is not JSON-serialisable (NaN and infinity included).
        OSError: the folder cannot be written. No temp file is left behind.
    """
    data = (json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    temp = path.with_name(f".{path.name[:_NAME_KEEP]}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, _WRITE_FLAGS, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        _unlink_quietly(temp)
        raise


def quarantine(
    path: Path,
    errors_dir: Path,
    *,
    lane: str | None,
    code: str,
    message: str,
    details: Mapping[str, Any] | None = None,
    clock: Callable[[], datetime] = utc_now,
    root: Path | None = None,
) -> Path:
    """Move a refused file into ``errors_dir`` and write why beside it; never deletes content.

    The file goes to ``errors/<YYYYmmddTHHMMSS.ffffffZ>-<lane or 'unknown'>-<name>`` (``.2``,
    ``.3``… appended if taken), moved with a rename, so a link is moved as the link and anything
    that is not a regular file (a folder, a FIFO) is moved without being opened. Across file
    systems a regular file or link is copied and then removed; other things stay put.

    Only things inside the IPC tree are moved (``errors_dir``'s parent, or ``root`` when given:
    the host also refuses OpenClaw requests from ``work/requests``), and never through a link:
    when a folder between the tree's root and the file is a symbolic link, that link is what
    gets moved (it is the lane's doing; the file it leads to may be anyone's). A path with
    ``..`` or outside the tree is left alone and only the reason is written.

    The reason file, ``<that>.reason.json``, holds ``code``, ``message``, ``lane``,
    ``original_path``, ``quarantined_at``, ``details``, and what became of the content:
    ``outcome`` (``moved``, ``copied``, ``vanished`` — someone removed it first — or
    ``not_moved``, with ``outcome_error`` saying why), ``moved_path`` (what was moved: the file,
    or the linked folder) and ``stored_as`` (where it is now).

    Args:
        path: the refused file.
        errors_dir: the quarantine folder (`IpcLayout.errors_dir`); created if missing.
        lane: the lane folder the file was found in, or None when it is not a valid lane.
        code: why it was refused, a stable snake_case code.
        message: the same in a sentence.
        details: anything more worth keeping (made JSON-safe).
        clock: the current time, aware or UTC.

    Returns:
        The reason file's path. What was moved is at the same path without ``.reason.json``
        unless ``outcome`` says otherwise. A file that could not be moved (``not_moved``) is
        still where it was; the caller must remember not to refuse it again.

    Raises:
        QuarantineError: ``errors_dir`` cannot be created or written. A file moved before its
            reason failed to be written is moved back where it was.
    """
    try:
        errors_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise QuarantineError(f"Cannot create {errors_dir}: {exc.strerror or exc}.") from exc
    if not errors_dir.is_dir():
        raise QuarantineError(f"{errors_dir} is not a folder.")
    now = clock()
    now = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    source, refusal = _what_to_move(path, root or errors_dir.parent)
    name = _safe(source if source is not None else path)
    stored = _free_name(errors_dir, f"{now:%Y%m%dT%H%M%S.%f}Z-{_lane_part(lane)}-{name}")
    if source is None:
        outcome, error = "not_moved", refusal
    else:
        outcome, error = _move(source, stored)
    moved = outcome in ("moved", "copied")
    reason = {
        "code": code,
        "message": message,
        "lane": lane,
        "original_path": _text(os.fspath(path)),
        "quarantined_at": now.isoformat(timespec="microseconds").replace("+00:00", "Z"),
        "details": _json_safe(details) if details is not None else None,
        "outcome": outcome,
        "outcome_error": error,
        "moved_path": _text(os.fspath(source)) if moved and source is not None else None,
        "stored_as": _text(str(stored)) if moved else None,
    }
    reason_path = stored.with_name(stored.name + REASON_SUFFIX)
    try:
        atomic_write_json(reason_path, _json_safe(reason))
    except OSError as exc:
        # A file in errors/ without its reason is a file nobody can account for: put it back
        # where it was (a rename needs no space), to be refused again once the disk allows.
        if outcome == "moved" and source is not None:
            _move(stored, source)
        raise QuarantineError(f"Cannot write {reason_path}: {exc.strerror or exc}.") from exc
    return reason_path


def _what_to_move(path: Path, root: Path) -> tuple[Path | None, str | None]:
    """The thing to move for ``path`` under ``root``: the file or the first linked folder.

    Returns (None, why) when nothing may be moved: a rename through '..' or a link would move a
    file that is not the lane's to give.
    """
    raw = os.fspath(path)
    if "\x00" in raw:
        return None, "the path contains a NUL character"
    if os.pardir in raw.split(os.sep):
        return None, "the path contains '..'; only files inside the IPC tree are moved"
    target = os.path.abspath(raw)
    for base in dict.fromkeys([os.path.abspath(root), os.path.realpath(root)]):
        prefix = base if base.endswith(os.sep) else base + os.sep
        if not target.startswith(prefix):
            continue
        folder = base
        for part in target[len(prefix) :].split(os.sep)[:-1]:
            folder = os.path.join(folder, part)
            try:
                if stat.S_ISLNK(os.lstat(folder).st_mode):
                    return Path(folder), None
            except OSError:
                break  # a folder that is gone or unreadable: the rename will say what happened
        return path, None
    return None, "the path is outside the IPC tree; only files inside it are moved"


def _move(source: Path, target: Path) -> tuple[str, str | None]:
    """Move ``source`` to ``target``; (outcome, error) as recorded in the reason file."""
    try:
        os.replace(source, target)
    except (FileNotFoundError, NotADirectoryError):
        return "vanished", None
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            return _copy_across(source, target)
        return "not_moved", exc.strerror or str(exc)
    return "moved", None


def _copy_across(source: Path, target: Path) -> tuple[str, str | None]:
    """Copy a regular file or a link to another file system, then remove the original."""
    try:
        info = os.lstat(source)
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(source), target)
        elif stat.S_ISREG(info.st_mode):
            _copy_file(source, target)
        else:
            return "not_moved", f"cannot copy a {file_kind(info.st_mode)} across file systems"
        os.unlink(source)
    except FileNotFoundError:
        _unlink_quietly(target)
        return "vanished", None
    except OSError as exc:
        return "not_moved", exc.strerror or str(exc)
    return "copied", None


def _copy_file(source: Path, target: Path) -> None:
    reader = os.open(source, READ_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(reader).st_mode):
            raise OSError(errno.EINVAL, "the file stopped being a regular file")
        writer = os.open(target, _WRITE_FLAGS, 0o644)
        try:
            while chunk := os.read(reader, 1024 * 1024):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(writer, view) :]
        except BaseException:
            os.close(writer)
            _unlink_quietly(target)
            raise
        os.close(writer)
    finally:
        os.close(reader)


def _free_name(folder: Path, name: str) -> Path:
    # One host holds the workspace lock, so check-then-rename cannot race another quarantine.
    candidate = folder / name
    count = 1
    while os.path.lexists(candidate) or os.path.lexists(str(candidate) + REASON_SUFFIX):
        count += 1
        candidate = folder / f"{name}.{count}"
    return candidate


def _lane_part(lane: str | None) -> str:
    return lane if lane is not None and lane_problem(lane) is None else "unknown"


def _safe(path: Path) -> str:
    name = _UNSAFE_CHARS.sub("_", path.name)[-_NAME_KEEP:]
    return name or "unnamed"


def _text(value: str) -> str:
    # A file name that is not UTF-8 arrives with lone surrogates, which cannot be written as
    # UTF-8; they are kept visibly as backslash escapes.
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _json_safe(value: Any) -> Any:
    """``value`` as plain JSON data: unknown objects by ``repr``, bad text escaped, NaN as text."""
    if isinstance(value, str):
        return _text(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, Mapping):
        return {_text(str(k)): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, Path):
        return _text(str(value))
    return _text(repr(value))


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
