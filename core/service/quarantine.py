"""The files the host quarantined: listed with their reasons, one read (inert text, bounded), and
replayed into the IPC tree for the host to read again.

The quarantine is ``data/ipc/errors/`` (`core.ipc.files.quarantine`): each refused file stored
under a name of its own, its reason beside it in ``<name>.reason.json``. A name given from
outside (the console, the command line) is only ever a plain name of that folder: never a path,
never a link followed. Replaying moves the stored file back to where it was found (inside the
IPC tree only, through no link) and renames its reason to ``<name>.replayed.json``, so it is
listed as replayed and never replayed twice. The host then reads it as any new file: one that
fails again is quarantined again, under a new name, and stays there until an operator replays
it — nothing replays by itself, so nothing loops.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.ipc.files import REASON_SUFFIX

__all__ = [
    "QuarantinedFile",
    "QuarantineRefusal",
    "Replayed",
    "quarantined_content",
    "quarantined_files_in",
    "replay_quarantined",
]

REPLAYED_SUFFIX = ".replayed.json"
#: The most files listed (the newest: names start with the time they were quarantined).
MAX_LISTED = 500
#: The most of a stored file shown.
MAX_SHOWN_BYTES = 64 * 1024
_MAX_REASON_BYTES = 256 * 1024


@dataclass(frozen=True)
class QuarantinedFile:
    name: str
    """Its name in the quarantine: what a replay names."""
    code: str
    message: str
    lane: str | None
    original_path: str
    quarantined_at: str
    outcome: str
    """``moved``, ``copied`` (the file is here), ``vanished`` or ``not_moved`` (it is not)."""
    replayed: bool
    """Already put back (its reason renamed ``.replayed.json``)."""
    stored: bool
    """The file is in the quarantine, a regular file: it can be shown and replayed."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "code": self.code, "message": self.message, "lane": self.lane,
            "original_path": self.original_path, "quarantined_at": self.quarantined_at,
            "outcome": self.outcome, "replayed": self.replayed, "stored": self.stored,
        }  # fmt: skip


@dataclass(frozen=True)
class QuarantineRefusal:
    code: str
    """``bad_name``, ``not_found``, ``not_stored``, ``already_replayed``, ``outside_tree``,
    ``occupied`` or ``io_error``."""
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Replayed:
    name: str
    to: str
    """Where the file is now, for the host to read."""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "replayed_to": self.to}


def _errors_dir(root: Path) -> Path:
    from core.ipc.layout import IpcLayout
    from core.workspace import Workspace

    return IpcLayout(Workspace(root).ipc_dir).errors_dir


def _name_problem(name: str) -> QuarantineRefusal | None:
    plain = (
        name
        and "/" not in name
        and "\x00" not in name
        and not name.startswith(".")
        and not name.endswith((REASON_SUFFIX, REPLAYED_SUFFIX))
        and len(name) <= 255
    )
    if plain:
        return None
    return QuarantineRefusal(
        "bad_name", f"{name[:80]!r} is not the name of a quarantined file (a plain file name)."
    )


