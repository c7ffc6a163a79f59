"""Acceptance criteria at dispatch: which a run gets, and the journal's note of where from.

Separate from `core.criteria.run_criteria` so that only intake pays for importing the extractor.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.criteria.extract import Extraction, canonical, extract_criteria, task_text_of
from core.store.sqlite_store import Transaction


def criteria_for_dispatch(doc: Mapping[str, Any]) -> tuple[Extraction, bool]:
    """The criteria a dispatch gets, and its universal flag.

    A dispatch that lists ``acceptance_criteria`` keeps exactly those (plus the universal
    checklist when the flag is on); otherwise they are extracted from its text by patterns.
    """
    universal = doc.get("universal_criteria") is not False
    given = doc.get("acceptance_criteria")
    if isinstance(given, list) and given:
        # Validated with the dispatch already; canonical() only normalises their shape.
        criteria = [canonical(c, universal=False) for c in given if isinstance(c, Mapping)]
        if universal:
            extra = extract_criteria("", universal=True)
            criteria += [c for c in extra.criteria if c not in criteria]
        return Extraction(criteria, "dispatch", ["criteria listed by the dispatch"]), universal
    return extract_criteria(task_text_of(doc), universal=universal), universal


def dispatch_fields(doc: Mapping[str, Any]) -> tuple[dict[str, Any], Extraction]:
    """The run columns a dispatch's criteria set, and the extraction (for its log entry)."""
    extraction, universal = criteria_for_dispatch(doc)
    fields = {
        "criteria_json": json.dumps(extraction.criteria),
        "universal_criteria": int(universal),
        "criteria_source": extraction.source,
        "verification_state": None,
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


def log_extraction(tx: Transaction, run_id: str, extraction: Extraction, actor: str) -> None:
    """A re-dispatch's new criteria, as their own journal entry."""
    tx.journal(run_id, "criteria", extraction_note(extraction)["criteria"], actor)
