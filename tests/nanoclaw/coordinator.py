"""Files as NanoClaw's coordinator (``andy-developer``) writes them, byte for byte.

Its MCP tool ``send_message`` writes ``messages/<ms>-<6 base-36>.json``: a temp file named with
``.tmp`` after it, then a rename; ``JSON.stringify(doc, null, 2)`` (two-space indent, no newline
at the end); keys ``type, chatJid, text, sender?, groupFolder, timestamp``. A dispatch is such a
message whose ``text`` is the dispatch serialised compactly (``JSON.stringify(payload)``), sent
to the worker's chat ``jarvis-worker-N@nanoclaw``. A steer is a task file the coordinator
writes itself (no tool exists for it): ``tasks/<anything>.json``, pretty, written directly.
"""

from __future__ import annotations

import json
import os
import random
import string
import time
from pathlib import Path
from typing import Any

LANE = "andy-developer"


def js_compact(value: Any) -> str:
    """``JSON.stringify(value)``: no spaces, non-ASCII as itself."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def js_pretty(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def js_now() -> str:
    """``new Date().toISOString()``."""
    now = time.time_ns() // 1_000_000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now / 1000)) + f".{now % 1000:03d}Z"


def _suffix(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def documented_dispatch(run_id: str, **changes: Any) -> dict[str, Any]:
    """The dispatch of the coordinator's own docs (groups/andy-developer/docs/jarvis-dispatch.md),
    in its key order."""
    doc: dict[str, Any] = {
        "run_id": run_id,
        "request_id": "req-20260302-001",
        "task_type": "implement",
        "context_intent": "fresh",
        "input": "Implement strict dispatch validation for worker runs",
        "repo": "openclaw-gurusharan/nanoclaw",
        "base_branch": "main",
        "branch": "jarvis-dispatch-contract",
        "acceptance_tests": ["npm run build", "npm test"],
        "output_contract": {
            "required_fields": [
                "run_id", "branch", "commit_sha", "files_changed", "test_result", "risk", "pr_url",
            ]
        },
        "priority": "high",
    }  # fmt: skip
    doc.update(changes)
    return doc


class Coordinator:
    """Writes into ``<ipc>/andy-developer/`` as the real coordinator does."""

    def __init__(self, ipc_dir: Path, *, seed: int = 7, lane: str = LANE) -> None:
        self.lane = lane
        self.root = ipc_dir / lane
        self.rng = random.Random(seed)

    def send_message(self, text: str, target_jid: str, sender: str | None = None) -> Path:
        """MCP ``send_message`` with ``target_group_jid``: temp file, then rename."""
        folder = self.root / "messages"
        folder.mkdir(parents=True, exist_ok=True)
        doc: dict[str, Any] = {"type": "message", "chatJid": target_jid, "text": text}
        if sender:
            doc["sender"] = sender
        doc["groupFolder"] = self.lane
        doc["timestamp"] = js_now()
        name = f"{time.time_ns() // 1_000_000}-{_suffix(self.rng, 6)}.json"
        tmp = folder / f"{name}.tmp"
        tmp.write_text(js_pretty(doc))
        os.rename(tmp, folder / name)
        return folder / name

    def dispatch(self, payload: dict[str, Any], worker: str = "jarvis-worker-1") -> Path:
        return self.send_message(js_compact(payload), f"{worker}@nanoclaw")

    def steer(self, run_id: str, message: str) -> Path:
        """A steer as the coordinator's docs show it, written with its own Write tool."""
        folder = self.root / "tasks"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{time.time_ns() // 1_000_000}-steer.json"
        doc = {"type": "steer_worker", "run_id": run_id, "message": message}
        path.write_text(js_pretty(doc))
        return path

    def task(self, doc: dict[str, Any]) -> Path:
        """Any other task file, as the MCP tool writes it (pretty, temp + rename)."""
        folder = self.root / "tasks"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns() // 1_000_000}-{_suffix(self.rng, 6)}.json"
        tmp = folder / f"{name}.tmp"
        tmp.write_text(js_pretty(doc))
        os.rename(tmp, folder / name)
        return folder / name
