"""The supervisor's scope and risk gate for OpenClaw worker results.

`gate_results` reads a worker's results folder (``report.md``, ``patch.diff``, ``status.json``,
optional ``commands.log`` and ``tests.log``), checks it against the request's scope and the
contract's safety rules, and returns a `RiskReport`: a risk level L0-L3, the merge mode that
follows from it, and every finding with the level it contributes.

Levels (`LEVELS`) and the level of every finding code (`FINDINGS`) are tables in this module,
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

import os
import re
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from core.contracts import jsondoc
from core.contracts.diffparse import FileDiff, ParsedDiff, parse_diff
from core.contracts.errors import ROOT, FieldError, join_path, preview
from core.contracts.openclaw_request import GlobSet, OpenClawRequest, load_request
from core.contracts.pydantic_errors import from_validation_error
from core.contracts.secrets_scan import SecretFinding, scan_diff, scan_text


class Level(IntEnum):
    """Risk levels, ordered so that the verdict is the maximum."""

    L0 = 0
    L1 = 1
    L2 = 2
    L3 = 3


MergeMode = Literal["auto-merge", "recommend-only", "blocked"]


@dataclass(frozen=True, slots=True)
class LevelInfo:
    """What a level means and what the supervisor does with it."""

    merge_mode: MergeMode
    meaning: str


#: The levels. The risk of a result is the highest level among its findings.
LEVELS: Final[Mapping[Level, LevelInfo]] = {
    Level.L0: LevelInfo(
        "auto-merge", "In scope, within limits, nothing found: the patch may merge unattended."
    ),
    Level.L1: LevelInfo(
        "recommend-only",
        "Small concerns (deletions, renames, dependency or mode changes, no tests touched, a "
        "blocked worker): a person should glance at it before merging.",
    ),
    Level.L2: LevelInfo(
        "recommend-only",
        "Scope or limits exceeded, or something the gate cannot check automatically (binary "
        "files, tests not run, no status.json): a person must review it.",
    ),
    Level.L3: LevelInfo(
        "blocked",
        "Safety violation (secrets, denied or protected paths, escaping paths, risky edits after "
        "a stop condition, unreadable or invalid inputs): it must not merge.",
    ),
}

#: Every finding code, its level, and a one-line description (the documentation's table).
FINDINGS: Final[Mapping[str, tuple[Level, str]]] = {
    # Inputs
    "request_invalid": (Level.L3, "The request failed validation, so scope cannot be checked."),
    "results_missing": (Level.L3, "The results folder does not exist or is not a folder."),
    "report_missing": (Level.L3, "report.md is missing."),
    "patch_missing": (Level.L3, "patch.diff is missing."),
    "artifact_symlink": (Level.L3, "An artifact is a symlink; it is not followed or read."),
    "artifact_not_file": (Level.L3, "An artifact is not a regular file (folder, FIFO, device)."),
    "artifact_too_large": (Level.L3, "report.md or patch.diff is over its size cap."),
    "artifact_unreadable": (Level.L3, "An artifact could not be read."),
    "status_invalid": (Level.L3, "status.json is not a valid status document."),
    "status_task_mismatch": (Level.L3, "status.json names a different task_id."),
    "patch_malformed": (Level.L3, "patch.diff is not a well-formed diff."),
    "log_too_large": (Level.L2, "A log is over its size cap and was not scanned."),
    "status_missing": (Level.L2, "status.json is missing."),
    "report_not_utf8": (Level.L2, "report.md is not UTF-8 text."),
    "report_empty": (Level.L1, "report.md is blank."),
    "patch_empty": (Level.L1, "status is ok but the patch changes nothing."),
    "patch_differs": (
        Level.L2,
        "The worker's patch.diff differs from the diff git shows (the gate judged git's).",
    ),
    # Stop conditions
    "blocked_with_patch": (
        Level.L3,
        "status is blocked but the patch is not empty: risky edits after a stop condition.",
    ),
    "worker_blocked": (Level.L1, "The worker stopped (status blocked) without changing anything."),
    "security_sensitive_change": (
        Level.L3,
        "security-sensitive is a stop condition and the patch touches auth/security paths.",
    ),
    "tests_not_run": (
        Level.L2,
        "cannot-run-tests is a stop condition and report.md says tests were not run.",
    ),
    # Paths and scope
    "unsafe_path": (Level.L3, "A changed path is absolute, has '..', is inside .git, or is odd."),
    "path_denied": (Level.L3, "A changed path matches a deny glob."),
    "protected_path": (
        Level.L3,
        "A CI, auth/security or deployment path changed without an allowed glob naming it.",
    ),
    "path_out_of_scope": (Level.L2, "A changed path matches no allowed glob."),
    "too_many_files": (Level.L2, "More files changed than scope.max_files_changed."),
    "too_many_additions": (Level.L2, "More added lines than scope.max_additions."),
    "too_many_deletions": (Level.L2, "More deleted lines than scope.max_deletions."),
    "binary_file": (Level.L2, "A binary file changed; its content cannot be checked."),
    "special_file": (Level.L2, "A symlink or submodule entry (mode 120000/160000) changed."),
    "file_deleted": (Level.L1, "A file is deleted."),
    "file_renamed": (Level.L1, "A file is renamed."),
    "mode_changed": (Level.L1, "A file's mode changes (e.g. it becomes executable)."),
    "dependency_change": (Level.L1, "A dependency manifest or lockfile changed."),
    "no_tests_touched": (Level.L1, "The patch changes no test file."),
    # Secrets (codes come from core.contracts.secrets_scan)
    "secret_private_key": (Level.L3, "A private key block in the output."),
    "secret_gcp_service_account": (Level.L3, "A GCP service-account private key."),
    "secret_aws_key": (Level.L3, "An AWS access key id or secret access key."),
    "secret_google_api_key": (Level.L3, "A Google API key (AIza...)."),
    "secret_forge_token": (Level.L3, "A GitHub or GitLab token."),
    "secret_slack_token": (Level.L3, "A Slack token (xox?-)."),
    "secret_stripe_key": (Level.L3, "A Stripe live secret key."),
    "secret_ai_key": (Level.L3, "An Anthropic, OpenAI or other AI-provider API key."),
    "secret_bearer_token": (Level.L3, "A bearer token or JSON web token."),
    "secret_assignment": (Level.L3, "A password/secret/token/api_key assigned a literal value."),
}

#: Byte caps per artifact.
PATCH_CAP: Final = 20 * 1024 * 1024
REPORT_CAP: Final = 1024 * 1024
LOG_CAP: Final = 5 * 1024 * 1024
STATUS_CAP: Final = 64 * 1024

_PER_CODE_LIMIT: Final = 25
"""Findings kept per code; the rest are summarised in one more finding."""

# (category, glob, name). A protected path is explicitly permitted when an allowed glob that
# matches it contains the name (ignoring case).
PROTECTED_PATHS: Final[tuple[tuple[str, str, str], ...]] = (
    ("ci", ".github/workflows/**", ".github/workflows"),
    ("ci", ".github/actions/**", ".github/actions"),
    ("ci", ".github/dependabot.yml", ".github/dependabot"),
    ("ci", ".gitlab-ci.yml", ".gitlab-ci"),
    ("ci", ".gitlab/**", ".gitlab"),
    ("ci", ".circleci/**", ".circleci"),
    ("ci", ".travis.yml", ".travis"),
    ("ci", "**/Jenkinsfile", "jenkinsfile"),
    ("ci", "azure-pipelines*.yml", "azure-pipelines"),
    ("ci", ".azure-pipelines/**", "azure-pipelines"),
    ("ci", ".buildkite/**", ".buildkite"),
    ("ci", "bitbucket-pipelines.yml", "bitbucket-pipelines"),
    ("ci", ".drone.yml", ".drone"),
    ("ci", "appveyor.yml", "appveyor"),
    ("ci", ".appveyor.yml", "appveyor"),
    ("auth", "**/auth/**", "auth"),
    ("auth", "**/authn/**", "auth"),
    ("auth", "**/authz/**", "auth"),
    ("auth", "**/authentication/**", "auth"),
    ("auth", "**/authorization/**", "auth"),
    ("auth", "**/oauth/**", "auth"),
    ("auth", "**/auth.*", "auth"),
    ("auth", "**/authentication.*", "auth"),
    ("auth", "**/authorization.*", "auth"),
    ("auth", "**/oauth.*", "auth"),
    ("auth", "**/sso/**", "sso"),
    ("auth", "**/security/**", "security"),
    ("auth", "**/security.*", "security"),
    ("auth", "**/CODEOWNERS", "codeowners"),
    ("deployment", "**/Dockerfile", "dockerfile"),
    ("deployment", "**/Dockerfile.*", "dockerfile"),
    ("deployment", "**/*.dockerfile", "dockerfile"),
    ("deployment", "**/docker-compose*.yml", "compose"),
    ("deployment", "**/docker-compose*.yaml", "compose"),
    ("deployment", "**/compose.yml", "compose"),
    ("deployment", "**/compose.yaml", "compose"),
    ("deployment", "**/deploy/**", "deploy"),
    ("deployment", "**/deployment/**", "deploy"),
    ("deployment", "**/deployments/**", "deploy"),
    ("deployment", "**/k8s/**", "k8s"),
    ("deployment", "**/kubernetes/**", "kubernetes"),
    ("deployment", "**/helm/**", "helm"),
    ("deployment", "**/Chart.yaml", "chart"),
    ("deployment", "**/terraform/**", "terraform"),
    ("deployment", "**/*.tf", ".tf"),
    ("deployment", "**/*.tfvars", ".tf"),
    ("deployment", "**/ansible/**", "ansible"),
    ("deployment", "Procfile", "procfile"),
    ("deployment", "fly.toml", "fly.toml"),
    ("deployment", "vercel.json", "vercel"),
    ("deployment", "netlify.toml", "netlify"),
    ("deployment", "app.yaml", "app.yaml"),
    ("deployment", "render.yaml", "render.yaml"),
    ("deployment", "serverless.yml", "serverless"),
    ("deployment", "serverless.yaml", "serverless"),
)

#: A path matching any of these counts as a test file.
TEST_GLOBS: Final = (
    "**/test/**",
    "**/tests/**",
    "**/__tests__/**",
    "**/spec/**",
    "**/specs/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
    "**/*_test.go",
    "**/*.test.*",
    "**/*.spec.*",
    "**/*_spec.rb",
    "**/*Test.java",
    "**/*Tests.java",
    "**/*Test.kt",
    "**/*Tests.cs",
)

#: Dependency manifests and lockfiles.
DEPENDENCY_GLOBS: Final = (
    "**/package.json",
    "**/package-lock.json",
    "**/npm-shrinkwrap.json",
    "**/pnpm-lock.yaml",
    "**/pyproject.toml",
    "**/requirements*.txt",
    "**/requirements/*.txt",
    "**/setup.py",
    "**/setup.cfg",
    "**/Pipfile",
    "**/Cargo.toml",
    "**/go.mod",
    "**/go.sum",
    "**/Gemfile",
    "**/*.gemspec",
    "**/composer.json",
    "**/pom.xml",
    "**/build.gradle",
    "**/build.gradle.kts",
    "**/*.lock",
)

#: English phrases in report.md that mean the tests were not run.
TESTS_NOT_RUN: Final = re.compile(
    r"(?i)\b(?:did\s+not|didn't|could\s+not|couldn't|cannot|can't|can\s+not|unable\s+to|"
    r"(?:was|were)\s+not\s+able\s+to)\s+(?:run|execute)\s+(?:the\s+|any\s+)?"
    r"(?:[\w-]+\s+)?tests?\b"
    r"|\btests?\s+(?:were|was|are|is)\s+not\s+(?:run|executed)\b"
    r"|\btests?\s+(?:have|has)\s+not\s+been\s+(?:run|executed)\b"
    r"|\btests?\s+(?:were|was)\s+skipped\b"
    r"|\bno\s+tests?\s+(?:were\s+|was\s+)?(?:run|executed)\b"
    r"|\btests?(?:\s+run)?\s*:\s*(?:not\s+run|skipped|none)\b"
)

_SPECIAL_MODES: Final = frozenset({"120000", "160000"})
_DRIVE = re.compile(r"[A-Za-z]:")
_ARTIFACT_LOGS: Final = ("commands.log", "tests.log")


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason for the verdict."""

    code: str
    """A key of `FINDINGS` (stable snake_case)."""
    level: Level
    """The level this finding contributes."""
    message: str
    """One sentence for people; never contains a secret."""
    path: str | None = None
    """The file concerned, when there is one."""
    line: int | None = None
    """The line in that file, when the finding is about one line."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "level": self.level.name, "message": self.message}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        return out


@dataclass(frozen=True, slots=True)
class RiskReport:
    """The gate's verdict on one results folder."""

    risk: Level
    """Highest level among the findings (L0 when there are none)."""
    files_changed: int
    """Files in the patch."""
    additions: int
    """Added lines in the patch."""
    deletions: int
    """Deleted lines in the patch."""
    findings: tuple[Finding, ...]
    """Every finding, highest level first."""
    errors: tuple[FieldError, ...] = ()
    """Request validation errors and structural errors of the results folder."""

    @property
    def merge_mode(self) -> MergeMode:
        """auto-merge for L0, recommend-only for L1 and L2, blocked for L3."""
        return LEVELS[self.risk].merge_mode

    def to_json(self) -> dict[str, Any]:
        return {
            "risk": self.risk.name,
            "merge_mode": self.merge_mode,
            "files_changed": self.files_changed,
            "additions": self.additions,
            "deletions": self.deletions,
            "findings": [f.to_json() for f in self.findings],
            "errors": [e.to_json() for e in self.errors],
        }


