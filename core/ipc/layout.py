"""Where every IPC file lives, and what a file found in the tree claims to be.

The tree is ``<workspace>/data/ipc``. Lane folders and run ids become path parts, so every name
the layout is given is validated (`lane_problem`, `run_id_problem`) and a bad one raises
`IpcPathError`: no name can lead out of the tree.

`IpcLayout.classify` is the other direction. A watcher reports a path; classify decides, from the
path alone (plus an ``lstat`` of the folders on the way, never following a link), whether it is
an event the host should read (`Event`), something the host should refuse and quarantine
(`Rejection`), or a file that is none of its business (``None``: temp files, the host's own steer
files and snapshots, a lane's ``input/``, anything under ``errors/``). The lane in an `Event`
comes from the folder the file was found in; that folder is the writer's identity (docs/ipc.md).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.contracts.errors import preview
from core.contracts.names import run_id_problem
from core.workspace import lane_problem

EventKind = Literal["progress", "ack", "task", "message"]

PROGRESS = "progress"
STEER = "steer"
TASKS = "tasks"
MESSAGES = "messages"
ERRORS = "errors"
#: Host → runner follow-ups and the ``_close`` sentinel (NanoClaw's channel into a container):
#: the runner's to read and delete, never the host's to ingest.
INPUT = "input"
#: Files the host writes at the top of a lane folder for the lane's agents to read.
HOST_SNAPSHOTS = frozenset({"worker_runs.json"})
#: NanoClaw's host writes these beside it for its agents; Jarvis does not, but a deployment moved
#: under Jarvis still has them, and they are the agents' to read, not anything to refuse.
NANOCLAW_SNAPSHOTS = frozenset(
    {"available_groups.json", "current_tasks.json", "control_plane_status.json"}
)
#: The folders `IpcLayout.ensure_lane` creates in every lane.
LANE_FOLDERS = (PROGRESS, STEER, TASKS, MESSAGES)

ACK_SUFFIX = ".acked.json"
JSON_SUFFIX = ".json"

# Control characters (C0, DEL, C1, the Unicode line separators) and lone surrogates, which is how
# Python spells a file name that is not valid UTF-8. None belongs in a name the host acts on.
_BAD_NAME_CHAR = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


Placed = dict[str, tuple[str, str]]
"""Run folders a batch placed (`IpcLayout.classify`): the folder's path → (lane, run id)."""