def _reason(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _MAX_REASON_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_REASON_BYTES:
        return None
    try:
        found = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _entry(errors: Path, name: str, reason_file: Path, replayed: bool) -> QuarantinedFile:
    reason = _reason(reason_file) or {}
    lane = reason.get("lane")
    return QuarantinedFile(
        name,
        str(reason.get("code") or "unknown"),
        str(reason.get("message") or "(its reason file could not be read)"),
        lane if isinstance(lane, str) else None,
        str(reason.get("original_path") or ""),
        str(reason.get("quarantined_at") or ""),
        str(reason.get("outcome") or "unknown"),
        replayed,
        not replayed and _regular(errors / name),
    )


def quarantined_files_in(root: Path, *, limit: int = MAX_LISTED) -> list[QuarantinedFile]:
    """The workspace's quarantined files, newest first, at most ``limit`` (replayed ones too,
    marked)."""
    errors = _errors_dir(root)
    try:
        names = os.listdir(errors)
    except OSError:
        return []
    found: list[tuple[str, bool]] = []
    for entry in names:
        for suffix, replayed in ((REASON_SUFFIX, False), (REPLAYED_SUFFIX, True)):
            if entry.endswith(suffix) and not entry.startswith("."):
                found.append((entry[: -len(suffix)], replayed))
    found.sort(reverse=True)
    return [
        _entry(errors, name, errors / f"{name}{REPLAYED_SUFFIX if gone else REASON_SUFFIX}", gone)
        for name, gone in found[:limit]
    ]


def quarantined_content(root: Path, name: str) -> str | QuarantineRefusal:
    """The first `MAX_SHOWN_BYTES` of the stored file ``name``, as text (undecodable bytes
    replaced); the caller makes it inert. A link or anything but a regular file is not opened."""
    problem = _name_problem(name)
    if problem:
        return problem
    path = _errors_dir(root) / name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return QuarantineRefusal("not_found", f"There is no quarantined file {name}.")
    except OSError as exc:
        return QuarantineRefusal("not_stored", f"{name} is not a regular file "
                                 f"({exc.strerror or exc}); it is not opened.")  # fmt: skip
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return QuarantineRefusal("not_stored", f"{name} is not a regular file; not opened.")
        data = os.read(fd, MAX_SHOWN_BYTES + 1)
    finally:
        os.close(fd)
    text = data[:MAX_SHOWN_BYTES].decode("utf-8", "replace")
    return text + ("\n… (cut: only the first 64 KiB are shown)" if len(data) > MAX_SHOWN_BYTES
                   else "")  # fmt: skip


def _inside(ipc_root: Path, original: str) -> Path | QuarantineRefusal:
    """Where ``original`` puts the file back: a path under ``ipc_root``, outside the
    quarantine, through no link (missing folders made)."""
    outside = QuarantineRefusal("outside_tree", f"{original[:200]!r} is not a place in this "
                                "workspace's IPC tree; the file stays quarantined.")  # fmt: skip
    if not original or "\x00" in original or os.pardir in original.split(os.sep):
        return outside
    base = os.path.abspath(ipc_root)
    target = os.path.abspath(original)
    if not target.startswith(base + os.sep):
        return outside
    parts = target[len(base) + 1 :].split(os.sep)
    if len(parts) < 2 or parts[0] == "errors":
        return outside
    folder = Path(base)
    for part in parts[:-1]:
        folder = folder / part
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            try:
                folder.mkdir()
            except OSError as exc:
                return QuarantineRefusal("io_error", f"Cannot make {folder}: {exc.strerror}.")
            continue
        except OSError as exc:
            return QuarantineRefusal("io_error", f"Cannot look at {folder}: {exc.strerror}.")
        if not stat.S_ISDIR(mode):
            return outside  # a link or a file where a folder should be: not followed
    return Path(target)


def replay_quarantined(root: Path, name: str) -> Replayed | QuarantineRefusal:
    """Put the quarantined file ``name`` back where it was found, for the host to read again."""
    problem = _name_problem(name)
    if problem:
        return problem
    errors = _errors_dir(root)
    stored, reason_file = errors / name, errors / f"{name}{REASON_SUFFIX}"
    if os.path.lexists(errors / f"{name}{REPLAYED_SUFFIX}"):
        return QuarantineRefusal("already_replayed", f"{name} was replayed already.")
    reason = _reason(reason_file)
    if reason is None:
        return QuarantineRefusal("not_found", f"There is no quarantined file {name}.")
    if not _regular(stored):
        return QuarantineRefusal(
            "not_stored", f"{name} is not a regular file in the quarantine (it "
            f"{reason.get('outcome') or 'is gone'}); there is nothing to replay.",
        )  # fmt: skip
    target = _inside(errors.parent, str(reason.get("original_path") or ""))
    if isinstance(target, QuarantineRefusal):
        return target
    try:
        # The reason first: a replay that loses a race to another finds it gone and stops.
        os.rename(reason_file, errors / f"{name}{REPLAYED_SUFFIX}")
    except FileNotFoundError:
        return QuarantineRefusal("already_replayed", f"{name} was replayed already.")
    except OSError as exc:
        return QuarantineRefusal("io_error", f"Cannot mark {name} replayed: {exc.strerror}.")
    if os.path.lexists(target):
        os.rename(errors / f"{name}{REPLAYED_SUFFIX}", reason_file)
        return QuarantineRefusal("occupied", f"A file is already at {target}; {name} stays "
                                 "quarantined.")  # fmt: skip
    try:
        os.rename(stored, target)
    except OSError as exc:
        os.rename(errors / f"{name}{REPLAYED_SUFFIX}", reason_file)
        return QuarantineRefusal("io_error", f"Cannot move {name} back: {exc.strerror}.")
    return Replayed(name, str(target))
