"""The supervisor's scope and risk gate for OpenClaw worker results.

`gate_results` reads a worker's results folder (``report.md``, ``patch.diff``, ``status.json``,
optional ``commands.log`` and ``tests.log``), checks it against the request's scope and the
contract's safety rules, and returns a `RiskReport`: a risk level L0-L3, the merge mode that
follows from it, and every finding with the level it contributes.

Levels (`LEVELS`) and the level of every finding code (`FINDINGS`) are tables (`risk_tables`),
so the documentation and the code cannot disagree. The risk is the highest level among the
findings; no findings means L0.

Decisions where the contract is silent:

* Reading is defensive: artifacts are opened without following symlinks (a symlinked artifact is
  an L3 finding and is not read), must be regular files (a FIFO would hang the reader), and are
  read up to a cap (patch 20 MiB, report 1 MiB, logs 5 MiB, status 64 KiB). The results folder
  itself is whatever path the caller passes.
* A patch the parser cannot fully read is L3: the gate cannot vouch for a change whose effect is
  ambiguous. Its whole text is then also scanned for secrets.
* "Explicitly permitted" CI, auth or deployment change: an allowed glob matches the path and
  spells out the protected name (`PROTECTED_PATHS` lists each glob with its name), e.g.
  ``.github/workflows/**`` or ``src/auth/**``; ``**`` or ``src/**`` alone never permit one.
  Deny globs always win, and are matched ignoring case (a case-only variant must not slip past
  on a case-insensitive checkout); allowed globs match case exactly; protected, test and
  dependency tables ignore case.
* Secrets in any output (report, logs, added lines) are L3: "worker must never embed secrets"
  and the ``secrets-required`` stop condition both say the worker should have stopped.
* "Tests were not run" is read from report.md with English phrases (`TESTS_NOT_RUN`), since v0
  reports are written in the canonical language, normally ``en``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from core.contracts.diffparse import ParsedDiff, parse_diff
from core.contracts.errors import ROOT, FieldError, preview
from core.contracts.openclaw_request import load_request
from core.contracts.risk_artifacts import Collector, artifact_problem, load_status, read_artifact
from core.contracts.risk_checks import (
    add_secrets,
    check_files,
    check_limits,
    check_paths,
    compare_patches,
    is_test,
    says_tests_not_run,
    unsafe_path_reason,
)
from core.contracts.risk_tables import (
    DEPENDENCY_GLOBS,
    FINDINGS,
    LEVELS,
    LOG_CAP,
    PATCH_CAP,
    PROTECTED_PATHS,
    REPORT_CAP,
    STATUS_CAP,
    TEST_GLOBS,
    TESTS_NOT_RUN,
    Finding,
    Level,
    LevelInfo,
    MergeMode,
    RiskReport,
    StatusDoc,
)
from core.contracts.secrets_scan import scan_diff, scan_text

#: The gate's names, wherever they are defined, as callers have always imported them.
__all__ = [
    "DEPENDENCY_GLOBS",
    "FINDINGS",
    "LEVELS",
    "LOG_CAP",
    "PATCH_CAP",
    "PROTECTED_PATHS",
    "REPORT_CAP",
    "STATUS_CAP",
    "TESTS_NOT_RUN",
    "TEST_GLOBS",
    "Finding",
    "Level",
    "LevelInfo",
    "MergeMode",
    "RiskReport",
    "StatusDoc",
    "gate_results",
    "unsafe_path_reason",
]

_ARTIFACT_LOGS: Final = ("commands.log", "tests.log")


def gate_results(
    request: bytes | str | dict[str, Any],
    results_dir: Path,
    *,
    git_patch: str | None = None,
    git_patch_too_large: bool = False,
) -> RiskReport:
    """Gate a worker's results folder against its request.

    Args:
        request: The request as JSON bytes or text, or an already-parsed object.
        results_dir: The worker's results folder (``work/results/<task_id>/``).
        git_patch: The change as git shows it (merge base to the branch's head), when the
            supervisor can read the repository: the gate then judges it rather than the
            worker's own ``patch.diff``, which becomes optional and, where present, is compared
            (a difference is a finding).
        git_patch_too_large: git's diff was over `PATCH_CAP` and was not read whole.

    Returns:
        The verdict. Never raises on bad input: an invalid request, a missing or hostile
        folder, or a garbage patch all become findings (and, for structural problems, errors).
    """
    out = Collector()
    results_dir = Path(results_dir)  # tolerate a str from callers that skip the annotation
    req_report, model = load_request(request)
    if model is None:
        out.errors.extend(req_report.errors)
        first = req_report.errors[0].message if req_report.errors else "it is not valid"
        out.add(
            "request_invalid",
            f"The request is invalid ({len(req_report.errors)} error(s); first: {first}), so the "
            "scope cannot be checked.",
        )
    task_id = model.task_id if model is not None else None

    try:
        is_dir = results_dir.is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        out.add("results_missing", f"{preview(str(results_dir), 120)} is not a folder.")
        out.errors.append(FieldError(ROOT, "results_missing", "The results folder does not exist."))
        return _verdict(out, None)

    report_read = read_artifact(results_dir, "report.md", REPORT_CAP)
    patch_read = read_artifact(results_dir, "patch.diff", PATCH_CAP)
    artifact_problem(out, "report.md", report_read, REPORT_CAP, required=True)
    from_git = git_patch is not None or git_patch_too_large
    if not (from_git and patch_read.state == "missing"):
        artifact_problem(out, "patch.diff", patch_read, PATCH_CAP, required=not from_git)
    if git_patch_too_large:
        out.add(
            "artifact_too_large",
            f"The diff git shows is over the {PATCH_CAP:,}-byte cap, so it was not read.",
        )
    status = load_status(out, read_artifact(results_dir, "status.json", STATUS_CAP), task_id)

    report_text: str | None = None
    if report_read.state == "ok":
        try:
            report_text = report_read.data.decode("utf-8")
        except UnicodeDecodeError:
            report_text = report_read.data.decode("utf-8", "replace")
            out.add("report_not_utf8", "report.md is not UTF-8 text.", "report.md")
        if not report_text.strip():
            out.add("report_empty", "report.md is blank; it should say what changed.", "report.md")
        add_secrets(out, scan_text(report_text, "report.md"))

    for log in _ARTIFACT_LOGS:
        read = read_artifact(results_dir, log, LOG_CAP)
        if read.state == "missing":
            continue
        if read.state != "ok":
            artifact_problem(out, log, read, LOG_CAP, required=False)
            continue
        add_secrets(out, scan_text(read.data.decode("utf-8", "replace"), log))

    diff: ParsedDiff | None = None
    patch_text: str | None = None
    if git_patch is not None:
        patch_text = git_patch
        if patch_read.state == "ok":
            worker_diff = parse_diff(patch_read.data.decode("utf-8", "replace"))
            compare_patches(out, worker_diff, parse_diff(git_patch))
    elif patch_read.state == "ok" and not git_patch_too_large:
        patch_text = patch_read.data.decode("utf-8", "replace")
    if patch_text is not None:
        diff = parse_diff(patch_text)
        for problem in diff.problems[:5]:
            out.add(
                "patch_malformed",
                f"patch.diff line {problem.line}: {problem.message}",
                "patch.diff",
                problem.line,
            )
        add_secrets(out, scan_diff(diff))
        if diff.problems:
            add_secrets(out, scan_text(patch_text, "patch.diff"))
        empty = not diff.files and not diff.problems
        if status is not None and status.status == "blocked":
            reason = preview(status.reason, 200) if status.reason.strip() else "(no reason given)"
            if empty:
                out.add("worker_blocked", f"The worker stopped: {reason}.", "status.json")
            else:
                out.add(
                    "blocked_with_patch",
                    f"The worker reported blocked ({reason}) but still produced a patch: risky "
                    "edits after a stop condition.",
                    "patch.diff",
                )
        elif empty:
            out.add("patch_empty", "The patch changes nothing.", "patch.diff")
        if model is not None and diff.files:
            check_paths(out, diff, model)
            check_limits(out, diff, model)
            if "cannot-run-tests" in model.stop_conditions and report_text is not None:
                if says_tests_not_run(report_text):
                    out.add(
                        "tests_not_run",
                        "report.md says the tests were not run, and cannot-run-tests is a stop "
                        "condition.",
                        "report.md",
                    )
            if not any(is_test(f) for f in diff.files):
                out.add("no_tests_touched", "The patch changes no test file.")
        if diff.files:
            check_files(out, diff)
    return _verdict(out, diff)


def _verdict(out: Collector, diff: ParsedDiff | None) -> RiskReport:
    findings = out.done()
    risk = max((f.level for f in findings), default=Level.L0)
    return RiskReport(
        risk=risk,
        files_changed=diff.files_changed if diff is not None else 0,
        additions=diff.additions if diff is not None else 0,
        deletions=diff.deletions if diff is not None else 0,
        findings=tuple(findings),
        errors=tuple(out.errors),
    )