class StatusDoc(BaseModel):
    """``status.json``: the worker's one-line outcome."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    task_id: str
    """Must equal the request's task_id."""
    status: Literal["ok", "blocked"]
    """ok, or blocked when a stop condition triggered."""
    reason: str
    """Why; expected to be non-empty when blocked."""


# --------------------------------------------------------------------------------------------
# Collecting findings
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Collector:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    seen: set[tuple[str, str | None, int | None]] = field(default_factory=set)

    def add(
        self, code: str, message: str, path: str | None = None, line: int | None = None
    ) -> None:
        key = (code, path, line)
        if path is not None and key in self.seen:
            return
        self.seen.add(key)
        self.counts[code] += 1
        if self.counts[code] <= _PER_CODE_LIMIT:
            self.findings.append(Finding(code, FINDINGS[code][0], message, path, line))

    def done(self) -> list[Finding]:
        out = list(self.findings)
        for code, count in self.counts.items():
            if count > _PER_CODE_LIMIT:
                extra = count - _PER_CODE_LIMIT
                out.append(Finding(code, FINDINGS[code][0], f"…and {extra:,} more like this."))
        out.sort(key=lambda f: -f.level)  # stable: discovery order within a level
        return out


# --------------------------------------------------------------------------------------------
# Reading artifacts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Read:
    state: Literal["ok", "missing", "symlink", "not_file", "too_large", "unreadable"]
    data: bytes = b""
    size: int = 0


