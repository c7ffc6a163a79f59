"""Dispatch intake: a dispatch from one lane to another becomes a run — or a clear refusal.

Outcomes, in the order they are decided:

- ``invalid`` — the dispatch breaks its contract, a lane name is unusable, or it reuses a session
  last used on another worker lane (cross-worker session reuse); ``errors`` say which.
- ``unauthorized`` — the source lane may not dispatch to the target lane.
- ``deduplicated`` — the idempotency key was seen with the same payload: the earlier run answers.
- ``conflict`` — the idempotency key was seen with a different payload.
- ``retried`` — the run id exists in ``failed`` or ``failed_contract``: same run, retry_count + 1.
- ``duplicate`` — the run id exists in any other state: a second execution is blocked.
- ``enqueued`` — a new run, ``queued``.

The key is ``idempotency_key``, when the submitter gives one; otherwise the run id is the key, as
in NanoClaw: a ``request_id`` groups the runs of one request (a rework is a second run of it),
so it identifies no submission. Validation, authorization and the extraction of acceptance
criteria need no store and happen first (`prepare_dispatch`), outside any transaction: extraction
reads the whole task, and no other writer should wait on it. Everything after that happens in
one write transaction (`submit_prepared`), so two identical submissions racing each other produce
one run and one ``deduplicated`` (or ``duplicate``), never two runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from core.authorization import dispatch_refusal, is_worker_lane
from core.contracts.dispatch import validate_dispatch
from core.contracts.errors import FieldError
from core.contracts.idempotency import payload_hash
from core.lifecycle import RETRYABLE, Action, RunState, allowed_from
from core.moves import apply_move
from core.operator_actions import RETRY_CLEARS
from core.run_views import run_summary
from core.store.api import Row, RunStore, RunTransaction
from core.workspace import lane_problem

if TYPE_CHECKING:
    from core.criteria.extract import Extraction

Outcome = Literal[
    "enqueued", "retried", "deduplicated", "conflict", "duplicate", "unauthorized", "invalid"
]
ACCEPTED: frozenset[str] = frozenset({"enqueued", "retried", "deduplicated"})


@dataclass(slots=True)
class IntakeResult:
    outcome: Outcome
    run_id: str | None
    errors: list[FieldError] = field(default_factory=list)
    run: Row | None = None
    message: str = ""

    @property
    def accepted(self) -> bool:
        return self.outcome in ACCEPTED

    @property
    def further_errors(self) -> list[FieldError]:
        """The field errors that say more than `message`: a duplicate's one error is its
        sentence, which a reader shown both would read twice."""
        return [e for e in self.errors if e.message != self.message]

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "run_id": self.run_id,
            "errors": [e.to_json() for e in self.errors],
            "message": self.message,
            "run": run_summary(self.run) if self.run else None,
        }


def _run_fields(
    doc: Mapping[str, Any], source: str, target: str, key: str | None
) -> dict[str, Any]:
    return {
        "lane": target,
        "source_lane": source,
        "task_type": doc.get("task_type"),
        "request_id": doc.get("request_id"),
        "idempotency_key": key,
        "dispatch_json": json.dumps(doc, sort_keys=True),
        "dispatch_repo": doc.get("repo"),
        "dispatch_branch": doc.get("branch"),
        "context_intent": doc.get("context_intent"),
        "parent_run_id": doc.get("parent_run_id"),
        "dispatch_session_id": doc.get("session_id"),
    }


_Prepared = tuple[dict[str, Any], str, str | None, str]


@dataclass(frozen=True, slots=True)
class PreparedDispatch:
    """A dispatch checked and its criteria extracted: everything decided without the store."""

    doc: Mapping[str, Any]
    run_id: str
    source_lane: str
    target_lane: str
    key: str | None
    """The idempotency key the submitter gave, if any."""
    digest: str
    """The payload's hash, compared with the one stored under ``key``."""
    criteria: dict[str, Any]
    """The run columns its acceptance criteria set."""
    extraction: Extraction
    """How the criteria were found, for the run's journal."""


