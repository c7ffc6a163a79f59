"""Flagging a run whose workers sent secrets: which kinds, from where, never the values.

Worker text is masked once, as it is stored (`core.contracts.secrets_scan.redact`), so every
reader shows the same thing; what was found is kept on the run as ``secrets_found`` (a sorted
JSON list of kinds) and announced by a ``secrets`` journal entry when a new kind turns up, so
an operator knows a credential may need rotating even though nobody can read it here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from core.store.api import RunTransaction


def found_kinds(value: Any) -> list[str]:
    """``secrets_found`` as a list of kinds, from the stored column (JSON text) or a run view
    that already decoded it (a list); empty for NULL or anything unreadable."""
    kinds = value
    if isinstance(value, str):
        try:
            kinds = json.loads(value)
        except ValueError:
            return []
    return [k for k in kinds if isinstance(k, str)] if isinstance(kinds, list) else []


def flag_secrets(
    tx: RunTransaction, run_id: str, kinds: Iterable[str], *, source: str, actor: str
) -> None:
    """Add ``kinds`` to the run's ``secrets_found``; journal it when any kind is new.

    Args:
        source: where they were found: ``progress``, ``completion``, ``stderr``…
    """
    new = set(kinds)
    if not new:
        return
    run = tx.get_run(run_id)
    if run is None:
        return
    known = set(found_kinds(run["secrets_found"]))
    if new <= known:
        return
    merged = sorted(known | new)
    tx.touch_run(
        run_id,
        changes={"secrets_found": json.dumps(merged)},
        kind="secrets",
        payload={"kinds": merged, "new": sorted(new - known), "source": source},
        actor=actor,
    )
