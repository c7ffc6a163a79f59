"""Acceptance criteria at dispatch: which a run gets, and the journal's note of where from.

Separate from `core.criteria.run_criteria` so that only intake pays for importing the extractor.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.contracts.criteria import MAX_CRITERIA
from core.criteria.allowlist import approval_notes
from core.criteria.extract import Extraction, canonical, extract_criteria, task_text_of
from core.store.api import RunTransaction


def universal_note(flag: object, workspace_default: bool) -> tuple[bool, str]:
    """Whether a Jarvis (NanoClaw) dispatch gets the universal checklist, and why.

    The checklist (tests, lint, changelog, backlog) is the constraint-extraction document's rule
    for task-dispatcher records, whose flag defaults to true. A NanoClaw dispatch names its own
    ``acceptance_tests``, so it gets the checklist only when it asks (``universal_criteria:
    true``) or its workspace does (``[criteria] universal = true`` in ``jarvis.toml``).
    """
    if isinstance(flag, bool):
        said = "on" if flag else "off"
        return flag, f"universal checklist {said}: the dispatch sets universal_criteria"
    if workspace_default:
        return True, "universal checklist on: the workspace's jarvis.toml sets [criteria] universal"
    return False, (
        "universal checklist off: a dispatch names its own acceptance_tests (set "
        "universal_criteria: true, or [criteria] universal = true in jarvis.toml, to add it)"
    )


def at_most_the_cap(extraction: Extraction, first_notes: int = 0) -> Extraction:
    """``extraction`` with at most `MAX_CRITERIA` criteria, the first ones, and a note when
    some were dropped.

    A dispatch that *lists* more is refused by its validator; criteria found in the task's text
    (or added by the universal checklist) never refuse a dispatch, so the rest are dropped and
    the note says so. It goes after the first ``first_notes`` notes, ahead of the extraction's
    own: the journal keeps only the first twenty.
    """
    found = len(extraction.criteria)
    if found <= MAX_CRITERIA:
        return extraction
    note = (
        f"{found} criteria were found; the run keeps the first {MAX_CRITERIA}, the most a run "
        "may have"
    )
    notes = [*extraction.notes[:first_notes], note, *extraction.notes[first_notes:]]
    return Extraction(extraction.criteria[:MAX_CRITERIA], extraction.source, notes)


def criteria_for_dispatch(
    doc: Mapping[str, Any], *, workspace_universal: bool = False
) -> tuple[Extraction, bool]:
    """The criteria a dispatch gets, and its universal flag.

    A dispatch that lists ``acceptance_criteria`` keeps exactly those (plus the universal
    checklist when it applies, see `universal_note`); otherwise they are extracted from its
    text by patterns.

    Args:
        doc: The validated dispatch.
        workspace_universal: The workspace's ``[criteria] universal`` setting.
    """
    universal, why = universal_note(doc.get("universal_criteria"), workspace_universal)
    given = doc.get("acceptance_criteria")
    if isinstance(given, list) and given:
        # Validated with the dispatch already; canonical() only normalises their shape.
        criteria = [canonical(c, universal=False) for c in given if isinstance(c, Mapping)]
        if universal:
            extra = extract_criteria("", universal=True)
            criteria += [c for c in extra.criteria if c not in criteria]
        kept = at_most_the_cap(
            Extraction(criteria, "dispatch", ["criteria listed by the dispatch", why]), 1
        )
        notes = [*approval_notes(kept.criteria), *kept.notes]
        return Extraction(kept.criteria, kept.source, notes), universal
    found = extract_criteria(task_text_of(doc), universal=universal)
    return at_most_the_cap(
        Extraction(found.criteria, found.source, [why, *found.notes]), 1
    ), universal


def dispatch_fields(
    doc: Mapping[str, Any], *, workspace_universal: bool = False
) -> tuple[dict[str, Any], Extraction]:
    """The run columns a dispatch's criteria set, and the extraction (for its log entry)."""
    extraction, universal = criteria_for_dispatch(doc, workspace_universal=workspace_universal)
    fields = {
        "criteria_json": json.dumps(extraction.criteria),
        "universal_criteria": int(universal),
        "criteria_source": extraction.source,
        "approved_commands": None,
    }
    return fields, extraction


def extraction_note(extraction: Extraction) -> dict[str, Any]:
    """What a run's journal says about how its criteria were found (every extraction is logged
    with its source): part of the ``created`` entry, or its own ``criteria`` entry."""
    return {
        "criteria": {
            "source": extraction.source,
            "count": len(extraction.criteria),
            "notes": extraction.notes[:20],
        }
    }


def log_extraction(tx: RunTransaction, run_id: str, extraction: Extraction, actor: str) -> None:
    """A re-dispatch's new criteria, as their own journal entry."""
    tx.journal(run_id, "criteria", extraction_note(extraction)["criteria"], actor)
