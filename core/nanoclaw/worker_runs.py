"""``data/ipc/<lane>/worker_runs.json``: the runs a lane's agents may see, as NanoClaw writes it.

NanoClaw's coordinator reads this file (``/workspace/ipc/worker_runs.json`` in its container)
before it answers about runs and to confirm that a dispatch was taken; its host rewrites it for
every lane on changes and every 15 s. Jarvis's host writes the same file from its store:

- **Scope**: ``main`` sees every run (``"all"``); the coordinator lane ``andy-developer`` sees the
  runs of the ``jarvis-worker-*`` lanes (``"jarvis"``); every other lane its own (``"group"``).
- **Shape**: ``generated_at``, ``scope``, ``active`` (queued, running or review_requested) and
  ``recent`` (any state), each the 25 newest by ``started_at``, and ``dispatch_blocks``; the rows
  have NanoClaw's 26 fields in NanoClaw's order (`ROW_FIELDS`), from Jarvis's run as far as
  Jarvis has the data and ``null`` where it has not (`row_of` says which is which).
- **Statuses**: Jarvis's states are NanoClaw's statuses, one for one; NanoClaw's
  ``failed_timeout`` is never written (a run Jarvis failed for time is ``failed``, and may be
  retried like any other).
- **Writing**: pretty JSON (two spaces, no trailing newline) to ``worker_runs.json.tmp``, then
  renamed over ``worker_runs.json``, never following a link in the lane folder.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from core.ipc.chat import lane_of_jid
from core.ipc.layout import ERRORS, MESSAGES, TASKS, IpcLayout
from core.lifecycle import RunState, stage_of
from core.store.api import Row, RunStore
from core.workspace import lane_problem

log = logging.getLogger("jarvis.host")

FILE = "worker_runs.json"
TEMP = FILE + ".tmp"
#: Rows in ``active`` and in ``recent``, and entries in ``dispatch_blocks``.
LIMIT = 25
#: The snapshot is rewritten this often even when nothing changed (NanoClaw: 15 s).
REFRESH_S = 15.0
#: How often the store is asked whether anything changed; at most one write per lane per this.
CHECK_S = 1.0
MAIN = "main"
COORDINATOR = "andy-developer"
WORKER_LANES = "jarvis-worker-%"
#: A dispatch block's ``target_jid`` when the refused file named no chat.
UNKNOWN_TARGET = "unknown"

ROW_FIELDS = (
    "run_id", "group_folder", "status", "phase", "started_at", "completed_at", "retry_count",
    "result_summary", "error_details", "dispatch_repo", "dispatch_branch", "context_intent",
    "parent_run_id", "dispatch_session_id", "selected_session_id", "effective_session_id",
    "session_selection_source", "session_resume_status", "session_resume_error",
    "last_heartbeat_at", "active_container_name", "no_container_since",
    "expects_followup_container", "supervisor_owner", "lease_expires_at", "recovered_from_reason",
)  # fmt: skip
"""A row's keys, in NanoClaw's order."""

ACTIVE = (RunState.QUEUED.value, RunState.RUNNING.value, RunState.REVIEW_REQUESTED.value)
#: Jarvis state → NanoClaw status (the same words; ``failed_timeout`` has no Jarvis state).
STATUS = {state.value: state.value for state in RunState}
_FAILED = (RunState.FAILED, RunState.FAILED_CONTRACT)
_COPIED = (
    "dispatch_repo", "dispatch_branch", "context_intent", "parent_run_id", "dispatch_session_id",
    "selected_session_id", "effective_session_id", "session_selection_source",
    "session_resume_status", "session_resume_error",
)  # fmt: skip


def scope_of(lane: str) -> tuple[str, str | None, str | None]:
    """The lane's scope, and the runs it sees: ``(scope, lane pattern, exact lane)``."""
    if lane == MAIN:
        return "all", None, None
    if lane == COORDINATOR:
        return "jarvis", WORKER_LANES, None
    return "group", None, lane