def _prepare(
    data: bytes | str | Mapping[str, Any],
    source_lane: str,
    target_lane: str,
    idempotency_key: str | None,
) -> IntakeResult | _Prepared:
    """Everything decided without the store: validity and authorization."""
    report = validate_dispatch(data)
    doc = report.document or {}
    run_id = doc.get("run_id") if isinstance(doc.get("run_id"), str) else None
    errors = list(report.errors)
    for flag, lane in (("from", source_lane), ("to", target_lane)):
        problem = lane_problem(lane)
        if problem:
            errors.append(FieldError(flag, "bad_lane", problem))
    if errors:
        return IntakeResult("invalid", run_id, errors, message="The dispatch is invalid.")
    assert run_id is not None
    refusal = dispatch_refusal(source_lane, target_lane)
    if refusal:
        return IntakeResult(
            "unauthorized", run_id, [FieldError("to", "not_authorized", refusal)], message=refusal
        )
    key = idempotency_key or None
    return doc, run_id, key, payload_hash(doc)


def prepare_dispatch(
    data: bytes | str | Mapping[str, Any],
    *,
    source_lane: str,
    target_lane: str,
    idempotency_key: str | None = None,
    universal_default: bool = False,
) -> IntakeResult | PreparedDispatch:
    """Validate and authorize a dispatch and extract its criteria, without touching the store.

    Extraction reads the whole task text, so it is done here, before `submit_prepared` takes
    the write lock: an operator's ``jarvis cancel`` or the host's ingestion never waits on it.

    Args:
        data: The dispatch, as raw bytes, text or a parsed object.
        source_lane: The lane that dispatches.
        target_lane: The lane that is to run it.
        idempotency_key: The submitter's idempotency key (without one, the run id decides).
        universal_default: The workspace's ``[criteria] universal``: whether a dispatch that
            does not set ``universal_criteria`` gets the universal checklist.

    Returns:
        An `IntakeResult` (``invalid`` or ``unauthorized``) when it is refused, else the
        prepared dispatch for `submit_prepared`.
    """
    prepared = _prepare(data, source_lane, target_lane, idempotency_key)
    if isinstance(prepared, IntakeResult):
        return prepared
    doc, run_id, key, digest = prepared
    # Imported here: the extractor's patterns are only needed once a dispatch is accepted, and
    # every `jarvis` command (the console's start included) imports this module.
    from core.criteria.at_dispatch import dispatch_fields

    criteria, extraction = dispatch_fields(doc, workspace_universal=universal_default)
    return PreparedDispatch(
        doc, run_id, source_lane, target_lane, key, digest, criteria, extraction
    )


def submit_dispatch(
    store: RunStore,
    data: bytes | str | Mapping[str, Any],
    *,
    source_lane: str,
    target_lane: str,
    actor: str,
    idempotency_key: str | None = None,
    universal_default: bool = False,
) -> IntakeResult:
    """Turn a dispatch into a run, or say exactly why not.

    ``universal_default`` is the workspace's ``[criteria] universal``: whether a dispatch that
    does not set ``universal_criteria`` gets the universal checklist. Everything that needs no
    store, criteria extraction included, is done before the write transaction opens.
    """
    prepared = prepare_dispatch(
        data,
        source_lane=source_lane,
        target_lane=target_lane,
        idempotency_key=idempotency_key,
        universal_default=universal_default,
    )
    if isinstance(prepared, IntakeResult):
        return prepared
    with store.transaction() as tx:
        return submit_prepared(tx, prepared, actor=actor)


def submit_prepared(tx: RunTransaction, prepared: PreparedDispatch, *, actor: str) -> IntakeResult:
    """Decide a prepared dispatch's fate inside ``tx``: enqueue, retry, or refuse it."""
    return _decide(tx, prepared, actor)


