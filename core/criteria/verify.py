"""Verify acceptance criteria mechanically in a repository checkout.

`verify_criterion` checks one criterion and `verify_all` a list; neither raises. Every problem —
a malformed criterion, a path that leaves the repository, a bad pattern, a missing program — is
an outcome with a status and an output a person can read:

* ``passed`` / ``failed``: the check ran and the repository does or does not satisfy it. A path
  that is absolute, climbs out with ``..`` or resolves outside through a symlink is ``failed``
  with a ``refused:`` output: the criterion cannot be satisfied safely.
* ``timed_out``: the command ran past its limit and its whole process group was killed.
* ``needs_approval``: the command is neither allowlisted nor approved, so it was not run
  (`core.criteria.allowlist` says what runs unattended and why).
* ``error``: the check could not be made (an invalid criterion, a pattern that does not compile,
  a missing program, an unreadable file).

File checks read at most `READ_LIMIT` bytes. Every pattern is matched through
`core.contracts.patterns.search`, in a child process with a time limit: a pattern that
backtracks without end is ``timed_out`` after `core.contracts.patterns.SEARCH_TIMEOUT_S`, and
the host that asked never freezes. Command output is cut to the policy's ``output_cap`` (the end
is kept) and secrets in it are masked. A ``test_pass`` pattern is searched in the last
``output_cap`` + `PATTERN_MARGIN` bytes of output.

A `Supervision` (the host's) can cancel a verification: the running command or search is
stopped at once and the `Verification` says ``cancelled``; its outcomes decide nothing.

Paths containing ``{workspace}`` are taken literally: filling placeholders in belongs to whoever
builds the criteria.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import signal
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from threading import Event
from typing import Any, Final, Literal, NamedTuple

from pydantic import BaseModel, TypeAdapter, ValidationError

from core.contracts.criteria import (
    BacklogUpdated,
    ChangelogUpdated,
    CommandSuccess,
    ContentMatch,
    Criterion,
    FileExists,
    NoLintErrors,
    TestPass,
    VerificationResults,
)
from core.contracts.names import relative_path_problem
from core.contracts.patterns import PatternSearch
from core.contracts.patterns import search as search_pattern
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.secrets_scan import mask_secrets
from core.criteria.allowlist import (
    DEFAULT_POLICY,
    VerifyPolicy,
    argv_of,
    command_key,
    decide,
)
from core.criteria.runner import RunResult, Supervision, child_env, render_tail, run_command

__all__ = [
    "DEFAULT_POLICY",
    "CriterionOutcome",
    "Supervision",
    "Status",
    "Verification",
    "VerifyPolicy",
    "command_key",
    "verify_all",
    "verify_criterion",
]

READ_LIMIT: Final = 2 * 1024 * 1024
"""Bytes of a file that content checks read; the rest is not searched."""
PATTERN_MARGIN: Final = 8192
"""Output kept beyond the cap: room for a pattern to match and for a secret that straddles the
cut to be seen whole (an RSA private key block is about 3 KB) before the text is cut."""
_EXCERPT: Final = 200

Status = Literal["passed", "failed", "timed_out", "error", "needs_approval", "not_checked"]
#: Why a command criterion was not run: nothing in the checkout to run it on.
NO_REPOSITORY = "not checked: the run's checkout is empty (no repository, no files)"
CommandCriterion = TestPass | CommandSuccess | NoLintErrors
FileCriterion = ContentMatch | ChangelogUpdated | BacklogUpdated
Model = FileExists | FileCriterion | CommandCriterion
_ADAPTER: Final[TypeAdapter[Model]] = TypeAdapter(Criterion)


@dataclass(frozen=True)
class CriterionOutcome:
    """The verdict on one criterion."""

    criterion: dict[str, Any]
    """The criterion as given (a model as the fields that were set)."""
    status: Status
    passed: bool
    output: str
    """What a person needs to see: the reason, and a command's (masked) output tail."""
    duration_ms: int
    command_key: str | None = None
    """For command criteria, the key an operator approves it by (`command_key`)."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        return moment.isoformat(timespec="milliseconds")
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Verification:
    """The outcomes of verifying a list of criteria."""

    outcomes: list[CriterionOutcome]
    pending_approval: list[str] = field(default_factory=list)
    """Command keys that wait for an operator, each once, in criterion order."""
    verified_at: datetime = field(default_factory=_utc_now)
    cancelled: bool = False
    """Stopped before the end (the host is shutting down): the outcomes decide nothing."""

    unchecked_may_pass: bool = True
    """Whether criteria not checked (no repository) let the verification pass."""

    @property
    def unchecked(self) -> list[CriterionOutcome]:
        return [o for o in self.outcomes if o.status == "not_checked"]

    @property
    def passed(self) -> bool:
        """Every criterion passed (or, by the policy, was not checked) and nothing waits for
        approval. A criterion not checked is never itself reported as passed."""
        return not self.pending_approval and all(
            o.passed or (o.status == "not_checked" and self.unchecked_may_pass)
            for o in self.outcomes
        )

    def results(self, verified_at: datetime | None = None) -> dict[str, Any]:
        """The dispatch record's ``verification_results`` (validated, JSON-ready)."""
        doc: dict[str, Any] = {
            "verified_at": _timestamp(verified_at or self.verified_at),
            "passed": self.passed,
            "criteria_results": [
                {
                    "criterion": o.criterion,
                    "passed": o.passed,
                    "output": o.output,
                    "duration_ms": o.duration_ms,
                    **({"not_checked": True} if o.status == "not_checked" else {}),
                }
                for o in self.outcomes
            ],
        }
        VerificationResults.model_validate(doc)
        return doc