def _read_artifact(folder: Path, name: str, cap: int) -> _Read:
    path = folder / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _Read("missing")
    except OSError:
        return _Read("unreadable")
    if stat.S_ISLNK(st.st_mode):
        return _Read("symlink")
    if not stat.S_ISREG(st.st_mode):
        return _Read("not_file")
    if st.st_size > cap:
        return _Read("too_large", size=st.st_size)
    # O_NOFOLLOW closes the gap between lstat and open; O_NONBLOCK keeps a FIFO swapped in
    # meanwhile from hanging the open.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return _Read("unreadable")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return _Read("not_file")
        chunks: list[bytes] = []
        remaining = cap + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError:
        return _Read("unreadable")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        return _Read("too_large", size=len(data))
    return _Read("ok", data=data, size=len(data))


def _artifact_problem(out: _Collector, name: str, read: _Read, cap: int, *, required: bool) -> None:
    """Turn a failed read into a finding (and an error, for required artifacts)."""
    if read.state == "ok":
        return
    if read.state == "missing":
        code = "report_missing" if name == "report.md" else "patch_missing"
        out.add(code, f"{name} is missing; the contract requires it.", name)
        out.errors.append(FieldError(name, "required", f"{name} is required."))
        return
    if read.state == "symlink":
        out.add("artifact_symlink", f"{name} is a symlink; it was not followed or read.", name)
        code = "symlink"
    elif read.state == "not_file":
        out.add("artifact_not_file", f"{name} is not a regular file.", name)
        code = "not_file"
    elif read.state == "too_large":
        if required:
            out.add(
                "artifact_too_large",
                f"{name} is {read.size:,} bytes or more; the cap is {cap:,}, so it was not read.",
                name,
            )
        else:
            out.add(
                "log_too_large",
                f"{name} is over {cap:,} bytes, so it was not scanned for secrets.",
                name,
            )
            return
        code = "too_large"
    else:
        out.add("artifact_unreadable", f"{name} could not be read.", name)
        code = "unreadable"
    if required:
        out.errors.append(FieldError(name, code, f"{name} could not be used ({code})."))


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def unsafe_path_reason(path: str) -> str | None:
    """Why a changed path is unsafe to apply, or None when it is an ordinary relative path."""
    if not path:
        return "is empty"
    if len(path) > 4096:
        return "is longer than 4096 characters"
    if any(ord(c) < 0x20 or c == "\x7f" for c in path):
        return "contains a control character"
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return "is absolute"
    parts = re.split(r"[/\\]", path)
    if any(p == ".." for p in parts):
        return "contains '..'"
    if any(p in ("", ".") for p in parts):
        return "has an empty or '.' segment"
    if any(len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts):
        return "has a segment longer than 255 bytes"
    if any(p.casefold().rstrip(". ") == ".git" for p in parts):
        return "is inside .git"
    return None


