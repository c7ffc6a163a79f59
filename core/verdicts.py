"""How a worker's attempt ends in the store: its completion gated, or its failure recorded
with an error.v1 fingerprint; and the end of its stderr kept with the run.

Both are one transaction each: the gate results (or failure record), the completion artifacts,
the state move, its audit row and its journal row commit together. The host decides which end
an attempt had (`core.host.outcomes`); the verdict is the engine's, like a dispatch's intake.
"""

from __future__ import annotations

import json
from typing import Any

from core.contracts.completion import evaluate_completion
from core.contracts.fingerprint import fingerprint
from core.contracts.secrets_scan import Redacted, redact
from core.criteria.run_criteria import needs_verification
from core.lifecycle import Action, RunState, stage_of
from core.moves import HOST, apply_move
from core.repos.claims import ClaimCheck
from core.repos.records import record_check
from core.run_secrets import flag_secrets
from core.store.api import Row, RunStore, RunTransaction
from core.text import as_a_terminal_leaves_it, inert

#: error.v1 classes and codes the host uses; the same failure across runs shares a fingerprint.
FAILURES: dict[str, tuple[str, str]] = {
    "crash": ("interaction_failed", "WORKER_CRASHED"),
    "no_output": ("timeout", "WORKER_NO_OUTPUT"),
    "hard_limit": ("timeout", "WORKER_HARD_LIMIT"),
    "start_failed": ("capability_rejected", "WORKER_START_FAILED"),
    "host_restart": ("interaction_failed", "HOST_RESTART"),
    "host_shutdown": ("interaction_failed", "HOST_SHUTDOWN"),
    "host_lost": ("interaction_failed", "HOST_LOST"),
    "budget_exceeded": ("cost_rejected", "BUDGET_EXCEEDED"),
}
_STEP = "worker"


def record_completion(
    store: RunStore,
    run_id: str,
    output: bytes,
    *,
    claims: ClaimCheck | None = None,
    unchecked_may_review: bool = True,
) -> Row | None:
    """Gate the worker's output and move the run to review_requested or failed_contract.

    Args:
        claims: the git gates (`core.repos.claims.check_claims`), computed beforehand: git is
            not run while the store's write lock is held.
        unchecked_may_review: whether a git gate that could not be checked (no repository)
            lets the run through, marked unverified.

    Returns the updated run, or None when the run was no longer running with its worker at work
    (cancelled meanwhile, or its output already gated).
    """
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None or stage_of(run) is not RunState.RUNNING:
            return None
        dispatch: dict[str, Any] = json.loads(run["dispatch_json"])
        verdict = evaluate_completion(dispatch, output)
        attempt = int(run["retry_count"]) + 1
        # Gated on what the worker wrote; stored masked, so every reader shows the same. The
        # kinds come from the whole output, where a key outside the stored fields still flags the
        # run, and from each field kept: the block is JSON, so an escape a worker put inside a key
        # is six characters of text in the output and a control only in the decoded field.
        kept = _Kept(redact(output.decode("utf-8", "replace")).kinds)
        for gate in verdict.gates:
            tx.add_gate_result(run_id, attempt, gate.name, gate.passed, kept.text(gate.detail))
        git_passed = True
        if claims is not None:
            for git_gate in claims.gates:
                lets_through = git_gate.passed or (
                    git_gate.status == "not_checked" and unchecked_may_review
                )
                git_passed = git_passed and lets_through
                tx.add_gate_result(
                    run_id,
                    attempt,
                    git_gate.name,
                    lets_through,
                    inert(kept.text(git_gate.detail)),
                    git_gate.status,
                )
            record_check(tx, run_id, attempt, str(claims.repo or ""), claims)
        completion = verdict.completion or {}
        files = completion.get("files_changed")
        artifacts = {
            "branch_name": kept.field(completion.get("branch")),
            "commit_sha": kept.field(completion.get("commit_sha")),
            "files_changed": json.dumps([kept.text(f) if isinstance(f, str) else f for f in files])
            if isinstance(files, list)
            else None,
            "test_summary": kept.field(completion.get("test_result")),
            "risk_summary": kept.field(completion.get("risk")),
            "pr_url": kept.field(completion.get("pr_url")),
            "pr_skipped_reason": kept.field(completion.get("pr_skipped_reason")),
            "effective_session_id": kept.field(completion.get("session_id")),
            "finished_at": tx.now,
            "worker_pid": None,
        }
        flag_secrets(tx, run_id, kept.kinds, source="completion", actor=HOST)
        failed = [(g.name, g.detail) for g in verdict.gates if not g.passed]
        if claims is not None:
            failed += [(g.name, g.detail) for g in claims.gates
                       if not g.passed and g.status == "failed"]  # fmt: skip
            if not git_passed and not unchecked_may_review:
                failed += [(g.name, g.detail) for g in claims.gates if g.status == "not_checked"]
            unchecked = [g.detail for g in claims.gates if g.status == "not_checked"]
            artifacts["unverified"] = (
                unchecked[0].removeprefix("not checked: ") if unchecked else None
            )
        passed = verdict.passed and git_passed
        if passed and needs_verification(run):
            # The gates say the output is well-formed; the criteria say whether what was asked
            # for was delivered. The run waits, still running, for the host to verify them.
            return apply_move(tx, run, Action.AWAIT_VERIFICATION, HOST, changes=artifacts)
        action = Action.PASS_GATES if passed else Action.FAIL_GATES
        if failed:
            artifacts["state_reason"] = gates_reason(failed, kept)
        return apply_move(
            tx,
            run,
            action,
            HOST,
            reason=artifacts.get("state_reason"),
            changes=artifacts,
        )