class _Check(NamedTuple):
    status: Status
    output: str
    key: str | None = None


def _shown(criterion: object) -> dict[str, Any]:
    if isinstance(criterion, BaseModel):
        return criterion.model_dump(mode="json", exclude_unset=True)
    if isinstance(criterion, Mapping):
        return copy.deepcopy(dict(criterion))
    return {"invalid": repr(criterion)[:_EXCERPT]}


def _parse(criterion: object) -> Model | _Check:
    """The criterion as a model, or the outcome that says why it is not one."""
    if isinstance(criterion, Model):
        return criterion
    if not isinstance(criterion, Mapping):
        return _Check("error", f"invalid criterion: expected an object, got {type(criterion)}.")
    document = dict(criterion)
    try:
        return _ADAPTER.validate_python(document)
    except ValidationError as exc:
        problems = from_validation_error(exc, document)
    messages = "; ".join(p.message for p in problems)
    if all(p.code == "unsafe_path" for p in problems):
        return _Check("failed", f"refused: {messages}")
    return _Check("error", f"invalid criterion: {messages}")


def _inside(repo: Path, relative: str) -> Path | _Check:
    """``relative`` resolved (symlinks followed) inside ``repo``, or why it is refused."""
    problem = relative_path_problem(relative)
    if problem is not None:
        return _Check("failed", f"refused: {relative!r}: {problem[1]}")
    try:
        target = (repo / relative).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
        return _Check("failed", f"refused: {relative!r} cannot be resolved: {exc}")
    if not target.is_relative_to(repo):
        return _Check("failed", f"refused: {relative!r} resolves outside the repository.")
    return target


def _verify_file_exists(criterion: FileExists, repo: Path) -> _Check:
    target = _inside(repo, criterion.path)
    if isinstance(target, _Check):
        return target
    try:
        info = target.stat()
    except FileNotFoundError:
        return _Check("failed", f"missing: {criterion.path}")
    except OSError as exc:
        return _Check("error", f"cannot check {criterion.path}: {exc.strerror or exc}")
    kind = "directory" if stat.S_ISDIR(info.st_mode) else "file"
    return _Check("passed", f"{kind} exists: {criterion.path}")