@dataclass(frozen=True, slots=True)
class _Tables:
    protected: GlobSet
    tests: GlobSet
    dependencies: GlobSet


_TABLES: Final = _Tables(
    protected=GlobSet([glob for _, glob, _ in PROTECTED_PATHS], ignore_case=True),
    tests=GlobSet(TEST_GLOBS, ignore_case=True),
    dependencies=GlobSet(DEPENDENCY_GLOBS, ignore_case=True),
)


def _protected_category(path: str, allowed: list[tuple[str, GlobSet]]) -> tuple[str, bool] | None:
    """The protected category of a path and whether an allowed glob explicitly permits it."""
    index = _TABLES.protected.first_index(path)
    if index is None:
        return None
    category, _, name = PROTECTED_PATHS[index]
    permitted = any(name in folded and glob.match(path) for folded, glob in allowed)
    return category, permitted


def _check_paths(out: _Collector, diff: ParsedDiff, request: OpenClawRequest) -> None:
    scope = request.scope
    allowed = GlobSet(scope.allowed_globs)
    deny = GlobSet(scope.deny_globs, ignore_case=True)
    each_allowed = [(p.casefold(), GlobSet([p])) for p in scope.allowed_globs]
    security_stop = "security-sensitive" in request.stop_conditions
    for file in diff.files:
        for path in file.paths:
            shown = preview(path, 120)
            reason = unsafe_path_reason(path)
            if reason is not None:
                out.add("unsafe_path", f"The changed path {shown} {reason}.", path)
                continue
            denied_by = deny.first_match(path)
            if denied_by is not None:
                out.add(
                    "path_denied",
                    f"{shown} matches the deny glob {preview(denied_by)}.",
                    path,
                )
            elif not allowed.match(path):
                out.add("path_out_of_scope", f"{shown} matches no allowed glob.", path)
            protected = _protected_category(path, each_allowed)
            if protected is not None:
                category, permitted = protected
                if not permitted:
                    out.add(
                        "protected_path",
                        f"{shown} is a {category} path and no allowed glob names it explicitly.",
                        path,
                    )
                if category == "auth" and security_stop:
                    out.add(
                        "security_sensitive_change",
                        f"{shown} is an auth/security path and security-sensitive is a stop "
                        "condition: the worker should have stopped.",
                        path,
                    )
            if _TABLES.dependencies.match(path):
                out.add("dependency_change", f"{shown} is a dependency manifest or lockfile.", path)