class IpcPathError(ValueError):
    """A lane or run id that cannot name a place in the IPC tree; ``str()`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        """Stable snake_case code: ``bad_lane``, ``bad_run_id`` or ``outside_tree``."""


@dataclass(frozen=True, slots=True)
class Event:
    """A file the host should read: its kind, and the lane (and run) its path puts it in."""

    kind: EventKind
    lane: str
    run_id: str | None
    """The run the path names (progress and acknowledgements); None for tasks and messages."""
    path: Path


@dataclass(frozen=True, slots=True)
class Rejection:
    """A file the host refuses; it should be quarantined with this code and message."""

    code: str
    message: str
    lane: str | None
    """The lane folder the file was found in, when that folder is a valid lane."""


def _lane_problem(lane: str) -> str | None:
    if lane == ERRORS:
        # ``errors/`` sits beside the lanes and is the host's; a lane of that name would have its
        # events ignored and its folder shared with quarantined files.
        return f"lane {lane!r} is reserved: data/ipc/errors holds the host's quarantined files."
    return lane_problem(lane)


def _check_lane(lane: str) -> None:
    problem = _lane_problem(lane)
    if problem:
        raise IpcPathError("bad_lane", problem)


def _check_run_id(run_id: str) -> None:
    problem = run_id_problem(run_id)
    if problem:
        raise IpcPathError("bad_run_id", f"run id {preview(run_id)}: {problem[1]}")


class IpcLayout:
    """The IPC tree rooted at ``root`` (``<workspace>/data/ipc``).

    Every method that takes a lane or run id validates it first and raises `IpcPathError` (a
    ``ValueError``) for one that could name a path outside its folder.
    """

    def __init__(self, root: Path) -> None:
        self._root = Path(os.path.abspath(root))
        # A watcher may report paths under the root's real location (a workspace reached through
        # a symlinked home, say); both spellings are accepted, nothing else is.
        self._prefixes = tuple(
            dict.fromkeys([_prefix(str(self._root)), _prefix(os.path.realpath(self._root))])
        )

    @property
    def root(self) -> Path:
        """The tree's root, absolute."""
        return self._root

    @property
    def errors_dir(self) -> Path:
        """Where refused files are quarantined (`core.ipc.files.quarantine`)."""
        return self._root / ERRORS

    def lane_dir(self, lane: str) -> Path:
        """The lane's folder, ``<root>/<lane>``."""
        _check_lane(lane)
        return self._root / lane

    def progress_dir(self, lane: str, run_id: str) -> Path:
        """Where the run's worker writes progress events."""
        _check_run_id(run_id)
        return self.lane_dir(lane) / PROGRESS / run_id

    def steer_file(self, lane: str, run_id: str) -> Path:
        """The host's pending steer for the run (host → worker)."""
        _check_run_id(run_id)
        return self.lane_dir(lane) / STEER / f"{run_id}{JSON_SUFFIX}"

    def ack_file(self, lane: str, run_id: str) -> Path:
        """The worker's acknowledgement of the run's steer (worker → host)."""
        _check_run_id(run_id)
        return self.lane_dir(lane) / STEER / f"{run_id}{ACK_SUFFIX}"

    def tasks_dir(self, lane: str) -> Path:
        """Where the lane drops tasks for the host."""
        return self.lane_dir(lane) / TASKS

    def messages_dir(self, lane: str) -> Path:
        """Where the lane drops messages for the host."""
        return self.lane_dir(lane) / MESSAGES

    def ensure_lane(self, lane: str) -> Path:
        """Create the lane's folders (progress, steer, tasks, messages) and return the lane's.

        Raises:
            IpcPathError: the lane name is invalid, or one of its folders is a symbolic link
                (the host would otherwise create and later delete files wherever it points).
            OSError: the folders cannot be created.
        """
        lane_dir = self.lane_dir(lane)
        # Each folder is looked at before anything is created in it: a mkdir through a linked
        # lane folder would already have written outside the tree.
        for made in (lane_dir, *(lane_dir / name for name in LANE_FOLDERS)):
            if made.is_symlink():
                raise IpcPathError(
                    "outside_tree", f"{made} is a symbolic link; lane folders must be real."
                )
            made.mkdir(parents=True, exist_ok=True)
            if made.is_symlink():  # swapped for a link meanwhile
                raise IpcPathError(
                    "outside_tree", f"{made} is a symbolic link; lane folders must be real."
                )
        return lane_dir

    def classify(
        self, path: Path, real: set[str] | None = None, placed: Placed | None = None
    ) -> Event | Rejection | None:
        """What a file found under the tree is, judged from its path; never raises.

        Relative paths are taken relative to the current directory, as the OS would. The file
        itself is not examined (`core.ipc.files.read_event` does that without following links);
        the folders between the lane and the file are ``lstat``-ed so that a lane, kind or run
        folder that is a symbolic link is refused. ``real``, when given, holds folders already
        found real (and takes those found now): a batch of files looks at each folder once. The
        read does not rely on it: it opens each folder without following links. ``placed``,
        when given with ``real``, holds the run folders whose progress files were placed (and
        takes those placed now): the next file in one is judged by its name alone.

        Returns:
            ``None`` for files that are not events: names starting with ``.`` or not ending in
            ``.json`` (temp files), the host's own ``steer/<run_id>.json`` and
            ``worker_runs.json``, anything under a lane's ``input/`` and under ``errors/``. An
            `Event` for a well-placed event file. A `Rejection` for anything else that claims
            to be one.
        """
        try:
            raw = os.fspath(path)
            if placed is not None:
                # A batch's files are mostly progress in a few run folders: a folder placed
                # (and found real) once in the batch needs no second look for its next file.
                folder, _, name = raw.rpartition(os.sep)
                known = placed.get(folder)
                if known is not None and _plain_event_name(name):
                    return Event("progress", known[0], known[1], path)
            found = self._classify(raw, real, path)
            if placed is not None and real is not None and isinstance(found, Event):
                if found.kind == "progress" and os.fspath(found.path) == raw:
                    assert found.run_id is not None
                    placed[os.path.dirname(raw)] = (found.lane, found.run_id)
            return found
        except (OSError, ValueError) as exc:  # e.g. the current directory is gone
            return Rejection("outside_tree", f"The path cannot be placed in the tree: {exc}.", None)

    def _classify(
        self, raw: str, real: set[str] | None = None, given: Path | None = None
    ) -> Event | Rejection | None:
        if "\x00" in raw:
            return Rejection("bad_name", "The path contains a NUL character.", None)
        if not os.path.isabs(raw):
            raw = os.path.join(os.getcwd(), raw)
        # '..' is refused outright rather than normalised away: a path that climbs anywhere is
        # not one a well-behaved writer produces, and refusing it needs no reasoning about links.
        if os.pardir in raw.split(os.sep):
            return Rejection("outside_tree", "The path contains a '..' part.", None)
        normal = os.path.normpath(raw)
        parts = _relative_parts(normal, self._prefixes)
        if parts is None:
            return Rejection("outside_tree", "The path is not inside the IPC tree.", None)
        if not parts:
            return None  # the root itself
        name = parts[-1]
        if name.startswith(".") or not name.endswith(JSON_SUFFIX):
            return None  # a temp file or not an event, by the naming rule every writer follows
        if parts[0] == ERRORS:
            return None  # the host's quarantine
        bad = next((p for p in parts if _BAD_NAME_CHAR.search(p)), None)
        if bad is not None:
            return Rejection(
                "bad_name",
                f"The name {preview(bad)} contains a control character or is not UTF-8.",
                None,
            )
        if len(parts) < 2:
            return Rejection(
                "unexpected_path", f"{preview(name)} is not inside a lane folder.", None
            )
        lane = parts[0]
        problem = _lane_problem(lane)
        if problem:
            return Rejection(
                "bad_lane", f"The folder {preview(lane)} is not a lane: {problem}", None
            )
        found = _place(parts)
        if isinstance(found, Rejection) or found is None:
            return found
        kind, run_id = found
        linked = _first_symlink(normal, len(parts) - 1, real)
        if linked is not None:
            return Rejection(
                "outside_tree",
                f"The folder {preview(linked)} is a symbolic link; files are only read from real "
                "folders in the lane.",
                lane,
            )
        # The caller's own path when it was already normal: one object less per file.
        same = isinstance(given, Path) and os.fspath(given) == normal
        return Event(kind, lane, run_id, given if same and given is not None else Path(normal))