def phase_of(run: Mapping[str, Any]) -> str:
    """NanoClaw's ``phase`` for a Jarvis run.

    queued → ``queued``; running → ``spawning`` until its worker has a pid (its worktree is
    being made), ``active`` while the worker works, ``completion_validating`` while Jarvis
    verifies its acceptance criteria; any other state → ``terminal``.
    """
    state = run["state"]
    if state == RunState.QUEUED:
        return "queued"
    if state != RunState.RUNNING:
        return "terminal"
    if stage_of(run) is not RunState.RUNNING:
        return "completion_validating"  # a stage of verification
    return "active" if run.get("worker_pid") else "spawning"


def row_of(run: Mapping[str, Any], *, owner: str) -> dict[str, Any]:
    """A run as a NanoClaw ``worker_runs`` row.

    - ``started_at``: when its worker started, else when it was dispatched (NanoClaw: queued).
    - ``completed_at``: when its last attempt ended, once it is past running.
    - ``result_summary``: Jarvis's reason for its state; ``error_details`` the same as NanoClaw's
      JSON text ``{"reason": …}`` for a failed run.
    - ``last_heartbeat_at``: its worker's last progress event.
    - ``supervisor_owner``: ``jarvis-<host pid>`` while it runs.
    - ``active_container_name``, ``no_container_since``, ``lease_expires_at``,
      ``recovered_from_reason``: null (Jarvis names no container, holds no lease, and fails a
      run a restart interrupted instead of recovering it); ``expects_followup_container``: 0.
    """
    state = str(run["state"])
    reason = run.get("state_reason")
    doc: dict[str, Any] = {
        "run_id": run["run_id"],
        "group_folder": run["lane"],
        "status": STATUS.get(state, state),
        "phase": phase_of(run),
        "started_at": run.get("started_at") or run.get("created_at"),
        "completed_at": None
        if state in (RunState.QUEUED, RunState.RUNNING)
        else run.get("finished_at"),
        "retry_count": int(run.get("retry_count") or 0),
        "result_summary": reason,
        "error_details": (
            json.dumps({"reason": reason}, ensure_ascii=False, separators=(",", ":"))
            if state in _FAILED and reason
            else None
        ),
    }
    for name in _COPIED:
        doc[name] = run.get(name)
    running = state == RunState.RUNNING
    doc.update(
        last_heartbeat_at=run.get("last_progress_at"),
        active_container_name=None,
        no_container_since=None,
        expects_followup_container=0,
        supervisor_owner=owner if running else None,
        lease_expires_at=None,
        recovered_from_reason=None,
    )
    return {name: doc[name] for name in ROW_FIELDS}


def _runs(store: RunStore, lane: str, *, active: bool) -> list[Row]:
    _, pattern, exact = scope_of(lane)
    return store.runs_in_scope(
        lane_like=pattern, lane=exact, states=ACTIVE if active else (), limit=LIMIT
    )


def dispatch_blocks(store: RunStore, lane: str) -> list[dict[str, Any]]:
    """The lane's refused requests, newest first: files Jarvis quarantined from a lane's
    ``messages/`` or ``tasks/`` (where a dispatch arrives). ``main`` sees every lane's, the
    coordinator and every other lane its own.

    Each has NanoClaw's keys in its order (``DispatchBlockSnapshotEntry``): ``target_jid``,
    which NanoClaw requires, is the chat the file addressed, ``unknown`` when it named none
    (an unreadable file, a steer of no run); ``target_folder`` the lane that chat id names,
    when it names one; ``run_id`` when the file named a run."""
    found = store.lane_refusals(None if lane == MAIN else lane, LIMIT * 8)
    blocks: list[dict[str, Any]] = []
    for row in found:
        parts = Path(str(row["original_path"])).parts
        if not row["lane"] or len(parts) < 3 or parts[-2] not in (MESSAGES, TASKS):
            continue
        target = row["target_jid"] or UNKNOWN_TARGET
        block = {
            "timestamp": row["quarantined_at"],
            "source_group": row["lane"],
            "target_jid": target,
        }
        folder = lane_of_jid(target)
        if folder is not None:
            block["target_folder"] = folder
        block.update(reason_code=row["code"], reason_text=row["message"])
        if row["named_run"]:
            block["run_id"] = row["named_run"]
        blocks.append(block)
        if len(blocks) >= LIMIT:
            break
    return blocks


