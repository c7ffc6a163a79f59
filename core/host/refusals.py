"""Refused IPC files as operators see them: a store row per quarantine, on its run when it can be.

The reason file beside each refused file in ``data/ipc/errors/`` stays the record of what was
moved where (docs/ipc.md). This module copies it into the store, where `jarvis show`, `jarvis
errors`, `jarvis runs` and the console read it. A refusal is tied to a run when that run exists
and the file named it: by its path (``progress/<run_id>/``, ``steer/<run_id>.acked.json``) or,
read defensively, by its content (``run_id``, a dispatch task's ``payload.run_id``, a message
whose ``text`` is a dispatch). The name is kept as ``named_run`` either way. The chat the file
addressed is kept too (``target_jid``: a message's ``chatJid``, a dispatch task's target lane
as ``<lane>@nanoclaw``, else the lane of the run it named), since NanoClaw's dispatch blocks,
which a lane reads in its ``worker_runs.json``, require one.

Recording happens right after the file is moved. When the store cannot take it then (a full
disk), the reason file is still there: `catch_up`, run when the host starts and when the store
works again, records every reason file the store does not hold yet.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.contracts.jsondoc import load_object
from core.contracts.names import run_id_problem
from core.ipc.chat import LANE_JID_DOMAIN
from core.ipc.files import MAX_EVENT_BYTES, REASON_SUFFIX
from core.ipc.layout import Event, IpcLayout
from core.store.api import RunStore, RunTransaction
from core.workspace import lane_problem

log = logging.getLogger("jarvis.host")

_REASON_MAX_BYTES = 256 * 1024
_JOURNAL_MESSAGE = 300
_CATCH_UP_BATCH = 500
#: The longest chat id kept for a refusal: a longer one is no chat id NanoClaw makes.
_TARGET_MAX = 256


def run_named_by(layout: IpcLayout, path: Path, data: bytes | None) -> str | None:
    """The run a refused file names by its path or its content, if any (never raises)."""
    found = layout.classify(path)
    if isinstance(found, Event) and found.run_id is not None:
        return found.run_id
    if data is None:
        return None
    loaded = load_object(data, limit=MAX_EVENT_BYTES)
    if not loaded.ok:
        return None
    document: dict[str, Any] = loaded.value
    candidates: list[Any] = [document.get("run_id")]
    payload = document.get("payload")
    if isinstance(payload, dict):
        candidates.append(payload.get("run_id"))
    text = document.get("text")
    if isinstance(text, str) and text.lstrip().startswith("{"):
        inner = load_object(text, limit=MAX_EVENT_BYTES)
        if inner.ok:
            candidates.append(inner.value.get("run_id"))
    for candidate in candidates:
        if isinstance(candidate, str) and run_id_problem(candidate) is None:
            return candidate
    return None


def target_named_by(data: bytes | None) -> str | None:
    """The chat a refused file addressed, if its content names one (never raises): a
    message's ``chatJid``, or a dispatch task's ``target`` lane as ``<lane>@nanoclaw``."""
    if data is None:
        return None
    loaded = load_object(data, limit=MAX_EVENT_BYTES)
    if not loaded.ok:
        return None
    document: dict[str, Any] = loaded.value
    jid, target = document.get("chatJid"), document.get("target")
    if isinstance(jid, str):
        return _target(jid)
    if document.get("type") == "dispatch" and isinstance(target, str):
        return target + LANE_JID_DOMAIN if lane_problem(target) is None else None
    return None


def _target(value: Any) -> str | None:
    ok = isinstance(value, str) and 0 < len(value) <= _TARGET_MAX
    return value if ok else None


def record_reason(store: RunStore, reason_path: Path) -> bool:
    """Copy one reason file into the store; False when it was recorded already or unreadable.

    Raises:
        StoreError: the store failed (a full disk, say); `catch_up` records it later.
    """
    reason = _read_reason(reason_path)
    if reason is None:
        return False
    with store.transaction() as tx:
        return _insert(tx, reason_path.name, reason)


def catch_up(store: RunStore, errors_dir: Path) -> int:
    """Record every reason file in ``errors_dir`` that the store does not hold yet.

    Compares names, not times: a refusal the store failed to take can be older than one it took
    afterwards. Runs when the host starts and after a storage fault, so the listing of the folder
    (names only) is rare; only the missing reason files are read.

    Returns:
        How many were recorded.
    """
    try:
        with os.scandir(errors_dir) as entries:
            present = {
                entry.name
                for entry in entries
                if entry.name.endswith(REASON_SUFFIX) and entry.is_file(follow_symlinks=False)
            }
    except OSError:
        return 0
    if not present:
        return 0
    recorded_names = store.refusal_reason_files()
    missing = sorted(present - recorded_names)
    recorded = 0
    for start in range(0, len(missing), _CATCH_UP_BATCH):
        batch = [
            (n, _read_reason(errors_dir / n)) for n in missing[start : start + _CATCH_UP_BATCH]
        ]
        with store.transaction() as tx:
            for name, reason in batch:
                if reason is not None and _insert(tx, name, reason):
                    recorded += 1
    if recorded:
        log.info("recorded %d refused file(s) found in %s", recorded, errors_dir)
    return recorded


def _read_reason(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(_REASON_MAX_BYTES + 1)
    except OSError:
        return None
    loaded = load_object(data, limit=_REASON_MAX_BYTES)
    if not loaded.ok:
        log.warning("%s is not a reason file the host wrote; not recorded", path)
        return None
    reason: dict[str, Any] = loaded.value
    return reason


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _insert(tx: RunTransaction, name: str, reason: Mapping[str, Any]) -> bool:
    details = reason.get("details")
    if not isinstance(details, Mapping):
        details = {}
    named = _text(details.get("run_id"))
    if named is not None and run_id_problem(named) is not None:
        named = None
    brief = tx.run_brief(named) if named is not None else None
    run_id = named if brief is not None else None
    target = _target(details.get("target_jid"))
    if target is None and brief is not None:
        target = f"{brief['lane']}{LANE_JID_DOMAIN}"  # a steer: the chat of the run it named
    code = _text(reason.get("code")) or "unknown"
    message = _text(reason.get("message")) or ""
    lane = _text(reason.get("lane"))
    inserted = tx.record_refusal(
        name,
        {
            "run_id": run_id,
            "named_run": named,
            "lane": lane,
            "code": code,
            "message": message,
            "original_path": _text(reason.get("original_path")) or "",
            "stored_as": _text(reason.get("stored_as")),
            "outcome": _text(reason.get("outcome")) or "unknown",
            "quarantined_at": _text(reason.get("quarantined_at")) or tx.now,
            "target_jid": target,
        },
    )
    if inserted and run_id is not None:
        # The journal is how consoles hear of it; the message is cut, the row keeps it whole.
        short = message if len(message) <= _JOURNAL_MESSAGE else message[: _JOURNAL_MESSAGE - 1]
        tx.journal(
            run_id,
            "quarantined",
            {"code": code, "message": short, "lane": lane, "reason_file": name},
            "host",
        )
    return bool(inserted)
