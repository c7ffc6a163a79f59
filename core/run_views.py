"""How a run looks from outside: the JSON the CLI prints and the console reads.

Stored rows keep JSON-bearing columns as text; these views decode them and name booleans as
booleans, so every caller sees one shape (documented in docs/cli.md).
"""

from __future__ import annotations

import json
from typing import Any

from core.lifecycle import NEEDS_HUMAN, RunState, stage_of
from core.repos.records import latest_checked
from core.run_secrets import found_kinds
from core.run_usage import run_usage, usage_by_run
from core.store.sqlite_store import Row, SqliteStore

SUMMARY_FIELDS = (
    "run_id", "lane", "source_lane", "task_type", "state", "state_reason", "retry_count",
    "overridden", "override_reason", "overridden_by", "overridden_at", "version",
    "created_at", "updated_at", "started_at", "finished_at",
    "last_progress_summary", "last_progress_at", "steer_count",
    "dispatch_repo", "dispatch_branch", "commit_sha", "pr_url", "verification_state",
    "secrets_found", "unverified",
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


def run_detail(store: SqliteStore, run_id: str, *, events: int = 50) -> dict[str, Any] | None:
    """A run with its gates, steers, recent progress, failures and audit trail."""
    row = store.get_run(run_id)
    if row is None:
        return None
    detail = run_full(row)
    detail["gates"] = store.rows(
        "SELECT attempt, name, passed, status, detail, evaluated_at FROM gate_results "
        "WHERE run_id = ? ORDER BY attempt, id",
        [run_id],
    )
    detail["usage"] = run_usage(store, run_id)
    for gate in detail["gates"]:
        # A gate that could not be checked is never reported as passed, even where the
        # workspace let the run through without it (`[git] unverified_may_review`).
        gate["status"] = gate["status"] or ("passed" if gate["passed"] else "failed")
        gate["passed"] = gate["status"] == "passed"
    detail["steers"] = store.rows(
        "SELECT steer_id, message, operator, status, status_reason, created_at, sent_at, acked_at "
        "FROM steering_events WHERE run_id = ? ORDER BY created_at, steer_id",
        [run_id],
    )
    # An attempt's events in their order: by time, then seq, then file name (seq alone
    # restarts with each query of a NanoClaw worker); the latest attempt's last.
    recent = store.rows(
        "SELECT seq, timestamp, phase, summary, tool_used FROM progress_events "
        "WHERE run_id = ? ORDER BY attempt DESC, at_utc DESC, seq DESC, name DESC LIMIT ?",
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
    latest = store.rows(
        "SELECT attempt, results_json FROM verification_results WHERE run_id = ? "
        "ORDER BY id DESC LIMIT 1",
        [run_id],
    )
    # The latest verification_results (constraint-extraction shape) and its attempt, or None.
    detail["verification"] = (
        {"attempt": latest[0]["attempt"], **_loads(latest[0]["results_json"])} if latest else None
    )
    # The end of each attempt's stderr (masked and inert when stored), oldest attempt first.
    detail["stderr"] = store.rows(
        "SELECT attempt, exit_code, tail, total_bytes, at FROM worker_stderr "
        "WHERE run_id = ? ORDER BY attempt",
        [run_id],
    )
    detail["diff_stat"] = diff_stat(store, run_id)
    detail["quarantined"] = quarantined_files(store, run_id=run_id, limit=REFUSALS_SHOWN)
    detail["quarantined_count"] = int(
        store.rows("SELECT COUNT(*) AS n FROM quarantined_files WHERE run_id = ?", [run_id])[0]["n"]
    )
    return detail


def diff_stat(store: SqliteStore, run_id: str) -> dict[str, int] | None:
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

_REFUSAL_FIELDS = (
    "run_id, named_run, lane, code, message, original_path, stored_as, outcome, quarantined_at"
)


def quarantined_files(
    store: SqliteStore, *, run_id: str | None = None, limit: int = 100, unattached: bool = False
) -> list[dict[str, Any]]:
    """Files the host refused, newest first: one run's, those of no known run, or all.

    Each: ``run_id`` (None when the file named no run that exists), ``named_run`` (the run its
    path or content named), ``lane``, ``code``, ``message``, ``original_path``, ``stored_as``
    (where it lies now, under data/ipc/errors/), ``outcome`` and ``quarantined_at``.
    """
    where, params = "", []
    if run_id is not None:
        where, params = "WHERE run_id = ?", [run_id]
    elif unattached:
        where = "WHERE run_id IS NULL"
    return store.rows(
        f"SELECT {_REFUSAL_FIELDS} FROM quarantined_files {where} ORDER BY id DESC LIMIT ?",
        [*params, limit],
    )


def quarantine_counts(store: SqliteStore, since: str) -> dict[str, int]:
    """How many files were refused at or after ``since`` (ISO text), and how many of no run."""
    row = store.rows(
        "SELECT COUNT(*) AS total, COALESCE(SUM(run_id IS NULL), 0) AS unattached "
        "FROM quarantined_files WHERE quarantined_at >= ?",
        [since],
    )[0]
    return {"total": int(row["total"]), "unattached": int(row["unattached"])}


def journal_entry(row: Row) -> dict[str, Any]:
    entry = dict(row)
    entry["payload"] = _loads(entry.get("payload"))
    return entry


# -- the console's views: bounded reads that scale with what changed, not with the store ---------

#: SQLite binds at most 32,766 parameters; reads by id go in chunks well under that.
_CHUNK = 500


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


def table_rows(store: SqliteStore, run_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """Run summaries with their steer receipts, latest gate verdicts and what their agents
    reported spending (``usage``: `core.run_usage.usage_by_run`'s totals over every attempt, None
    when nothing was reported), for a run table.

    ``run_ids=None`` reads every run (a console's first read); otherwise only those runs, which
    is what keeps a live console's cost proportional to what the journal says changed. Either
    way each of those is a fixed number of queries (per chunk of ids), never one per run.
    """
    if run_ids is None:
        runs = store.rows("SELECT * FROM runs ORDER BY created_at DESC, run_id")
        steers = store.rows(
            "SELECT run_id, status, COUNT(*) AS n FROM steering_events GROUP BY run_id, status"
        )
        gates = store.rows(_GATE_TOTALS.format(inner="", where=""))
        usage = usage_by_run(store)
    else:
        runs, steers, gates, usage = [], [], [], {}
        for chunk in _chunks(sorted(set(run_ids))):
            marks = ", ".join("?" for _ in chunk)
            runs += store.rows(f"SELECT * FROM runs WHERE run_id IN ({marks})", chunk)
            steers += store.rows(
                "SELECT run_id, status, COUNT(*) AS n FROM steering_events "
                f"WHERE run_id IN ({marks}) GROUP BY run_id, status",
                chunk,
            )
            gates += store.rows(
                _GATE_TOTALS.format(
                    inner=f"WHERE run_id IN ({marks})", where=f"WHERE g.run_id IN ({marks})"
                ),
                chunk + chunk,
            )
            usage.update(usage_by_run(store, chunk))
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
_GATE_TOTALS = (
    "SELECT g.run_id, SUM(g.passed AND COALESCE(g.status, '') != 'not_checked') AS passed, "
    "SUM(COALESCE(g.status, '') = 'not_checked') AS not_checked, COUNT(*) AS total "
    "FROM gate_results g "
    "JOIN (SELECT run_id, MAX(attempt) AS attempt FROM gate_results {inner} GROUP BY run_id) "
    "latest ON latest.run_id = g.run_id AND latest.attempt = g.attempt {where} GROUP BY g.run_id"
)


def state_counts(store: SqliteStore) -> dict[str, int]:
    """How many runs are in each state."""
    rows = store.rows("SELECT state, COUNT(*) AS n FROM runs GROUP BY state")
    return {str(row["state"]): int(row["n"]) for row in rows}


def run_journal(
    store: SqliteStore,
    run_id: str | None,
    *,
    limit: int = 200,
    before_seq: int | None = None,
) -> list[dict[str, Any]]:
    """The newest ``limit`` journal entries (of one run, or of all runs), oldest first.

    ``before_seq`` pages back through history: the console keeps only a window in memory and asks
    the store for anything older.
    """
    where: list[str] = []
    params: list[Any] = []
    if run_id is not None:
        where.append("run_id = ?")
        params.append(run_id)
    if before_seq is not None:
        where.append("seq < ?")
        params.append(before_seq)
    sql = "SELECT * FROM journal"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY seq DESC LIMIT ?"
    params.append(limit)
    return [journal_entry(row) for row in reversed(store.rows(sql, params))]


def fingerprint_peers(store: SqliteStore, run_id: str) -> list[dict[str, Any]]:
    """Each distinct failure fingerprint of ``run_id``, newest first, with how many OTHER runs
    failed with the same fingerprint (the sign of a shared cause rather than a flaky worker)."""
    return store.rows(
        "SELECT f.fingerprint, f.error_class, f.error_code, MAX(f.at) AS at, "
        "  (SELECT COUNT(DISTINCT o.run_id) FROM failures o "
        "   WHERE o.fingerprint = f.fingerprint AND o.run_id != f.run_id) AS other_runs "
        "FROM failures f WHERE f.run_id = ? "
        "GROUP BY f.fingerprint ORDER BY MAX(f.id) DESC",
        [run_id],
    )
