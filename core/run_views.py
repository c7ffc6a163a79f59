"""How a run looks from outside: the JSON the CLI prints and the console reads.

Stored rows keep JSON-bearing columns as text; these views decode them and name booleans as
booleans, so every caller sees one shape (documented in docs/cli.md).
"""

from __future__ import annotations

import json
from typing import Any

from core.store.sqlite_store import Row, SqliteStore

SUMMARY_FIELDS = (
    "run_id", "lane", "source_lane", "task_type", "state", "state_reason", "retry_count",
    "overridden", "override_reason", "overridden_by", "overridden_at", "version",
    "created_at", "updated_at", "started_at", "finished_at",
    "last_progress_summary", "last_progress_at", "steer_count",
    "dispatch_repo", "dispatch_branch", "commit_sha", "pr_url",
)  # fmt: skip


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def run_summary(row: Row) -> dict[str, Any]:
    """The fields a run table shows."""
    summary = {name: row.get(name) for name in SUMMARY_FIELDS}
    summary["overridden"] = bool(row.get("overridden"))
    return summary


def run_full(row: Row) -> dict[str, Any]:
    """Every stored field, JSON columns decoded."""
    full = dict(row)
    full["overridden"] = bool(row.get("overridden"))
    full["dispatch"] = _loads(full.pop("dispatch_json", None))
    full["files_changed"] = _loads(full.get("files_changed"))
    return full


def run_detail(store: SqliteStore, run_id: str, *, events: int = 50) -> dict[str, Any] | None:
    """A run with its gates, steers, recent progress, failures and audit trail."""
    row = store.get_run(run_id)
    if row is None:
        return None
    detail = run_full(row)
    detail["gates"] = store.rows(
        "SELECT attempt, name, passed, detail, evaluated_at FROM gate_results "
        "WHERE run_id = ? ORDER BY attempt, id",
        [run_id],
    )
    for gate in detail["gates"]:
        gate["passed"] = bool(gate["passed"])
    detail["steers"] = store.rows(
        "SELECT steer_id, message, operator, status, status_reason, created_at, sent_at, acked_at "
        "FROM steering_events WHERE run_id = ? ORDER BY created_at, steer_id",
        [run_id],
    )
    recent = store.rows(
        "SELECT seq, timestamp, phase, summary, tool_used FROM progress_events "
        "WHERE run_id = ? ORDER BY seq DESC LIMIT ?",
        [run_id, events],
    )
    detail["events"] = list(reversed(recent))
    detail["failures"] = store.rows(
        "SELECT attempt, error_class, error_code, step_id, url, message, fingerprint, at "
        "FROM failures WHERE run_id = ? ORDER BY id",
        [run_id],
    )
    detail["audit"] = store.rows(
        "SELECT actor, action, from_state, to_state, reason, at FROM audit "
        "WHERE run_id = ? ORDER BY id",
        [run_id],
    )
    return detail


def journal_entry(row: Row) -> dict[str, Any]:
    entry = dict(row)
    entry["payload"] = _loads(entry.get("payload"))
    return entry
