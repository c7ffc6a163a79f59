"""How a run looks from outside: the JSON the CLI prints and the console reads.

Stored rows keep JSON-bearing columns as text; these views decode them and name booleans as
booleans, so every caller sees one shape (documented in docs/cli.md).
"""

from __future__ import annotations

import json
from typing import Any

from core.lifecycle import (
    MERGE_PARENT,
    NEEDS_HUMAN,
    PARENT,
    SUB_STAGES,
    RunState,
    stage_of,
    state_of,
)
from core.repos.approval import merge_status
from core.repos.records import latest_checked
from core.run_secrets import found_kinds
from core.store.api import Row, RunStore
from core.store.views import CHUNK
from core.store.window import Stage

SUMMARY_FIELDS = (
    "run_id", "lane", "source_lane", "task_type", "state", "state_reason", "retry_count",
    "overridden", "override_reason", "overridden_by", "overridden_at", "version",
    "created_at", "updated_at", "started_at", "finished_at",
    "last_progress_summary", "last_progress_at", "steer_count",
    "dispatch_repo", "dispatch_branch", "commit_sha", "pr_url", "verification_state",
    "merge_state", "secrets_found", "unverified",
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
    summary["secrets_found"] = found_kinds(row.get("secrets_found"))
    return summary


def run_full(row: Row) -> dict[str, Any]:
    """Every stored field, JSON columns decoded."""
    full = dict(row)
    full["overridden"] = bool(row.get("overridden"))
    full["dispatch"] = _loads(full.pop("dispatch_json", None))
    full["files_changed"] = _loads(full.get("files_changed"))
    full["criteria"] = _loads(full.pop("criteria_json", None)) or []
    full["universal_criteria"] = bool(row.get("universal_criteria", 1))
    full["approved_commands"] = _loads(full.get("approved_commands")) or []
    full["secrets_found"] = found_kinds(row.get("secrets_found"))
    return full


def run_detail(store: RunStore, run_id: str, *, events: int = 50) -> dict[str, Any] | None:
    """A run with its gates, steers, recent progress, failures and audit trail."""
    row = store.get_run(run_id)
    if row is None:
        return None
    detail = run_full(row)
    detail["gates"] = store.gate_results(run_id)
    detail["usage"] = store.run_usage(run_id)
    for gate in detail["gates"]:
        # A gate that could not be checked is never reported as passed, even where the
        # workspace let the run through without it (`[git] unverified_may_review`).
        gate["status"] = gate["status"] or ("passed" if gate["passed"] else "failed")
        gate["passed"] = gate["status"] == "passed"
    detail["steers"] = store.steers_of(run_id)
    # An attempt's events in their order: by time, then seq, then file name (seq alone
    # restarts with each query of a NanoClaw worker); the latest attempt's last.
    recent = store.recent_events(run_id, events)
    detail["events"] = list(reversed(recent))
    # How many there are in all, so a reader of the newest few knows how many it was not shown.
    detail["events_count"] = store.event_count(run_id)
    detail["failures"] = store.failures_of(run_id)
    detail["audit"] = store.audit_of(run_id)
    latest = store.latest_verification(run_id)
    # The latest verification_results (constraint-extraction shape) and its attempt, or None.
    detail["verification"] = (
        {"attempt": latest["attempt"], **_loads(latest["results_json"])} if latest else None
    )
    # The end of each attempt's stderr (masked and inert when stored), oldest attempt first.
    detail["stderr"] = store.stderr_of(run_id)
    detail["diff_stat"] = diff_stat(store, run_id)
    # Where an approved run's merge stands (pending on a host), or what it came to.
    detail["merge"] = merge_status(store, row)
    detail["quarantined"] = quarantined_files(store, run_id=run_id, limit=REFUSALS_SHOWN)
    detail["quarantined_count"] = store.refusal_count(run_id)
    detail["retention"] = removed_by_retention(store.retention_of(run_id))
    return detail


def removed_by_retention(row: Row | None) -> dict[str, Any] | None:
    """What retention removed of a run's history, per kind: how many, the span of their times
    and the days the policy kept (``[store]``); None when it removed nothing."""
    if row is None:
        return None
    shaped = {
        kind: {
            "removed": int(row[f"{table}_removed"]),
            "from": row[f"{table}_first_at"],
            "until": row[f"{table}_last_at"],
            "keep_days": row[f"{table}_keep_days"],
        }
        for kind, table in (("progress_events", "progress"), ("journal_entries", "journal"))
        if row[f"{table}_removed"]
    }
    return shaped or None


def diff_stat(store: RunStore, run_id: str) -> dict[str, int] | None:
    """The size of the run's diff as git showed it when its latest checked attempt's completion
    was checked (``files``, ``additions``, ``deletions``), or None when no attempt's was."""
    checked = latest_checked(store, run_id)
    if not checked or checked.get("diff_files") is None:
        return None
    return {
        "files": int(checked["diff_files"]),
        "additions": int(checked.get("diff_additions") or 0),
        "deletions": int(checked.get("diff_deletions") or 0),
    }


#: A run's refused files shown with it, newest first; a lane that floods one is counted.
REFUSALS_SHOWN = 20


def quarantined_files(
    store: RunStore, *, run_id: str | None = None, limit: int = 100, unattached: bool = False
) -> list[dict[str, Any]]:
    """Files the host refused, newest first: one run's, those of no known run, or all.

    Each: ``run_id`` (None when the file named no run that exists), ``named_run`` (the run its
    path or content named), ``lane``, ``code``, ``message``, ``original_path``, ``stored_as``
    (where it lies now, under data/ipc/errors/), ``outcome`` and ``quarantined_at``.
    """
    return store.refusals(run_id=run_id, unattached=unattached, limit=limit)


def quarantine_counts(store: RunStore, since: str) -> dict[str, int]:
    """How many files were refused at or after ``since`` (ISO text), and how many of no run."""
    return store.refusal_counts(since)


def journal_entry(row: Row) -> dict[str, Any]:
    entry = dict(row)
    entry["payload"] = _loads(entry.get("payload"))
    return entry


# -- the console's views: bounded reads that scale with what changed, not with the store ---------

_CHUNK = CHUNK


def _chunks(items: list[str]) -> list[list[str]]:
    return [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]


def needs_attention(row: dict[str, Any]) -> bool:
    """A run an operator must look at: it waits on a decision (the lifecycle's `NEEDS_HUMAN`,
    a criterion's command to allow among them), or a steer to it went unheard."""
    try:
        stage = stage_of(row)
    except (KeyError, ValueError):
        return False
    if stage in NEEDS_HUMAN:
        return True
    steers = row.get("steers") or {}
    return stage is RunState.RUNNING and bool(steers.get("expired"))


#: Each state with a sub-machine → the column holding its sub-state (`stage_of`).
SUB_COLUMNS = {PARENT: "verification_state", MERGE_PARENT: "merge_state"}


def attention_stages() -> tuple[Stage, ...]:
    """`needs_attention` as the store's window reads it: each stage needing a human, and a
    running run with an expired steer."""
    stages = []
    for stage in sorted(NEEDS_HUMAN, key=lambda s: (state_of(s).value, s.value)):
        parent = state_of(stage)
        if parent is stage:
            column = SUB_COLUMNS[parent] if parent in SUB_STAGES else None
            stages.append(Stage(parent.value, column))
        else:
            stages.append(Stage(parent.value, SUB_COLUMNS[parent], stage.value))
    stages.append(Stage(RunState.RUNNING.value, SUB_COLUMNS[PARENT], steer="expired"))
    return tuple(stages)


def table_rows(store: RunStore, run_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """Run summaries with their steer receipts, latest gate verdicts and what their agents
    reported spending (``usage``: `SqliteStore.usage_by_run`'s totals over every attempt, None
    when nothing was reported), for a run table.

    ``run_ids=None`` reads every run (a console's first read); otherwise only those runs, which
    is what keeps a live console's cost proportional to what the journal says changed. Either
    way each of those is a fixed number of queries (per chunk of ids), never one per run.
    """
    # The summary's columns only: a run's dispatch (up to megabytes of JSON) is read when it
    # is opened, not for a table row (100,000 runs: ~97 MB of row values read and dropped).
    runs = store.runs_by_id(run_ids, SUMMARY_FIELDS)
    steers = store.steer_counts(run_ids)
    gates = store.gate_totals(run_ids)
    if run_ids is None:
        usage = store.usage_by_run()
    else:
        usage = {}
        for chunk in _chunks(sorted(set(run_ids))):
            usage.update(store.usage_by_run(chunk))
    steer_counts: dict[str, dict[str, int]] = {}
    for row in steers:
        steer_counts.setdefault(row["run_id"], {})[row["status"]] = int(row["n"])
    gate_totals = {row["run_id"]: row for row in gates}
    out = []
    for run in runs:
        summary = run_summary(run)
        summary["steers"] = steer_counts.get(run["run_id"], {})
        totals = gate_totals.get(run["run_id"])
        summary["gates"] = (
            {
                "passed": int(totals["passed"]),
                "total": int(totals["total"]),
                "not_checked": int(totals["not_checked"]),
            }
            if totals
            else None
        )
        summary["usage"] = usage.get(run["run_id"])
        out.append(summary)
    return out


# Only the latest attempt's verdicts count: a retried run's old failures are history. The run
# filter goes inside the subquery too, or it would group every gate row of the store first.
def state_counts(store: RunStore) -> dict[str, int]:
    """How many runs are in each state."""
    return store.state_counts()


def run_journal(
    store: RunStore,
    run_id: str | None,
    *,
    limit: int = 200,
    before_seq: int | None = None,
) -> list[dict[str, Any]]:
    """The newest ``limit`` journal entries (of one run, or of all runs), oldest first.

    ``before_seq`` pages back through history: the console keeps only a window in memory and asks
    the store for anything older.
    """
    rows = store.journal_page(run_id, limit=limit, before_seq=before_seq)
    return [journal_entry(row) for row in reversed(rows)]


def fingerprint_peers(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    """Each distinct failure fingerprint of ``run_id``, newest first, with how many OTHER runs
    failed with the same fingerprint (the sign of a shared cause rather than a flaky worker)."""
    return store.fingerprint_peers(run_id)
