"""The files the host quarantined, as they lie in ``data/ipc/errors/``, and putting one back.

`quarantine` (`core.ipc.files`) moves a refused file to ``errors/<stamp>-<lane>-<name>`` and
writes why beside it (``<that>.reason.json``). `listing` reads those reasons, newest first;
`replay` moves one file back where it was found, for the host to ingest again (its watcher
sees the file appear; a host that is not running finds it when it starts).

A replay is as safe as a write by the lane itself, and never more: the name given is looked up
among the folder's entries (never joined into a path), only a regular file is moved, and only to
the path it came from when that path is still an event file's place in the tree
(`IpcLayout.classify`: inside a lane folder, no ``..``, no linked folder on the way). The file
is linked into place, so it appears whole and never over a file already there. The host judges
it as any new file: refused again, it is quarantined again with its new reason (a new entry);
nothing replays it by itself, so nothing loops. Its reason file keeps who replayed it and when.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.ipc.files import REASON_SUFFIX, atomic_write_json
from core.ipc.layout import Event, IpcLayout

#: The longest reason file read: the host writes a few hundred bytes.
REASON_MAX_BYTES = 256 * 1024
#: A link is never opened; a FIFO put there never blocks the reader (O_NONBLOCK, at `content`).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
#: The most of a quarantined file shown (`content`).
SHOWN_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class Quarantined:
    """One quarantined file, as its reason file tells it."""

    name: str
    """Its name in ``errors/``: what `replay` takes."""
    code: str
    message: str
    lane: str | None
    quarantined_at: str
    original_path: str
    outcome: str
    """``moved``, ``copied``, ``vanished`` or ``not_moved`` (`core.ipc.files.quarantine`)."""
    replayed_at: str | None
    replayed_by: str | None
    replayable: bool
    why_not: str | None
    """Why it cannot be replayed, when it cannot."""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Replayed:
    """What came of a replay: done (the file back at ``path``), or refused with a code."""

    ok: bool
    code: str
    message: str
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "code": self.code, "message": self.message, "path": self.path}


def _read_reason(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, REASON_MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        reason = json.loads(data) if len(data) <= REASON_MAX_BYTES else None
    except ValueError:
        return None
    return reason if isinstance(reason, dict) else None


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _why_not(layout: IpcLayout, name: str, reason: dict[str, Any]) -> str | None:
    """Why ``name`` cannot be replayed now, or None when it can."""
    if reason.get("replayed_at"):
        return f"it was replayed at {_text(reason['replayed_at'])}"
    if reason.get("outcome") not in ("moved", "copied"):
        return "the host could not move it aside: it is still where it was found"
    try:
        info = os.lstat(layout.errors_dir / name)
    except OSError:
        return "it is no longer in the quarantine folder"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file (a linked folder or a device is never put back)"
    found = layout.classify(Path(_text(reason.get("original_path"))))
    if not isinstance(found, Event):
        said = found.message if found is not None else "it is not an event file's place"
        return f"the host would refuse it again by its path alone: {said}"
    return None


def _entry(layout: IpcLayout, name: str, reason: dict[str, Any]) -> Quarantined:
    why = _why_not(layout, name, reason)
    return Quarantined(
        name=name,
        code=_text(reason.get("code"), "unknown"),
        message=_text(reason.get("message")),
        lane=reason.get("lane") if isinstance(reason.get("lane"), str) else None,
        quarantined_at=_text(reason.get("quarantined_at")),
        original_path=_text(reason.get("original_path")),
        outcome=_text(reason.get("outcome"), "unknown"),
        replayed_at=reason.get("replayed_at") or None,
        replayed_by=reason.get("replayed_by") or None,
        replayable=why is None,
        why_not=why,
    )


def _names(layout: IpcLayout) -> list[str]:
    """The quarantined files' names (those with a reason), newest first: names start with the
    time they were quarantined."""
    try:
        with os.scandir(layout.errors_dir) as entries:
            names = [e.name[: -len(REASON_SUFFIX)] for e in entries
                     if e.name.endswith(REASON_SUFFIX)]  # fmt: skip
    except OSError:
        return []
    return sorted(names, reverse=True)


def listing(layout: IpcLayout, *, limit: int = 100) -> tuple[list[Quarantined], int]:
    """The newest ``limit`` quarantined files, and how many there are."""
    names = _names(layout)
    shown: list[Quarantined] = []
    for name in names[:limit]:
        reason = _read_reason(layout.errors_dir / (name + REASON_SUFFIX))
        if reason is not None:
            shown.append(_entry(layout, name, reason))
    return shown, len(names)


def content(layout: IpcLayout, name: str) -> str | None:
    """The first `SHOWN_MAX_BYTES` of the quarantined file ``name`` as text (undecodable bytes
    replaced; the caller makes it inert), or None when there is no such regular file: the name is
    matched against the folder's entries, and a link is never opened."""
    if name not in _names(layout):
        return None
    try:
        fd = os.open(layout.errors_dir / name, _READ_FLAGS | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, SHOWN_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = data[:SHOWN_MAX_BYTES].decode("utf-8", "replace")
    if len(data) > SHOWN_MAX_BYTES:
        text += f"\n… (cut: only the first {SHOWN_MAX_BYTES // 1024} KiB are shown)"
    return text


def replay(layout: IpcLayout, name: str, operator: str) -> Replayed:
    """Move the quarantined file ``name`` back where it was found, for the host to ingest again.

    Refusals (never raised): ``unknown_name`` (no such quarantined file: the name is matched
    against the folder's entries), ``not_replayable`` (`Quarantined.why_not`), ``target_exists``
    (a file is at its place again), ``lane_gone`` (its folder is gone), ``io_error``.
    """
    if name not in _names(layout):
        return Replayed(False, "unknown_name",
                        "There is no quarantined file of that name (jarvis quarantine lists "
                        "them).")  # fmt: skip
    reason_path = layout.errors_dir / (name + REASON_SUFFIX)
    reason = _read_reason(reason_path)
    if reason is None:
        return Replayed(False, "not_replayable", f"The reason file of {name} cannot be read.")
    why = _why_not(layout, name, reason)
    if why is not None:
        return Replayed(False, "not_replayable", f"{name} cannot be replayed: {why.rstrip('.')}.")
    stored = layout.errors_dir / name
    target = Path(_text(reason.get("original_path")))
    # Claimed first, by a rename only one replay can make: two operators replaying one file at
    # once, with the host ingesting it between them, would otherwise put it back twice.
    claim = layout.errors_dir / f".replaying-{name}"
    try:
        os.rename(stored, claim)
    except OSError:
        return Replayed(False, "not_replayable", f"{name} is being replayed, or is gone.")
    try:
        # A link makes the file appear whole, and never over one that is there (EEXIST).
        os.link(claim, target, follow_symlinks=False)
    except OSError as exc:
        os.rename(claim, stored)
        return _not_linked(name, target, exc)
    now = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    try:
        atomic_write_json(reason_path, {**reason, "replayed_at": now, "replayed_by": operator,
                                        "replayed_to": str(target)})  # fmt: skip
    except OSError as exc:
        _unlink_quietly(target)  # unrecorded, it is not replayed: the quarantine stays as it was
        os.rename(claim, stored)
        return Replayed(False, "io_error", f"Cannot record the replay: {exc.strerror or exc}.")
    _unlink_quietly(claim)
    return Replayed(True, "replayed",
                    f"{name} is back at {target}; the host ingests it again (refused again, it "
                    "is quarantined again with its reason).", str(target))  # fmt: skip


def _not_linked(name: str, target: Path, exc: OSError) -> Replayed:
    if isinstance(exc, FileExistsError):
        return Replayed(False, "target_exists", f"A file is at {target} again; nothing moved.")
    if isinstance(exc, FileNotFoundError):
        return Replayed(False, "lane_gone", f"The folder of {target} is gone; nothing moved.")
    what = "another file system" if exc.errno == errno.EXDEV else exc.strerror or str(exc)
    return Replayed(False, "io_error", f"{name} cannot be put back: {what}.")


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