#: How a gate that was never looked at says so (`core.contracts.completion`,
#: `core.repos.claims`): every gate after an unparseable completion.
NOT_EVALUATED = "not evaluated:"


def gates_reason(failed: list[tuple[str, str]], kept: _Kept) -> str:
    """The run's reason from its failed gates (name, detail): those that were evaluated and
    failed, by name, and how many were not evaluated, since naming those as failed sent an
    operator looking at twelve gates for the one that was at fault."""
    evaluated = [(name, detail) for name, detail in failed if not detail.startswith(NOT_EVALUATED)]
    skipped = len(failed) - len(evaluated)
    if not skipped:
        return "completion gates failed: " + ", ".join(name for name, _ in evaluated)
    # Few fail when the rest could not be looked at: each is said with why.
    named = ", ".join(f"{name} ({kept.text(detail).rstrip('.')})" for name, detail in evaluated)
    return f"completion gates failed: {named}; the {skipped} other gates were not evaluated"


def record_failure(store: RunStore, run_id: str, kind: str, message: str) -> Row | None:
    """Fail a running run with a reason and an error.v1 failure record.

    Returns the updated run, or None when it was no longer running.
    """
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None or RunState(run["state"]) is not RunState.RUNNING:
            return None
        return fail_running(tx, run, kind, message)


def fail_running(
    tx: RunTransaction, run: Row, kind: str, message: str, *, keep_worker_pid: bool = False
) -> Row:
    """`record_failure` inside the caller's transaction, of a run it read there as running.

    ``keep_worker_pid``: the worker may still be alive on another machine (its host was lost):
    the pid is kept for that host, back under its name, to stop it (`Host.recover`).
    """
    error_class, error_code = FAILURES[kind]
    run_id = run["run_id"]
    tx.add_failure(
        run_id,
        int(run["retry_count"]) + 1,
        error_class=error_class,
        error_code=error_code,
        step_id=_STEP,
        message=message,
        fingerprint=fingerprint(error_class, error_code, _STEP),
    )
    return apply_move(
        tx,
        run,
        Action.FAIL,
        HOST,
        reason=message,
        changes={
            "state_reason": message,
            "finished_at": tx.now,
            **({} if keep_worker_pid else {"worker_pid": None}),
        },
    )


class _Kept:
    """A completion's texts as stored: masked, with every kind of secret found on the way."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = set(kinds)

    def text(self, value: str) -> str:
        masked = redact(value)
        self.kinds.update(masked.kinds)
        return masked.text

    def field(self, value: Any) -> str | None:
        """A text field as stored: masked, or None when absent or blank."""
        return self.text(value) if isinstance(value, str) and value.strip() else None


#: How much of a worker's stderr the store keeps per attempt: its last lines, as an operator
#: reads them in `jarvis show` or the console's run details (the whole log is in logs/).
STDERR_LINES = 40
STDERR_CHARS = 4_000
LAST_LINE_CHARS = 200


def stderr_tail(raw: bytes, *, cut: bool = False) -> Redacted:
    """The end of a worker's stderr as the store keeps it: bounded, secrets masked, inert.

    Colour and cursor codes are dropped, a line redrawn with carriage returns keeps what a
    terminal would show last, secrets are masked before the text is cut (a cut must not leave
    half a token unrecognised), and every other control character is escaped.

    Args:
        raw: the last bytes the worker wrote to stderr.
        cut: ``raw`` is the end of a longer stream (its first line may be partial).

    Returns:
        The text as kept, and the kinds of secret found in all of ``raw``.
    """
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
    lines = [as_a_terminal_leaves_it(line) for line in text.split("\n")]
    if cut and len(lines) > 1:
        lines = lines[1:]
    masked = redact("\n".join(lines).rstrip())
    lines = masked.text.split("\n")[-STDERR_LINES:]
    while len(lines) > 1 and sum(len(line) + 1 for line in lines) > STDERR_CHARS:
        lines = lines[1:]
    text = "\n".join(lines)[-STDERR_CHARS:]
    return Redacted(inert(text), masked.kinds)


def last_line(tail: str) -> str:
    """The last line of a stored stderr tail that says something, cut for a one-line reason."""
    for line in reversed(tail.split("\n")):
        if line.strip():
            line = line.strip()
            return line if len(line) <= LAST_LINE_CHARS else line[: LAST_LINE_CHARS - 1] + "…"
    return ""


def record_stderr(
    store: RunStore, run_id: str, attempt: int, raw: bytes, total: int, exit_code: int | None
) -> str:
    """Keep the end of an attempt's stderr with the run (once per attempt); returns it as kept.

    Nothing is stored when the worker wrote nothing to stderr.
    """
    kept = stderr_tail(raw, cut=total > len(raw))
    if not kept.text.strip():
        return ""
    with store.transaction() as tx:
        tx.keep_stderr(run_id, attempt, exit_code, kept.text, total)
        flag_secrets(tx, run_id, kept.kinds, source="stderr", actor=HOST)
    return kept.text
