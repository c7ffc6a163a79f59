"""Ingesting IPC files exactly once.

For every file: classify it by where it is, read it within the size cap, parse it, then in ONE
store transaction apply its effect and write its receipt; only after the commit is the file
deleted. A crash after the commit and before the delete leaves a file whose receipt exists: seen
again, it is recognised and only deleted. A crash before the commit leaves nothing behind but
the file, which is simply ingested again. A file that cannot be accepted is quarantined with its
reason (docs/ipc.md), never deleted, never retried.

One exception to "never retried": a file that is empty or not yet a whole JSON object may still
be being written, since NanoClaw's worker writes its progress and acks in place (no temp file).
Such a file is left where it is for `WRITE_GRACE_S` from its last change and read again on a
later report or sweep; still unfinished after that, it is quarantined like any other.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.authorization import dispatch_refusal
from core.contracts.errors import FieldError
from core.contracts.secrets_scan import mask_secrets, redact
from core.host.progress_batch import Latest, ProgressBatch
from core.host.refusals import record_reason, run_named_by, target_named_by
from core.intake import IntakeResult, PreparedDispatch, prepare_dispatch, submit_prepared
from core.ipc.chat import read_message
from core.ipc.files import OpenFolders, quarantine, read_event
from core.ipc.inplace import WRITE_GRACE_S, may_be_unfinished
from core.ipc.layout import Event, IpcLayout, Placed, Rejection
from core.ipc.payloads import (
    DispatchTask,
    SteerWorkerTask,
    parse_ack,
    parse_message,
    parse_progress,
    parse_task,
    read_usage,
)
from core.operator_actions import steer_in
from core.run_secrets import flag_secrets
from core.store.api import RunStore, RunTransaction

Outcome = Literal["ingested", "replayed", "quarantined", "ignored", "gone", "waiting"]
#: Where a dispatch goes when it names no target (a message's JSON body names none).
DEFAULT_TARGET = "jarvis-worker-1"
_Ahead = dict[tuple[str, str, str], IntakeResult | PreparedDispatch]


@dataclass(frozen=True, slots=True)
class Ingested:
    outcome: Outcome
    kind: str | None = None
    run_id: str | None = None
    detail: str = ""


class _Refuse(Exception):
    """Raised inside the transaction to roll it back and quarantine the file instead."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _errors_text(errors: list[FieldError]) -> str:
    return " ".join(e.message for e in errors[:5])


def _refusal_text(result: IntakeResult) -> str:
    """The refusal's sentence, then each field's problem: "invalid" alone tells a sender
    nothing; one that is the sentence itself (a duplicate's ``run_id``) is said once."""
    further = _errors_text(result.further_errors)
    return " ".join(part for part in (result.message, further) if part)


