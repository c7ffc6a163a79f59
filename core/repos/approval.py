"""What approving a run does with its branch: decided with the approval, merged by a host.

Read from the run's latest ``run_git`` row: its repository, branch, base, the head its claims
were checked at, and its merge mode (``auto-merge`` or ``recommend-only``, set when the worktree
was made from the repository's configuration, or by an OpenClaw run's risk level).

Approving decides inside its transaction (`decide`): a run with nothing to merge (no repository
record, ``--no-merge``, ``recommend-only``) is done at once, its outcome recorded; a run whose
branch is to be merged is asked of the host (`MergeRequest`), and the approval ends there, its
run ``review_requested (merging)``. The host holding the run's repository then merges it outside
any store transaction (`carry_out`, from `core.host.merges`): git may take as long as it takes,
on the machine where the repository is, while every other writer goes on. The result is recorded
and the run moved in one short transaction: ``done`` with its merge commit, or back to
``review_requested`` with a refusal an operator can act on (a conflict, a base that moved, a
rejected push: approve again to push again). A host killed mid-merge merges again on its restart,
and the merge finds itself done (`core.repos.merge`): never twice.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.lifecycle import Action, MergeState, stage_of
from core.moves import HOST, apply_move
from core.repos.merge import MergeOutcome, merge_branch
from core.store.api import Row, RunStore, RunTransaction
from core.store.hosts import lease_state

log = logging.getLogger("jarvis.host")

MERGED = frozenset({"fast_forward", "merge_commit", "already_merged", "recommended"})
"""Outcomes after which the run is done (a recommendation: the base was checked out)."""


@dataclass(frozen=True)
class MergeRequest:
    """An approval's merge, for the host holding the run's repository to carry out."""

    branch: str
    base: str
    mode: str

    def to_json(self, host: str | None, host_state: str | None) -> dict[str, Any]:
        return {
            "done": None,
            "pending": True,
            "host": host,
            "host_state": host_state,
            "note": f"Merge of {self.branch} into {self.base} requested: "
            f"{who_merges(host, host_state)}.",
        }


def who_merges(host: str | None, host_state: str | None) -> str:
    """Which host carries out a pending merge, and whether it can now, as a sentence's end."""
    if host is None:
        return "the workspace's host carries it out"
    if host_state == "live":
        return f"host {host} carries it out"
    return (f"host {host}, which holds the run, carries it out when it runs again (it is "
            f"{host_state or 'not known'} now: start it with `jarvis host`)")  # fmt: skip


def host_state(reads: RunTransaction | RunStore, host: str | None, now: str) -> str | None:
    """``live``, ``stopped``, ``lost`` or ``recovered`` (`core.store.hosts.lease_state`) for
    the host named ``host``; None when no host is named or it never served the store."""
    if host is None:
        return None
    for row in reads.hosts():
        if row["name"] == host:
            return lease_state(row, now)
    return None


def merge_status(store: RunStore, run: Row) -> dict[str, Any] | None:
    """Where the run's merge stands, for the CLI and the console: ``pending`` (the run is
    ``merging``) with the ``host`` that carries it out and its ``host_state``, who asked and
    when; else what the latest merge came to (``done``, ``refused``, ``note``,
    ``merged_commit``, ``pushed``). None when no merge was ever asked for or made."""
    pending = stage_of(run) is MergeState.MERGING
    last = store.last_merge(str(run["run_id"]))
    if not pending and last is None:
        return None
    record = store.latest_git(str(run["run_id"]))
    status: dict[str, Any] = {
        "pending": pending,
        "requested_by": record.get("merge_requested_by"),
        "requested_at": record.get("merge_requested_at"),
    }
    if pending:
        host = run.get("host")
        state = host_state(store, host, store.now())
        status.update(
            host=host,
            host_state=state,
            note=f"Merge of {record.get('branch')} "
            f"into {record.get('base_ref')} pending: {who_merges(host, state)}.",
        )
        return status
    assert last is not None
    payload = json.loads(str(last["payload"]))
    status.update({k: payload.get(k) for k in ("done", "refused", "note", "merged_commit",
                                                "pushed", "conflicts", "host")})  # fmt: skip
    status["at"] = last["at"]
    return status


def _latest(tx: RunTransaction | RunStore, run: Row) -> tuple[int, Row]:
    attempt = int(run["retry_count"]) + 1
    return attempt, tx.attempt_git(str(run["run_id"]), attempt)


