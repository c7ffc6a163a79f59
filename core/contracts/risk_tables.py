"""The scope and risk gate's tables (`core.contracts.risk_gate`) and the shapes of its verdict.

The levels and what each means, every finding code and the level it contributes, the byte caps
of the artifacts, the protected, test and dependency paths, and the English phrases that say
tests were not run: tables, so the documentation and the code cannot disagree. Then what the
gate returns (`Finding`, `RiskReport`) and the worker's ``status.json`` (`StatusDoc`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from core.contracts.errors import FieldError


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
