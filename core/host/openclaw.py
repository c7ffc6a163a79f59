"""OpenClaw-style work: ``work/requests/<task_id>.json`` in, ``work/results/<task_id>/`` out.

A supervisor drops a request; the host validates it and makes it a run on the ``openclaw`` lane,
``running`` at once — an OpenClaw worker is started by its supervisor, not by this host, so the
host neither launches nor times out a process for it, and a restart does not fail it. The request
file stays where it is (the worker reads it); a receipt keeps it from becoming a run twice.

When the results folder has its ``status.json``, the folder goes through the scope and risk gate:
L0–L2 move the run to ``review_requested`` (with the merge mode the level allows), L3 to
``failed_contract``. The gate's verdict and each finding are stored as the run's gate results,
which the console shows like any completion's gates.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.contracts.names import run_id_problem
from core.contracts.secrets_scan import mask_secrets
from core.host.refusals import record_reason
from core.ipc.files import quarantine
from core.lifecycle import Action, RunState
from core.moves import HOST, apply_move
from core.repos.records import record_diff
from core.store.api import RunStore
from core.text import inert

if TYPE_CHECKING:
    from core.contracts.risk_gate import Level
    from core.host.checkouts import OpenClawChange

# The request's contract and the risk gate are imported where a request or a result is found:
# most workspaces have neither, and together they are a third of the host's start-up imports.

SOURCE = "openclaw"
"""The source lane of runs made from requests, and the lane they run on."""
MAX_REQUEST_BYTES = 1024 * 1024


def requests_dir(workspace_root: Path) -> Path:
    return workspace_root / "work" / "requests"


def results_dir(workspace_root: Path, task_id: str) -> Path:
    return workspace_root / "work" / "results" / task_id


def _regular_json(folder: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.name.endswith(".json")
        and not e.name.startswith(".")
        and e.is_file(follow_symlinks=False)
    ]


def ingest_requests(store: RunStore, workspace_root: Path, errors_dir: Path) -> int:
    """Make a run of every new, valid request; quarantine the invalid ones. Returns runs made."""
    made = 0
    for path in _regular_json(requests_dir(workspace_root)):
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode):
                continue
            data = path.read_bytes()[: MAX_REQUEST_BYTES + 1]
        except OSError:
            continue
        key = f"work/requests/{path.name}:{hashlib.sha256(data).hexdigest()}"
        from core.contracts.openclaw_request import validate_request

        report = validate_request(data)
        task_id = report.document.get("task_id") if report.document else None
        problem = run_id_problem(task_id) if isinstance(task_id, str) else None
        if not report.valid or problem or path.stem != task_id:
            with store.transaction() as tx:
                if tx.has_receipt(key):
                    continue
                tx.put_receipt(key, SOURCE, "request_refused")
            if not report.valid:
                message = " ".join(e.message for e in report.errors[:5])
                code = "invalid_request"
            elif problem:
                code, message = "task_id_not_run_id", f"task_id cannot name a run: {problem[1]}"
            else:
                code, message = "name_mismatch", f"{path.name} must be named <task_id>.json"
            named = task_id if isinstance(task_id, str) and problem is None else None
            reason = quarantine(path, errors_dir, lane=SOURCE, code=code,
                                message=mask_secrets(message),
                                details={"run_id": named} if named else None,
                                root=requests_dir(workspace_root))  # fmt: skip
            record_reason(store, reason)
            continue
        assert isinstance(task_id, str) and report.document is not None
        with store.transaction() as tx:
            if tx.has_receipt(key):
                continue
            if tx.get_run(task_id) is not None:
                tx.put_receipt(key, SOURCE, "request_duplicate")
                continue
            run = tx.create_run(
                {
                    "run_id": task_id,
                    "lane": SOURCE,
                    "source_lane": SOURCE,
                    "task_type": "implement",
                    "state": RunState.QUEUED.value,
                    "dispatch_json": json.dumps({"openclaw_request": report.document}),
                    "dispatch_branch": _target_branch(report.document),
                },
                actor=SOURCE,
            )
            tx.audit(task_id, actor=SOURCE, action="dispatch", from_state=None,
                     to_state=RunState.QUEUED.value, reason=f"request {path.name}")  # fmt: skip
            apply_move(tx, run, Action.START, HOST, changes={"started_at": tx.now},
                       reason="an OpenClaw worker runs it outside the host")  # fmt: skip
            tx.put_receipt(key, SOURCE, "request")
            made += 1
    return made


def _target_branch(doc: dict[str, Any]) -> str | None:
    repo = doc.get("repo")
    branch = repo.get("target_branch") if isinstance(repo, dict) else None
    return branch if isinstance(branch, str) else None


def gate_finished_results(
    store: RunStore,
    workspace_root: Path,
    change_of: Callable[[Any], OpenClawChange] | None = None,
    *,
    unchecked_may_review: bool = True,
) -> int:
    """Gate every running OpenClaw run whose results folder has its status.json.

    Args:
        change_of: what git shows of a request's branch (`core.host.checkouts.openclaw_change`);
            when the request's repository is configured, the gate judges git's diff.
        unchecked_may_review: whether a run whose change git could not show may still reach
            review (marked unverified).
    """
    gated = 0
    for run in store.runs_from(SOURCE, RunState.RUNNING.value):
        folder = results_dir(workspace_root, run["run_id"])
        if not (folder / "status.json").is_file():
            continue
        from core.contracts.risk_gate import Level, gate_results

        request = json.loads(run["dispatch_json"])["openclaw_request"]
        change = change_of(request) if change_of is not None else None
        from_git = change is not None and (change.patch is not None or change.too_large)
        if change is not None and from_git:
            report = gate_results(request, folder, git_patch=change.patch,
                                  git_patch_too_large=change.too_large)  # fmt: skip
            span = f"{(change.merge_base or '')[:12]}..{(change.head or '')[:12]}"
            git_gate = ("git_diff", 1, "passed", f"judged the diff git shows: {span}")
        else:
            report = gate_results(request, folder)
            if change is not None and change.repo_dir is not None:
                git_gate = ("git_diff", 0, "failed", f"git shows no change: {change.problem}")
            else:
                git_gate = ("git_diff", int(unchecked_may_review), "not_checked",
                            "not checked: the request's repository is not configured")  # fmt: skip
        with store.transaction() as tx:
            current = tx.get_run(run["run_id"])
            if current is None or RunState(current["state"]) is not RunState.RUNNING:
                continue
            attempt = int(current["retry_count"]) + 1
            summary = (
                f"{report.risk.name} · {report.merge_mode} · {report.files_changed} file(s), "
                f"+{report.additions} -{report.deletions}"
            )
            rows = [("risk_gate", report.risk < Level.L3, summary)]
            for finding in report.findings:
                where = f" ({finding.path})" if finding.path else ""
                rows.append(
                    (
                        finding.code,
                        finding.level < Level.L3,
                        f"{finding.level.name}{where}: {finding.message}",
                    )  # fmt: skip
                )
            for name, passed, detail in rows:
                tx.add_gate_result(run["run_id"], attempt, name, passed, detail)
            name, passed_git, status, detail = git_gate
            tx.add_gate_result(
                run["run_id"], attempt, name, bool(passed_git), inert(detail), status
            )
            if change is not None and change.repo_dir is not None and change.head:
                # The risk level may lower the repository's merge mode, never raise it.
                mode = report.merge_mode if change.merge == "auto-merge" else change.merge
                record_diff(
                    tx, run["run_id"], attempt, str(change.repo_dir), branch=change.branch,
                    base_ref=change.base_ref, merge_base=change.merge_base or "",
                    head=change.head,
                    stat=(report.files_changed, report.additions, report.deletions),
                    merge_mode=mode, push_remote=change.remote,
                )  # fmt: skip
            blocked = report.risk >= Level.L3 or not passed_git
            apply_move(
                tx,
                current,
                Action.FAIL_GATES if blocked else Action.PASS_GATES,
                HOST,
                reason=f"risk {summary}",
                changes={
                    "risk_summary": summary,
                    "state_reason": _blocked_reason(summary, report.risk, detail)
                    if blocked
                    else None,
                    "finished_at": tx.now,
                    "unverified": detail.removeprefix("not checked: ")
                    if status == "not_checked"
                    else None,
                },
            )
            gated += 1
    return gated


def _blocked_reason(summary: str, risk: Level, git_detail: str) -> str:
    from core.contracts.risk_gate import Level

    if risk >= Level.L3:
        return f"risk gate blocked the merge: {summary}"
    return f"git_diff: {git_detail}"
