"""A run's diff through the front door: its opening, pages of its patch, an index, a search.

Where the diff is comes from the store (`Fleet.diff_source`); git is read a page at a time, never
whole (`core.repos.diff`). `diff_opening` is what a view shows first.
"""

from __future__ import annotations

from core.repos.claims import FileChange
from core.repos.diff import (
    DiffRefusal,
    DiffSource,
    LineKind,
    PatchIndex,
    PatchPage,
    PatchSearch,
    diff_files,
    finding_files,
    index_patch,
    iter_patch_lines,
    line_kind,
    patch_page,
    search_patch,
    shown_line,
)
from core.repos.git import GitError
from core.service.fleet import Fleet
from core.service.reads import DiffOpening

__all__ = [
    "DiffOpening",
    "DiffRefusal",
    "DiffSource",
    "FileChange",
    "GitError",
    "LineKind",
    "PatchIndex",
    "PatchPage",
    "PatchSearch",
    "diff_files",
    "diff_opening",
    "index_patch",
    "iter_patch_lines",
    "line_kind",
    "patch_page",
    "search_patch",
    "shown_line",
]


def diff_opening(fleet: Fleet, run_id: str, *, page_lines: int) -> DiffOpening:
    """Where ``run_id``'s diff is, its files and findings, and its first ``page_lines`` lines
    (git is read for those only); a refusal's sentence when there is none to show."""
    found = fleet.diff_source(run_id)
    detail = None if isinstance(found, DiffRefusal) else fleet.detail(run_id, events=0)
    return opening_of(run_id, found, detail, page_lines=page_lines)


def opening_of(
    run_id: str,
    found: DiffSource | DiffRefusal,
    detail: dict[str, object] | None,
    *,
    page_lines: int,
) -> DiffOpening:
    """`diff_opening` once the store was read (git is read outside the store's lock)."""
    if isinstance(found, DiffRefusal):
        return DiffOpening(run_id, None, found)
    gates = (detail or {}).get("gates") or []
    try:
        files = diff_files(found.repo, found.base, found.head)
        first = patch_page(found.repo, found.base, found.head, 0, page_lines)
    except GitError as exc:
        refusal = DiffRefusal("no_diff", f"git could not read run {run_id}'s diff: {exc}")
        return DiffOpening(run_id, None, refusal)
    findings = finding_files(gates, [f.path for f in files])  # type: ignore[arg-type]
    return DiffOpening(run_id, found, None, files, findings, first)
