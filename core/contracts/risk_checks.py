"""The risk gate's checks of a patch (`core.contracts.risk_gate`): its paths against the
request's scope and the protected paths, its files (binary, deleted, renamed, special, mode
changes), its size against the limits, secrets, whether it touches tests, and the worker's own
patch against what git shows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from core.contracts.diffparse import FileDiff, ParsedDiff
from core.contracts.errors import preview
from core.contracts.openclaw_request import GlobSet, OpenClawRequest
from core.contracts.risk_artifacts import Collector
from core.contracts.risk_tables import DEPENDENCY_GLOBS, PROTECTED_PATHS, TEST_GLOBS, TESTS_NOT_RUN
from core.contracts.secrets_scan import SecretFinding

_SPECIAL_MODES: Final = frozenset({"120000", "160000"})
_DRIVE = re.compile(r"[A-Za-z]:")


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


def check_paths(out: Collector, diff: ParsedDiff, request: OpenClawRequest) -> None:
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


def check_files(out: Collector, diff: ParsedDiff) -> None:
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


def check_limits(out: Collector, diff: ParsedDiff, request: OpenClawRequest) -> None:
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


def add_secrets(out: Collector, findings: list[SecretFinding]) -> None:
    for f in findings:
        out.add(
            f.code,
            f"{f.kind} at {f.path}:{f.line} ({f.excerpt}); output must never embed secrets "
            "(secrets-required stop condition).",
            f.path,
            f.line,
        )


def is_test(file: FileDiff) -> bool:
    return any(_TABLES.tests.match(p) for p in file.paths)


def says_tests_not_run(report: str) -> bool:
    return TESTS_NOT_RUN.search(report) is not None


def _signature(diff: ParsedDiff) -> dict[str, tuple[int, int]]:
    """What a diff changes, as ``path → (additions, deletions)``: two diffs of one change agree
    on it whatever their context lines, headers or file order."""
    return {f.paths[-1]: (f.additions, f.deletions) for f in diff.files if f.paths}


def compare_patches(out: Collector, worker: ParsedDiff, git: ParsedDiff) -> None:
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