def _check_files(out: _Collector, diff: ParsedDiff) -> None:
    for file in diff.files:
        path = file.path
        shown = preview(path, 120)
        if file.is_binary:
            out.add("binary_file", f"{shown} is binary; its content cannot be checked.", path)
        if file.status == "deleted":
            out.add("file_deleted", f"{shown} is deleted.", path)
        if file.status == "renamed":
            old = preview(file.old_path or "", 120)
            out.add("file_renamed", f"{old} is renamed to {shown}.", path)
        modes = {m for m in (file.old_mode, file.new_mode) if m in _SPECIAL_MODES}
        if modes:
            out.add(
                "special_file",
                f"{shown} is a symlink or submodule entry (mode {sorted(modes)[0]}).",
                path,
            )
        elif file.mode_changed:
            out.add(
                "mode_changed", f"{shown} changes mode {file.old_mode} → {file.new_mode}.", path
            )


def _check_limits(out: _Collector, diff: ParsedDiff, request: OpenClawRequest) -> None:
    scope = request.scope
    if diff.files_changed > scope.max_files_changed:
        out.add(
            "too_many_files",
            f"{diff.files_changed:,} files changed; the limit is {scope.max_files_changed:,}.",
        )
    if diff.additions > scope.max_additions:
        out.add(
            "too_many_additions",
            f"{diff.additions:,} lines added; the limit is {scope.max_additions:,}.",
        )
    if diff.deletions > scope.max_deletions:
        out.add(
            "too_many_deletions",
            f"{diff.deletions:,} lines deleted; the limit is {scope.max_deletions:,}.",
        )


