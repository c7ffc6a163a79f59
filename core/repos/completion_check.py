"""A run's completion checked against git: the claims of the worker's output (its commit, its
branch, the files it changed) against the run's own repository, its work taken into the
configured one (`core.repos.run_check`), or against whatever repository it left in its checkout
(`core.repos.claims`). Git is asked here, before the store's write lock is taken for the verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.contracts.completion import extract_completion
from core.criteria.run_criteria import checkout_dir
from core.lifecycle import RunState
from core.repos import records, run_repo
from core.repos.claims import ClaimCheck, check_claims
from core.repos.run_check import check_run
from core.repos.view import view_dir
from core.store.api import Row, RunStore


def _dispatch(run: Row) -> dict[str, Any]:
    try:
        value = json.loads(run.get("dispatch_json") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def base_branch_of(run: Row) -> str | None:
    value = _dispatch(run).get("base_branch")
    return value if isinstance(value, str) and value.strip() else None


def check_completion(
    store: RunStore, workspace_root: Path, run_id: str, output: bytes
) -> ClaimCheck | None:
    """The git gates for a worker's output; None when the run is no longer running. A run in a
    configured repository has its work taken into it (`core.repos.run_check`)."""
    run = store.get_run(run_id)
    if run is None or RunState(run["state"]) is not RunState.RUNNING:
        return None
    attempt = int(run["retry_count"]) + 1
    made = records.attempt_git(store, run_id, attempt)
    base = base_branch_of(run)
    completion = extract_completion(output).completion
    checkout = checkout_dir(workspace_root, run_id)
    branch = str(run.get("dispatch_branch") or "")
    if made.get("repo_dir") and run_repo.is_own_repository(checkout):
        return check_run(
            checkout, completion, run_id=run_id, attempt=attempt, branch=branch,
            view_path=view_dir(workspace_root, run_id), main=Path(made["repo_dir"]),
            base_commit=made.get("base_commit"), bases=[base] if base else [],
            refs_at_start=records.refs_at_start(made),
        )  # fmt: skip
    return check_claims(
        checkout,
        completion,
        branch=branch,
        view_path=view_dir(workspace_root, run_id),
        base_commit=made.get("base_commit"),
        bases=[base] if base else [],
    )