def submit_in(
    tx: RunTransaction,
    data: bytes | str | Mapping[str, Any],
    *,
    source_lane: str,
    target_lane: str,
    actor: str,
    idempotency_key: str | None = None,
    universal_default: bool = False,
) -> IntakeResult:
    """`submit_dispatch` inside the caller's transaction.

    This extracts the criteria while the caller holds the write lock; a caller that can, calls
    `prepare_dispatch` before its transaction and `submit_prepared` inside it (the host does).
    """
    prepared = prepare_dispatch(
        data,
        source_lane=source_lane,
        target_lane=target_lane,
        idempotency_key=idempotency_key,
        universal_default=universal_default,
    )
    if isinstance(prepared, IntakeResult):
        return prepared
    return submit_prepared(tx, prepared, actor=actor)


def _decide(tx: RunTransaction, prepared: PreparedDispatch, actor: str) -> IntakeResult:
    doc, run_id, key, digest = prepared.doc, prepared.run_id, prepared.key, prepared.digest
    source, target = prepared.source_lane, prepared.target_lane
    if key:
        seen = tx.get_idempotency(key)
        if seen and seen["payload_hash"] == digest:
            return IntakeResult(
                "deduplicated",
                seen["run_id"],
                run=tx.get_run(seen["run_id"]),
                message=f"Already submitted with idempotency key {key!r}; run {seen['run_id']}.",
            )
        if seen:
            return IntakeResult(
                "conflict",
                run_id,
                [
                    FieldError(
                        "idempotency_key",
                        "idempotency_conflict",
                        f"The idempotency key {key!r} was used for a different payload "
                        f"(run {seen['run_id']}).",
                    )
                ],
                run=tx.get_run(seen["run_id"]),
                message="Idempotency conflict: same key, different payload.",
            )

    session_id = doc.get("session_id")
    if isinstance(session_id, str):
        used = tx.get_session(session_id)
        if used and used["lane"] != target and is_worker_lane(used["lane"]):
            message = (
                f"Session {session_id} was last used on {used['lane']} (run "
                f"{used['last_run_id']}); a session cannot move to {target}."
            )
            return IntakeResult(
                "invalid",
                run_id,
                [FieldError("session_id", "session_on_other_lane", message)],
                message=message,
            )

    from core.criteria.at_dispatch import extraction_note, log_extraction

    existing = tx.get_run(run_id)
    if existing is not None:
        state = RunState(existing["state"])
        if state not in RETRYABLE:
            allowed = " or ".join(s.value for s in allowed_from(Action.RETRY))
            message = (
                f"Run {run_id} already exists and is {state.value}; a duplicate is blocked "
                f"(a run id can be dispatched again only when it is {allowed})."
            )
            return IntakeResult(
                "duplicate",
                run_id,
                [FieldError("run_id", "duplicate_run", message)],
                run=existing,
                message=message,
            )
        values: dict[str, Any] = dict.fromkeys(RETRY_CLEARS)
        values.update(_run_fields(doc, source, target, key))
        values.update(prepared.criteria)
        values["retry_count"] = existing["retry_count"] + 1
        values["retry_fresh"] = 0  # a retry goes on from where the last attempt left its branch
        run = apply_move(
            tx, existing, Action.RETRY, actor, reason=f"re-dispatched by {source}",
            changes=values, via="dispatch",
        )  # fmt: skip
        log_extraction(tx, run_id, prepared.extraction, actor)
        outcome: Outcome = "retried"
        message = f"Run {run_id} retried (attempt {run['retry_count'] + 1})."
    else:
        fields = _run_fields(doc, source, target, key)
        run = tx.create_run(
            {"run_id": run_id, "state": RunState.QUEUED.value, **fields, **prepared.criteria},
            actor=actor,
            note=extraction_note(prepared.extraction),
        )
        tx.audit(run_id, actor=actor, action="dispatch", from_state=None, to_state="queued",
                 reason=f"dispatched by {source} to {target}")  # fmt: skip
        outcome = "enqueued"
        message = f"Run {run_id} queued on {target}."
    if key:
        tx.put_idempotency(key, digest, run_id)
    if isinstance(session_id, str):
        tx.put_session(session_id, target, run_id)
    return IntakeResult(outcome, run_id, run=run, message=message)