def _add_secrets(out: _Collector, findings: list[SecretFinding]) -> None:
    for f in findings:
        out.add(
            f.code,
            f"{f.kind} at {f.path}:{f.line} ({f.excerpt}); output must never embed secrets "
            "(secrets-required stop condition).",
            f.path,
            f.line,
        )


def _load_status(out: _Collector, read: _Read, task_id: str | None) -> StatusDoc | None:
    if read.state == "missing":
        out.add(
            "status_missing",
            "status.json is missing, so the worker's own outcome is unknown.",
            "status.json",
        )
        return None
    if read.state != "ok":
        _artifact_problem(out, "status.json", read, STATUS_CAP, required=True)
        return None
    loaded = jsondoc.load_object(read.data, limit=STATUS_CAP)
    errors: list[FieldError]
    status: StatusDoc | None = None
    if not loaded.ok:
        errors = list(loaded.errors)
    else:
        try:
            status = StatusDoc.model_validate(loaded.value)
            errors = []
        except ValidationError as exc:
            errors = from_validation_error(exc)
    if errors:
        for err in errors:
            name = "status.json" if err.field == ROOT else join_path("status.json", err.field)
            out.errors.append(FieldError(name, err.code, f"status.json: {err.message}"))
        first = errors[0]
        out.add("status_invalid", f"status.json is invalid: {first.message}", "status.json")
        return None
    assert status is not None
    if task_id is not None and status.task_id != task_id:
        out.errors.append(
            FieldError(
                "status.json.task_id",
                "task_mismatch",
                f"status.json.task_id {preview(status.task_id)} is not the request's "
                f"{preview(task_id)}.",
            )
        )
        out.add(
            "status_task_mismatch",
            f"status.json is for task {preview(status.task_id)}, not {preview(task_id)}.",
            "status.json",
        )
    return status