class Ingestor:
    """Turns IPC files into store rows. One per host thread (it owns a store connection)."""

    def __init__(
        self,
        store: RunStore,
        layout: IpcLayout,
        *,
        on_progress: Callable[[str], None] | None = None,
        universal_default: bool = False,
        write_grace_s: float = WRITE_GRACE_S,
        wall_clock: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.layout = layout
        self.write_grace_s = write_grace_s
        """How long an unfinished file is left for its writer (`WRITE_GRACE_S`)."""
        self._wall_clock = wall_clock
        """The time files' modification times are compared with."""
        self._clock = clock
        self._waiting: dict[Path, float] = {}
        """Unfinished files left for their writers: when each was first found unfinished."""
        self.universal_default = universal_default
        """The workspace's ``[criteria] universal``, for dispatches that arrive as files."""
        self._on_progress = on_progress
        """Called with a run id after its progress is committed (resets its no-output clock)."""
        self._unmovable: set[Path] = set()
        """Refused files that could not be moved aside: quarantined once, then left alone."""
        self._ahead: _Ahead = {}
        """This batch's dispatches, prepared before its transaction: (lane, target, payload)."""
        self._root_prefix = os.path.join(os.fspath(layout.root), "")
        self._batch: ProgressBatch | None = None
        """This batch's progress: run briefs read once, run rows touched once at its end."""

    def handle(self, path: Path) -> Ingested:
        return self.handle_many([path])[0]

    def handle_many(self, paths: list[Path]) -> list[Ingested]:
        """Ingest several files in one transaction (one commit instead of one per file).

        Each file's effect runs in its own savepoint, so a refused file rolls back alone. Files
        are deleted, and refused ones moved aside, only after the commit.
        """
        results: list[Ingested | None] = [None] * len(paths)
        todo: list[tuple[int, Path, Event, bytes, str]] = []
        # Each folder is looked at, and walked down to, once for the whole batch.
        real: set[str] = set()
        placed: Placed = {}
        taken: set[str] = set()
        with OpenFolders() as folders:
            for index, path in enumerate(paths):
                named = os.fspath(path)  # a string's hash is kept; a path's is made per call
                if named in taken:
                    # Named twice (a new folder's listing and the file's own report): one file,
                    # applied or moved aside once.
                    results[index] = Ingested("gone")
                    continue
                taken.add(named)
                early = self._prepare(path, real, placed, folders)
                if isinstance(early, Ingested):
                    results[index] = early
                else:
                    event, data = early
                    todo.append((index, path, event, data, self._receipt_key(event, data)))
        refused: list[tuple[int, Path, Event, bytes, _Refuse]] = []
        done: list[tuple[int, Path, Event, bool]] = []
        if todo:
            self._ahead = self._prepare_dispatches(todo)
            with self.store.transaction() as tx:
                self._batch = ProgressBatch(tx, (
                    (key, event.run_id, event.path.name)
                    for _, _, event, _, key in todo
                    if event.kind == "progress" and event.run_id is not None
                ))  # fmt: skip
                for index, path, event, data, key in todo:
                    try:
                        replayed = self._apply_one(tx, event, data, key)
                    except _Refuse as refused_file:
                        refused.append((index, path, event, data, refused_file))
                    else:
                        done.append((index, path, event, replayed))
                self._batch.finish()
            self._ahead = {}
            self._batch = None
        # Only now that the effects and their receipts are committed do the files go.
        for index, path, event, replayed in done:
            _unlink(path)
            if event.kind == "ack" and event.run_id:
                _unlink(self.layout.steer_file(event.lane, event.run_id))
            if event.kind == "progress" and event.run_id and self._on_progress:
                self._on_progress(event.run_id)
            outcome: Outcome = "replayed" if replayed else "ingested"
            results[index] = Ingested(outcome, event.kind, event.run_id)
        for index, path, event, data, why in refused:
            if not os.path.lexists(path):
                # Taken meanwhile by whoever else reported it (its reason, if any, is written
                # once, by that one): a second reason would count one file twice.
                results[index] = Ingested("gone")
                continue
            message = why.message
            if may_be_unfinished(why.code, data):
                waiting = self._wait_for_writer(path, event)
                if waiting is not None:
                    results[index] = waiting
                    continue
                message += (
                    f" It stayed so past the {self.write_grace_s:g} s a file written in place "
                    "is given to be finished."
                )
            results[index] = self._quarantine(
                path, event.lane, why.code, message, run_id=event.run_id, data=data
            )
        final = [r if r is not None else Ingested("gone") for r in results]
        if self._waiting:
            for path, result in zip(paths, final, strict=True):
                if result.outcome != "waiting":
                    self._waiting.pop(path, None)
        return final

    def _wait_for_writer(self, path: Path, event: Event) -> Ingested | None:
        """A ``waiting`` outcome while an unfinished file is within its grace, else None.

        The grace runs from the file's last change, and never past the grace after the host
        first found it unfinished: a writer that keeps touching a broken file cannot keep it
        waiting forever. Its ``detail`` is set the first time only (for one log line).
        """
        try:
            changed = os.lstat(path).st_mtime
        except OSError:
            return None  # gone meanwhile: the quarantine says so
        now = self._clock()
        first = self._waiting.get(path)
        found_now = first is None
        if first is None:
            self._waiting[path] = first = now
        if now - first >= self.write_grace_s or self._wall_clock() - changed >= self.write_grace_s:
            return None
        detail = "unfinished: left for its writer and read again" if found_now else ""
        return Ingested("waiting", event.kind, event.run_id, detail=detail)

    def forget_gone(self) -> None:
        """Stop tracking unfinished files that are no longer there (their writer removed them)."""
        for path in [p for p in self._waiting if not os.path.lexists(p)]:
            del self._waiting[path]

    def _prepare(
        self, path: Path, real: set[str], placed: Placed, folders: OpenFolders
    ) -> Ingested | tuple[Event, bytes]:
        """Classify and read one file; an `Ingested` when there is nothing to apply."""
        if self._unmovable and path in self._unmovable:
            return Ingested("ignored")
        found = self.layout.classify(path, real, placed)
        if found is None:
            return Ingested("ignored")
        if isinstance(found, Rejection):
            if not os.path.lexists(path):
                # The watcher and the sweep can both report one file; the first moved it aside.
                return Ingested("gone")
            return self._quarantine(path, found.lane, found.code, found.message)
        # With the root, every folder below it is opened without following links: a folder
        # swapped for a symlink after classify() looked at it cannot redirect the read.
        data = read_event(path, root=self.layout.root, folders=folders)
        if data is None:
            return Ingested("gone")
        if isinstance(data, Rejection):
            return self._quarantine(path, found.lane, data.code, data.message)
        return found, data

    def _prepare_dispatches(self, todo: list[tuple[int, Path, Event, bytes, str]]) -> _Ahead:
        """Validate the batch's dispatches and extract their criteria, before any transaction.

        Extraction reads a whole task; done inside the transaction it would hold the write lock
        (and every operator's action) for as long. A file that does not parse is left for the
        transaction to refuse, as before.
        """
        ahead: _Ahead = {}
        for _, _, event, data, _ in todo:
            found = _dispatch_in(event, data)
            if found is not None:
                payload, target = found
                ahead[_ahead_key(event.lane, target, payload)] = prepare_dispatch(
                    payload,
                    source_lane=event.lane,
                    target_lane=target,
                    universal_default=self.universal_default,
                )
        return ahead

    def _receipt_key(self, event: Event, data: bytes) -> str:
        # The path below the root, as `Path.relative_to` gives it, at a tenth of its cost.
        whole = os.fspath(event.path)
        if whole.startswith(self._root_prefix):
            relative = whole[len(self._root_prefix) :]
        else:
            relative = event.path.relative_to(self.layout.root).as_posix()
        return f"{relative}:{hashlib.sha256(data).hexdigest()}"

    def refuse(
        self, path: Path, *, lane: str | None, code: str, message: str, run_id: str | None = None
    ) -> Ingested:
        """Move aside something the host will not ingest (a linked folder, a file it failed on).

        Raises:
            QuarantineError: the errors folder cannot be written.
            StoreError: the refusal could not be recorded (`refusals.catch_up` does it later).
        """
        if path in self._unmovable:
            return Ingested("ignored")
        return self._quarantine(path, lane, code, message, run_id=run_id)

    def _quarantine(
        self,
        path: Path,
        lane: str | None,
        code: str,
        message: str,
        *,
        run_id: str | None = None,
        data: bytes | None = None,
    ) -> Ingested:
        named = run_id or run_named_by(self.layout, path, data)
        target = target_named_by(data)
        # The message may quote the file, and the target is the lane's text; both are kept and
        # shown, so no secret goes in with them.
        found = {"run_id": named, "target_jid": mask_secrets(target) if target else None}
        details = {key: value for key, value in found.items() if value}
        message = mask_secrets(message)
        reason = quarantine(path, self.layout.errors_dir, lane=lane, code=code, message=message,
                            details=details or None)  # fmt: skip
        if os.path.lexists(path):
            self._unmovable.add(path)  # its reason is written; do not write another every sweep
        record_reason(self.store, reason)
        return Ingested("quarantined", detail=f"{code}: {message} ({reason.name})")

    # -- effects ----------------------------------------------------------------------------------

    def _apply_one(self, tx: RunTransaction, event: Event, data: bytes, key: str) -> bool:
        """Apply one file with its receipt; True when its receipt was there (a replay)."""
        if event.kind == "progress":
            # Checked in full before anything is held for the batch's end: nothing to undo.
            if self._progress_batch().has_receipt(key):
                return True
            self._progress(tx, event, data, key)
            return False
        if event.kind == "ack":
            # Checked in full before its first write but the receipt, so a refusal takes back
            # the receipt alone, and no savepoint is needed.
            if not tx.take_receipt(key, event.lane, event.kind):
                return True
            try:
                self._apply(tx, event, data)
            except _Refuse:
                tx.drop_receipt(key)
                raise
            return False
        # Tasks and messages call into intake and steering: a savepoint guarantees that a
        # refusal raised after any write there rolls back this file's effects alone.
        with tx.savepoint():
            if not tx.take_receipt(key, event.lane, event.kind):
                return True
            self._apply(tx, event, data)
        return False

    def _apply(self, tx: RunTransaction, event: Event, data: bytes) -> None:
        if event.kind == "ack":
            self._ack(tx, event, data)
        elif event.kind == "task":
            self._task(tx, event, data)
        else:
            self._message(tx, event, data)

    def _progress_batch(self) -> ProgressBatch:
        assert self._batch is not None, "files are applied in a batch (handle_many)"
        return self._batch

    def _run_of_lane(self, lane: str, run_id: str) -> dict[str, Any]:
        run = self._progress_batch().brief(run_id)
        if run is None:
            raise _Refuse("unknown_run", f"There is no run {run_id}.")
        if run["lane"] != lane:
            raise _Refuse(
                "wrong_lane", f"Run {run_id} belongs to {run['lane']}, not to the folder {lane}."
            )
        return run

    def _progress(self, tx: RunTransaction, event: Event, data: bytes, key: str) -> None:
        assert event.run_id is not None
        parsed = parse_progress(data, lane=event.lane, run_id=event.run_id)
        if isinstance(parsed, list):
            code = parsed[0].code if parsed else "bad_progress"
            raise _Refuse(code, _errors_text(parsed))
        run = self._run_of_lane(event.lane, event.run_id)
        attempt = int(run["retry_count"]) + 1
        # Masked once, here, so the store, the journal and every reader hold the same text.
        summary, phase = redact(parsed.summary), redact(parsed.phase)
        tool = redact(parsed.tool_used) if parsed.tool_used is not None else None
        kinds = {*summary.kinds, *phase.kinds, *(tool.kinds if tool else ())}
        tool_used = tool.text if tool is not None else None
        # An event is (run, attempt, file name): NanoClaw's worker starts seq again at 0 for
        # each query of an attempt, so seq alone would take a later query's events for replays.
        name, at_utc = event.path.name, parsed.at_utc
        batch = self._progress_batch()
        if batch.stored(event.run_id, attempt, name):
            batch.receipt(key, event.lane)  # the same (run, attempt, file name): recorded
            return
        # Written with the batch's others when it ends, the run row once (`ProgressBatch`).
        latest = Latest(attempt, at_utc, parsed.seq, name, summary.text, parsed.timestamp)
        batch.record(key, event.lane, event.run_id, latest, phase=phase.text, tool_used=tool_used)
        if kinds:
            flag_secrets(tx, event.run_id, kinds, source="progress", actor=event.lane)
        if parsed.usage is not None:
            usage = read_usage(parsed.usage)
            if isinstance(usage, str):
                tx.record_unreadable_usage(event.run_id, attempt, parsed.seq, redact(usage).text)
            else:
                tx.record_usage(event.run_id, attempt, parsed.seq, usage, at_utc=at_utc, name=name)

    def _ack(self, tx: RunTransaction, event: Event, data: bytes) -> None:
        assert event.run_id is not None
        parsed = parse_ack(data)
        if isinstance(parsed, list):
            raise _Refuse(parsed[0].code if parsed else "bad_ack", _errors_text(parsed))
        self._run_of_lane(event.lane, event.run_id)
        status = tx.steer_status(parsed.steer_id, event.run_id)
        if status is None:
            raise _Refuse("unknown_steer", f"Run {event.run_id} has no steer {parsed.steer_id}.")
        if status == "acked":
            return
        tx.ack_steer(parsed.steer_id, parsed.acked_at)
        tx.touch_run(
            event.run_id,
            changes={},
            kind="steer",
            payload={"steer_id": parsed.steer_id, "status": "acked", "acked_at": parsed.acked_at},
            actor=event.lane,
        )

    def _task(self, tx: RunTransaction, event: Event, data: bytes) -> None:
        parsed = parse_task(data)
        if isinstance(parsed, list):
            raise _Refuse(parsed[0].code if parsed else "bad_task", _errors_text(parsed))
        if isinstance(parsed, SteerWorkerTask):
            run = tx.get_run(parsed.run_id)
            if run is None:
                raise _Refuse("unknown_run", f"There is no run {parsed.run_id}.")
            refusal = dispatch_refusal(event.lane, run["lane"])
            if refusal:
                raise _Refuse(
                    "not_authorized", f"{event.lane} may not steer {run['lane']}: {refusal}"
                )
            result = steer_in(tx, parsed.run_id, event.lane, parsed.message)
            if not result.ok:
                assert result.refusal is not None
                raise _Refuse(result.refusal.code, result.refusal.message)
        elif isinstance(parsed, DispatchTask):
            self._dispatch(tx, event.lane, parsed.payload, parsed.target)

    def _message(self, tx: RunTransaction, event: Event, data: bytes) -> None:
        parsed = parse_message(data)
        if isinstance(parsed, list):
            raise _Refuse(parsed[0].code if parsed else "bad_message", _errors_text(parsed))
        request = read_message(parsed.chatJid, parsed.text, event.lane)
        if request.refusal is not None:
            raise _Refuse(request.code, request.refusal)
        if request.payload is not None:
            self._dispatch(tx, event.lane, request.payload, request.target)
        # Anything else is an ordinary chat message: nothing for the host to do.

    def _dispatch(
        self, tx: RunTransaction, lane: str, payload: dict[str, Any], target: str | None
    ) -> None:
        target = target or DEFAULT_TARGET
        prepared = self._ahead.get(_ahead_key(lane, target, payload))
        if prepared is None:  # every dispatch is prepared ahead; this only keeps it safe
            prepared = prepare_dispatch(
                payload,
                source_lane=lane,
                target_lane=target,
                universal_default=self.universal_default,
            )
        result = (
            prepared
            if isinstance(prepared, IntakeResult)
            else submit_prepared(tx, prepared, actor=lane)
        )
        if not result.accepted:
            raise _Refuse(f"dispatch_{result.outcome}", _refusal_text(result))


def _dispatch_in(event: Event, data: bytes) -> tuple[dict[str, Any], str] | None:
    """The dispatch a task or message file carries and its target lane, if it parses as one."""
    if event.kind == "task":
        task = parse_task(data)
        if isinstance(task, DispatchTask):
            return task.payload, task.target
    elif event.kind == "message":
        message = parse_message(data)
        if not isinstance(message, list):
            request = read_message(message.chatJid, message.text, event.lane)
            if request.payload is not None:
                return request.payload, request.target or DEFAULT_TARGET
    return None


def _ahead_key(lane: str, target: str, payload: dict[str, Any]) -> tuple[str, str, str]:
    # Preparing is a function of these three alone; the payload is compared by the hash of its
    # canonical text (a batch may hold hundreds of 64 KiB dispatches).
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return lane, target, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