def _read_capped(target: Path) -> tuple[bytes, bool]:
    """Up to `READ_LIMIT` bytes of a regular file, and whether there was more.

    Opened without following a final symlink (one swapped in since the path was resolved) and
    without blocking (a FIFO would otherwise hang the verifier); anything but a regular file is
    refused after the open, so the check and the read are about the same file.
    """
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(0, "not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= READ_LIMIT:
            chunk = os.read(fd, min(1 << 20, READ_LIMIT + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data[:READ_LIMIT], len(data) > READ_LIMIT


def _unmatched(found: PatternSearch) -> _Check | None:
    """The outcome of a search that did not simply find or miss, else None."""
    if found.status == "timed_out":
        return _Check("timed_out", found.detail)
    if found.status in ("error", "cancelled"):
        return _Check("error", found.detail)
    return None


def _matched_line(text: str, at: int) -> tuple[int, str]:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end >= 0 else len(text)].strip()
    return text.count("\n", 0, at) + 1, mask_secrets(line)[:_EXCERPT]


def _verify_content(
    criterion: FileCriterion, repo: Path, timeout_s: float, cancel: Event | None
) -> _Check:
    target = _inside(repo, criterion.path)
    if isinstance(target, _Check):
        return target
    try:
        data, cut = _read_capped(target)
    except FileNotFoundError:
        return _Check("failed", f"missing: {criterion.path}")
    except IsADirectoryError:
        return _Check("failed", f"not a regular file: {criterion.path}")
    except OSError as exc:
        return _Check("error", f"cannot read {criterion.path}: {exc.strerror or exc}")
    text = data.decode("utf-8", errors="replace")
    note = f" (searched the first {READ_LIMIT} bytes only)" if cut else ""
    found = search_pattern(criterion.pattern, text, timeout_s=timeout_s, cancel=cancel)
    if (other := _unmatched(found)) is not None:
        return other
    if found.span is None:
        return _Check(
            "failed", f"pattern {criterion.pattern!r} not found in {criterion.path}{note}"
        )
    number, line = _matched_line(text, found.span[0])
    return _Check("passed", f"pattern found in {criterion.path} at line {number}: {line}")


def _exit_text(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _judge(
    criterion: CommandCriterion,
    run: RunResult,
    timeout_s: float,
    policy: VerifyPolicy,
    cancel: Event | None,
) -> _Check:
    cap = policy.output_cap
    shown = render_tail(run, cap)
    if run.timed_out or run.returncode is None:
        limit = f"timed out after {timeout_s:g} s; process group killed"
        return _Check("timed_out", f"{limit}\n{shown}" if shown else limit)
    if run.returncode != 0:
        return _Check("failed", f"{_exit_text(run.returncode)}\n{shown}")
    if isinstance(criterion, TestPass) and criterion.pattern is not None:
        # The pattern sees the unmasked window, so masking cannot hide the text it looks for.
        output = run.tail.decode("utf-8", errors="replace")
        found = search_pattern(
            criterion.pattern, output, timeout_s=policy.pattern_timeout_s, cancel=cancel
        )
        if (other := _unmatched(found)) is not None:
            return other._replace(output=f"{other.output}\n{shown}")
        if found.span is None:
            return _Check(
                "failed", f"exit status 0, but output does not match {criterion.pattern!r}\n{shown}"
            )
    return _Check("passed", shown or "exit status 0 (no output)")


def _timeout_of(criterion: CommandCriterion, policy: VerifyPolicy) -> float:
    if "timeout_s" in criterion.model_fields_set:
        return float(criterion.timeout_s)
    return policy.timeout_s


def _verify_command(
    criterion: CommandCriterion, repo: Path, policy: VerifyPolicy, watch: Supervision | None
) -> _Check:
    try:
        argv = argv_of(criterion.command, shell=criterion.shell)
    except ValueError as exc:
        return _Check("error", f"cannot split the command into arguments: {exc}")
    if not argv or not argv[0].strip():
        return _Check("error", "invalid criterion: the command is empty.")
    key = json.dumps(argv)
    cwd = _inside(repo, criterion.cwd)
    if isinstance(cwd, _Check):
        return cwd._replace(key=key)
    if not cwd.is_dir():
        return _Check("failed", f"cwd is not a directory: {criterion.cwd}", key)
    shown_command = mask_secrets(shlex.join(argv))
    env = child_env(os.environ, policy.env_passthrough, checkout=repo)
    decision = decide(argv, policy, shell=criterion.shell, search_path=env.get("PATH", ""),
                      cwd=cwd, checkout=repo)  # fmt: skip
    if decision.verdict == "needs_approval":
        return _Check("needs_approval", f"needs approval: `{shown_command}` {decision.reason}", key)
    if decision.verdict == "missing":
        return _Check("error", f"command not found: {decision.reason}", key)
    timeout_s = _timeout_of(criterion, policy)
    try:
        run = run_command(
            argv,
            cwd=cwd,
            env=env,
            timeout_s=timeout_s,
            keep_bytes=policy.output_cap + PATTERN_MARGIN,
            executable=decision.executable,
            supervision=watch,
        )
    except FileNotFoundError:
        return _Check("error", f"command not found: {argv[0]!r} (not on PATH or not a file)", key)
    except PermissionError:
        return _Check("error", f"not executable: {argv[0]!r}", key)
    except OSError as exc:
        return _Check("error", f"cannot start `{shown_command}`: {exc.strerror or exc}", key)
    if run.cancelled:
        return _Check("error", "stopped: the verification was cancelled", key)
    cancel = watch.cancel if watch else None
    return _judge(criterion, run, timeout_s, policy, cancel)._replace(key=key)


def _dispatch(
    criterion: Model, repo: Path, policy: VerifyPolicy, watch: Supervision | None
) -> _Check:
    if isinstance(criterion, FileExists):
        return _verify_file_exists(criterion, repo)
    if isinstance(criterion, FileCriterion):
        cancel = watch.cancel if watch else None
        return _verify_content(criterion, repo, policy.pattern_timeout_s, cancel)
    return _verify_command(criterion, repo, policy, watch)


def _check(
    criterion: object, repo: Path, policy: VerifyPolicy, watch: Supervision | None
) -> _Check:
    model = _parse(criterion)
    if isinstance(model, _Check):
        return model
    try:
        root = repo.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        return _Check("error", f"repository not found: {repo} ({exc})")
    if not root.is_dir():
        return _Check("error", f"repository is not a directory: {repo}")
    return _dispatch(model, root, policy, watch)


def verify_criterion(
    criterion: Mapping[str, Any] | Model,
    repo: Path,
    policy: VerifyPolicy = DEFAULT_POLICY,
    supervision: Supervision | None = None,
) -> CriterionOutcome:
    """Check one criterion against the checkout at ``repo``. Never raises.

    Args:
        criterion: The criterion, as a document or a model.
        repo: The checkout.
        policy: What may run unattended, time limits, output size.
        supervision: The host's watch over commands and searches (cancel, markers, records).
    """
    started = time.monotonic()
    try:
        result = _check(criterion, repo, policy, supervision)
    except Exception as exc:  # a verifier bug must cost one criterion, not the whole verification
        result = _Check("error", f"internal error: {type(exc).__name__}: {exc}")
    elapsed_ms = int((time.monotonic() - started) * 1000)
    return CriterionOutcome(
        criterion=_shown(criterion),
        status=result.status,
        passed=result.status == "passed",
        output=result.output,
        duration_ms=elapsed_ms,
        command_key=result.key,
    )


def _not_run(criterion: Mapping[str, Any] | Model) -> CriterionOutcome | None:
    """The outcome of a command criterion in a checkout with no repository: not run."""
    model = _parse(criterion)
    if not isinstance(model, CommandCriterion):
        return None
    return CriterionOutcome(_shown(criterion), "not_checked", False, NO_REPOSITORY, 0)


def verify_all(
    criteria: Sequence[Mapping[str, Any] | Model],
    repo: Path,
    policy: VerifyPolicy = DEFAULT_POLICY,
    now: Callable[[], datetime] = _utc_now,
    supervision: Supervision | None = None,
    *,
    has_repository: bool = True,
) -> Verification:
    """Check every criterion in order; the result says which wait for approval.

    Args:
        has_repository: whether ``repo`` holds anything to run commands on (a repository, or
            files a worker left); when it does not, the commands of command criteria (tests,
            lint, builds) are not run in an empty folder: they are "not checked".

    When ``supervision`` is cancelled, stops at once and returns a `Verification` marked
    ``cancelled`` (the criterion that was stopped is not judged).
    """
    cancel = supervision.cancel if supervision else None
    outcomes: list[CriterionOutcome] = []

    def stopped() -> Verification | None:
        cancelled = cancel is not None and cancel.is_set()
        return Verification(outcomes, verified_at=now(), cancelled=True) if cancelled else None

    for criterion in criteria:
        if ended := stopped():
            return ended
        not_run = None if has_repository else _not_run(criterion)
        outcome = not_run or verify_criterion(criterion, repo, policy, supervision)
        if ended := stopped():  # during it: what it found is not judged
            return ended
        outcomes.append(outcome)
    pending: list[str] = []
    for outcome in outcomes:
        key = outcome.command_key
        if outcome.status == "needs_approval" and key is not None and key not in pending:
            pending.append(key)
    return Verification(
        outcomes=outcomes,
        pending_approval=pending,
        verified_at=now(),
        unchecked_may_pass=policy.unchecked_may_pass,
    )