def _is_test(file: FileDiff) -> bool:
    return any(_TABLES.tests.match(p) for p in file.paths)


def _says_tests_not_run(report: str) -> bool:
    return TESTS_NOT_RUN.search(report) is not None


def _signature(diff: ParsedDiff) -> dict[str, tuple[int, int]]:
    """What a diff changes, as ``path → (additions, deletions)``: two diffs of one change agree
    on it whatever their context lines, headers or file order."""
    return {f.paths[-1]: (f.additions, f.deletions) for f in diff.files if f.paths}


def _compare_patches(out: _Collector, worker: ParsedDiff, git: ParsedDiff) -> None:
    mine, theirs = _signature(git), _signature(worker)
    if mine == theirs:
        return
    differing = sorted(p for p in mine.keys() | theirs.keys() if mine.get(p) != theirs.get(p))
    shown = ", ".join(preview(p, 80) for p in differing[:5])
    more = f" and {len(differing) - 5} more" if len(differing) > 5 else ""
    out.add(
        "patch_differs",
        f"patch.diff does not match what git shows for {len(differing)} file(s): {shown}{more}.",
        "patch.diff",
    )


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
    out = _Collector()
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

    report_read = _read_artifact(results_dir, "report.md", REPORT_CAP)
    patch_read = _read_artifact(results_dir, "patch.diff", PATCH_CAP)
    _artifact_problem(out, "report.md", report_read, REPORT_CAP, required=True)
    from_git = git_patch is not None or git_patch_too_large
    if not (from_git and patch_read.state == "missing"):
        _artifact_problem(out, "patch.diff", patch_read, PATCH_CAP, required=not from_git)
    if git_patch_too_large:
        out.add(
            "artifact_too_large",
            f"The diff git shows is over the {PATCH_CAP:,}-byte cap, so it was not read.",
        )
    status = _load_status(out, _read_artifact(results_dir, "status.json", STATUS_CAP), task_id)

    report_text: str | None = None
    if report_read.state == "ok":
        try:
            report_text = report_read.data.decode("utf-8")
        except UnicodeDecodeError:
            report_text = report_read.data.decode("utf-8", "replace")
            out.add("report_not_utf8", "report.md is not UTF-8 text.", "report.md")
        if not report_text.strip():
            out.add("report_empty", "report.md is blank; it should say what changed.", "report.md")
        _add_secrets(out, scan_text(report_text, "report.md"))

    for log in _ARTIFACT_LOGS:
        read = _read_artifact(results_dir, log, LOG_CAP)
        if read.state == "missing":
            continue
        if read.state != "ok":
            _artifact_problem(out, log, read, LOG_CAP, required=False)
            continue
        _add_secrets(out, scan_text(read.data.decode("utf-8", "replace"), log))

    diff: ParsedDiff | None = None
    patch_text: str | None = None
    if git_patch is not None:
        patch_text = git_patch
        if patch_read.state == "ok":
            worker_diff = parse_diff(patch_read.data.decode("utf-8", "replace"))
            _compare_patches(out, worker_diff, parse_diff(git_patch))
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
        _add_secrets(out, scan_diff(diff))
        if diff.problems:
            _add_secrets(out, scan_text(patch_text, "patch.diff"))
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
            _check_paths(out, diff, model)
            _check_limits(out, diff, model)
            if "cannot-run-tests" in model.stop_conditions and report_text is not None:
                if _says_tests_not_run(report_text):
                    out.add(
                        "tests_not_run",
                        "report.md says the tests were not run, and cannot-run-tests is a stop "
                        "condition.",
                        "report.md",
                    )
            if not any(_is_test(f) for f in diff.files):
                out.add("no_tests_touched", "The patch changes no test file.")
        if diff.files:
            _check_files(out, diff)
    return _verdict(out, diff)


def _verdict(out: _Collector, diff: ParsedDiff | None) -> RiskReport:
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