def _plain_event_name(name: str) -> bool:
    """Whether a file name alone makes a file in a placed run folder an event (`classify`)."""
    return (
        name.endswith(JSON_SUFFIX)
        and not name.startswith(".")
        and _BAD_NAME_CHAR.search(name) is None
    )


def _prefix(root: str) -> str:
    normal = os.path.normpath(root)
    return normal if normal.endswith(os.sep) else normal + os.sep


def _relative_parts(normal: str, prefixes: tuple[str, ...]) -> list[str] | None:
    for prefix in prefixes:
        if normal + os.sep == prefix:
            return []
        if normal.startswith(prefix):
            return normal[len(prefix) :].split(os.sep)
    return None


_Placed = tuple[EventKind, str | None]


def _place(parts: list[str]) -> _Placed | Rejection | None:
    """The event kind and run id the parts (lane first) describe."""
    lane, folder, rest = parts[0], parts[1] if len(parts) > 2 else None, parts[2:]
    name = parts[-1]
    if folder == INPUT or (len(parts) == 2 and name in HOST_SNAPSHOTS | NANOCLAW_SNAPSHOTS):
        return None  # the lane's to read: follow-ups for its runner, the hosts' snapshots
    if folder == PROGRESS and len(rest) == 2:
        run_id = rest[0]
        problem = run_id_problem(run_id)
        if problem:
            return Rejection("bad_run_id", f"run id {preview(run_id)}: {problem[1]}", lane)
        return "progress", run_id
    if folder == STEER and len(rest) == 1:
        if name.endswith(ACK_SUFFIX):
            run_id = name[: -len(ACK_SUFFIX)]
            problem = run_id_problem(run_id)
            if problem:
                return Rejection("bad_run_id", f"run id {preview(run_id)}: {problem[1]}", lane)
            return "ack", run_id
        if run_id_problem(name[: -len(JSON_SUFFIX)]) is None:
            return None  # the host's own steer file, waiting for the worker
        return Rejection(
            "unexpected_path",
            f"{preview(name)} in steer/ is neither a steer file nor an acknowledgement.",
            lane,
        )
    if folder == TASKS and len(rest) == 1:
        return "task", None
    if folder == MESSAGES and len(rest) == 1:
        return "message", None
    where = "/".join(parts[1:])
    return Rejection(
        "unexpected_path",
        f"{preview(where)} is not where the lane may write events "
        "(progress/<run_id>/, steer/<run_id>.acked.json, tasks/ or messages/).",
        lane,
    )


def _first_symlink(normal: str, folders: int, real: set[str] | None = None) -> str | None:
    """The name of the first of the file's ``folders`` parent folders (from the top) that is a link.

    A folder that does not exist is not a link: the file is gone too, and reading it says so.
    Folders in ``real`` are taken as found; real ones found now are added to it.
    """
    if real is not None and os.path.dirname(normal) in real:
        return None  # its folder was found real, and every folder above it before that
    parents: list[str] = []
    folder = normal
    for _ in range(folders):
        folder = os.path.dirname(folder)
        parents.append(folder)
    for candidate in reversed(parents):
        if real is not None and candidate in real:
            continue
        try:
            if stat.S_ISLNK(os.lstat(candidate).st_mode):
                return os.path.basename(candidate)
        except OSError:
            continue
        if real is not None:
            real.add(candidate)
    return None