def build(store: RunStore, lane: str, *, owner: str) -> dict[str, Any]:
    """The lane's snapshot, from the store as it is now."""
    return {
        "generated_at": store.now(),
        "scope": scope_of(lane)[0],
        "active": [row_of(r, owner=owner) for r in _runs(store, lane, active=True)],
        "recent": [row_of(r, owner=owner) for r in _runs(store, lane, active=False)],
        "dispatch_blocks": dispatch_blocks(store, lane),
    }


def render(snapshot: Mapping[str, Any]) -> bytes:
    """``JSON.stringify(snapshot, null, 2)``: two-space indent, no trailing newline."""
    try:
        return json.dumps(snapshot, indent=2, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the same text, escaped
        return json.dumps(snapshot, indent=2).encode("ascii")


def write(lane_dir: Path, data: bytes) -> None:
    """``worker_runs.json.tmp`` then a rename, as NanoClaw's ``writeJsonAtomic`` does.

    The lane folder is also the runner's to write: the folder is opened without following a
    link, and a temp file already there (a leftover, or a link) is removed first and then
    created anew, never written through.

    Raises:
        OSError: the file cannot be written (the lane folder is a link, the disk is full…).
    """
    folder = os.open(lane_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            os.unlink(TEMP, dir_fd=folder)
        except FileNotFoundError:
            pass
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(TEMP, flags, 0o644, dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.rename(TEMP, FILE, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        os.close(folder)


class WorkerRunsWriter:
    """Keeps every lane's ``worker_runs.json`` current: `refresh` is called on each host tick.

    The store is asked at most once per `CHECK_S` whether a run (or a refusal) changed; a
    change rewrites every lane's file, and so does `REFRESH_S` without one.
    """

    def __init__(self, layout: IpcLayout, *, owner: str) -> None:
        self.layout = layout
        self.owner = owner
        self._checked = float("-inf")
        self._written = float("-inf")
        self._signature: tuple[Any, ...] | None = None
        self._said: dict[str, str] = {}

    def refresh(
        self, store: RunStore, lanes: Iterable[str] = (), *, now: float | None = None
    ) -> int:
        """Rewrite the snapshots when due; returns how many were written."""
        now = time.monotonic() if now is None else now
        if now - self._checked < CHECK_S:
            return 0
        self._checked = now
        signature = store.change_signature()
        if signature == self._signature and now - self._written < REFRESH_S:
            return 0
        self._signature = signature
        self._written = now
        return self.write_all(store, lanes)

    def lanes(self, store: RunStore, extra: Iterable[str] = ()) -> list[str]:
        """Every lane with a folder in the tree, a run in the store, or a configuration."""
        found = store.lanes_with_runs()
        found.update(extra)
        try:
            with os.scandir(self.layout.root) as entries:
                found.update(e.name for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:
            pass
        return sorted(lane for lane in found if lane != ERRORS and lane_problem(lane) is None)

    def write_all(self, store: RunStore, extra: Iterable[str] = ()) -> int:
        written = 0
        for lane in self.lanes(store, extra):
            data = render(build(store, lane, owner=self.owner))
            lane_dir = self.layout.lane_dir(lane)
            try:
                if not lane_dir.is_symlink():
                    lane_dir.mkdir(exist_ok=True)
                write(lane_dir, data)
            except OSError as exc:
                said = f"{type(exc).__name__}: {exc.strerror or exc}"
                if self._said.get(lane) != said:
                    log.warning("%s/%s could not be written: %s", lane, FILE, said)
                    self._said[lane] = said
                continue
            self._said.pop(lane, None)
            written += 1
        return written
