"""How a worker's attempt ends in the store: gated completion, or failure with a fingerprint.

Both are one transaction each: the gate results (or failure record), the completion artifacts,
the state move, its audit row and its journal row commit together.
"""

from __future__ import annotations

import json
from typing import Any

from core.contracts.completion import evaluate_completion
from core.contracts.fingerprint import fingerprint
from core.criteria.run_criteria import PENDING, needs_verification
from core.lifecycle import Action, IllegalTransition, RunState
from core.moves import HOST, apply_move
from core.store.sqlite_store import Row, SqliteStore

#: error.v1 classes and codes the host uses; the same failure across runs shares a fingerprint.
FAILURES: dict[str, tuple[str, str]] = {
    "crash": ("interaction_failed", "WORKER_CRASHED"),
    "no_output": ("timeout", "WORKER_NO_OUTPUT"),
    "hard_limit": ("timeout", "WORKER_HARD_LIMIT"),
    "start_failed": ("capability_rejected", "WORKER_START_FAILED"),
    "host_restart": ("interaction_failed", "HOST_RESTART"),
    "host_shutdown": ("interaction_failed", "HOST_SHUTDOWN"),
}
_STEP = "worker"


def record_completion(store: SqliteStore, run_id: str, output: bytes) -> Row | None:
    """Gate the worker's output and move the run to review_requested or failed_contract.

    Returns the updated run, or None when the run was no longer running (cancelled meanwhile).
    """
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None or run["state"] != RunState.RUNNING.value:
            return None
        dispatch: dict[str, Any] = json.loads(run["dispatch_json"])
        verdict = evaluate_completion(dispatch, output)
        attempt = int(run["retry_count"]) + 1
        for gate in verdict.gates:
            tx.execute(
                "INSERT INTO gate_results (run_id, attempt, name, passed, detail, evaluated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [run_id, attempt, gate.name, int(gate.passed), gate.detail, tx.now],
            )
        completion = verdict.completion or {}
        artifacts = {
            "branch_name": _text(completion.get("branch")),
            "commit_sha": _text(completion.get("commit_sha")),
            "files_changed": json.dumps(completion["files_changed"])
            if isinstance(completion.get("files_changed"), list)
            else None,
            "test_summary": _text(completion.get("test_result")),
            "risk_summary": _text(completion.get("risk")),
            "pr_url": _text(completion.get("pr_url")),
            "pr_skipped_reason": _text(completion.get("pr_skipped_reason")),
            "effective_session_id": _text(completion.get("session_id")),
            "finished_at": tx.now,
            "worker_pid": None,
        }
        failed = [g.name for g in verdict.gates if not g.passed]
        if verdict.passed and needs_verification(run):
            # The gates say the output is well-formed; the criteria say whether what was asked
            # for was delivered. The run waits, still running, for the host to verify them.
            artifacts["verification_state"] = PENDING
            tx.touch_run(run_id, changes=artifacts, kind="verification",
                         payload={"status": PENDING}, actor=HOST)  # fmt: skip
            return tx.get_run(run_id)
        action = Action.PASS_GATES if verdict.passed else Action.FAIL_GATES
        if failed:
            artifacts["state_reason"] = "completion gates failed: " + ", ".join(failed)
        return apply_move(
            tx,
            run,
            action,
            HOST,
            reason=artifacts.get("state_reason"),
            changes=artifacts,
        )


def record_failure(store: SqliteStore, run_id: str, kind: str, message: str) -> Row | None:
    """Fail a running run with a reason and an error.v1 failure record.

    Returns the updated run, or None when it was no longer running.
    """
    error_class, error_code = FAILURES[kind]
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None or run["state"] != RunState.RUNNING.value:
            return None
        attempt = int(run["retry_count"]) + 1
        tx.execute(
            "INSERT INTO failures (run_id, attempt, error_class, error_code, step_id, url, "
            "message, fingerprint, at) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?)",
            [
                run_id,
                attempt,
                error_class,
                error_code,
                _STEP,
                message,
                fingerprint(error_class, error_code, _STEP),
                tx.now,
            ],
        )
        try:
            return apply_move(
                tx,
                run,
                Action.FAIL,
                HOST,
                reason=message,
                changes={"state_reason": message, "finished_at": tx.now, "worker_pid": None},
            )
        except IllegalTransition:  # pragma: no cover - guarded by the state check above
            return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