def decide(
    tx: RunTransaction, run: Row, operator: str, *, merge: bool
) -> MergeOutcome | MergeRequest | None:
    """What approving ``run`` does with its branch, inside the approval's transaction.

    None: the run has no repository record. A `MergeOutcome`: nothing for a host to merge
    (recorded here, with its journal row). A `MergeRequest`: recorded as asked; the caller moves
    the run into ``merging``.
    """
    run_id = str(run["run_id"])
    attempt, record = _latest(tx, run)
    mode = record.get("merge_mode")
    if not mode or not record.get("repo_dir") or not record.get("branch"):
        return None
    branch, base = str(record["branch"]), str(record.get("base_ref") or "")
    if not merge:
        outcome = MergeOutcome("not_merged", f"Approved without merging: {branch} is left as is.")
    elif mode != "auto-merge":
        note = f"The merge mode is {mode}: merging {branch} into {base} is recommended."
        outcome = MergeOutcome("recommended", note)
    elif not record.get("head_commit") or not base:
        note = f"No checked commit of {branch} is known: merging it by hand is recommended."
        outcome = MergeOutcome("recommended", note)
    else:
        tx.request_merge(run_id, attempt, operator)
        request = MergeRequest(branch, base, str(mode))
        tx.journal(run_id, "merge_requested", {"mode": mode, "branch": branch, "base": base,
                                               "host": run.get("host")}, operator)  # fmt: skip
        return request
    _record(tx, run_id, attempt, record, outcome, operator)
    return outcome


def _record(
    tx: RunTransaction,
    run_id: str,
    attempt: int,
    record: Row,
    outcome: MergeOutcome,
    actor: str,
    host: str | None = None,
) -> None:
    """The outcome on the attempt's record, and a ``merge`` journal row by the approver (with
    the host that merged, when one did)."""
    tx.record_merge(run_id, attempt, outcome.merged_commit, outcome.note, outcome.refused)
    payload: dict[str, Any] = {
        "mode": record.get("merge_mode"),
        "branch": record.get("branch"),
        "base": record.get("base_ref"),
        **outcome.to_json(),
    }
    if host:
        payload["host"] = host
    tx.journal(run_id, "merge", payload, actor)


def carry_out(store: RunStore, run_id: str, host: str) -> Row | None:
    """Merge the approved branch of ``run_id`` (the host ``host`` holds its repository), then
    record the result and move the run: ``done``, or back to ``review_requested`` refused.

    Git runs outside any transaction. The run, read again under the write lock, must still be
    ``merging`` at the version read before git: a run that moved meanwhile (another host's
    recovery, say) is left as it is, and merging again finds the merge done. The run as moved,
    or None when there was nothing to do.
    """
    run = store.get_run(run_id)
    if run is None or stage_of(run) is not MergeState.MERGING:
        return None
    attempt, record = _latest(store, run)
    operator = str(record.get("merge_requested_by") or host)
    if not record.get("repo_dir") or not record.get("head_commit"):
        outcome = MergeOutcome(None, "The run's repository record is gone; nothing was merged.",
                               refused="no_record")  # fmt: skip
    else:
        outcome = merge_branch(
            Path(str(record["repo_dir"])), branch=str(record["branch"]),
            base=str(record["base_ref"]), head=str(record["head_commit"]), run_id=run_id,
            operator=operator, remote=record.get("push_remote"),
        )  # fmt: skip
    with store.transaction() as tx:
        now = tx.get_run(run_id)
        if now is None or now["version"] != run["version"]:
            log.info("run %s moved while its branch was merged; left as it is", run_id)
            return None
        _record(tx, run_id, attempt, record, outcome, operator, host)
        if outcome.refused is None and outcome.done in MERGED:
            return apply_move(tx, now, Action.MERGE, HOST, reason=outcome.note,
                              changes={"finished_at": tx.now})  # fmt: skip
        return apply_move(tx, now, Action.REFUSE_MERGE, HOST, reason=outcome.note)


def give_up(store: RunStore, run_id: str, problem: str) -> Row | None:
    """Refuse a merge the host could not carry out for a reason of its own (a bug, not the
    run's): back to ``review_requested`` saying what went wrong, never merged again unasked."""
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None or stage_of(run) is not MergeState.MERGING:
            return None
        attempt, record = _latest(tx, run)
        note = f"The host could not merge it ({problem[:300]}); approve again to try again."
        outcome = MergeOutcome(None, note, refused="host_error")
        _record(tx, run_id, attempt, record, outcome, HOST)
        return apply_move(tx, run, Action.REFUSE_MERGE, HOST, reason=note)
