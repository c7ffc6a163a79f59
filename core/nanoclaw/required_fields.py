"""NanoClaw's back-fill of a coordinator's dispatch: ``required_fields`` made whole before it is
validated.

NanoClaw's host (``normalizeWorkerDispatchPayloadText``, src/extensions/jarvis/
dispatch-service.ts at a8d0526) rewrites every dispatch that ``andy-developer`` sends to a
worker's chat before validating it, and delivers the rewritten text; so a dispatch whose list
misses the base fields runs there. Jarvis does the same for that path alone (a message from
``andy-developer`` to a ``jarvis-worker-*`` chat, `core.ipc.chat.read_message`), exactly:

- only when ``run_id`` is a string and ``output_contract.required_fields`` is a list (no list:
  nothing filled, and the validator refuses it);
- the list keeps its strings, trimmed, without blanks, each once, in their order;
- then ``run_id``, ``branch``, ``commit_sha``, ``files_changed``, ``test_result``, ``risk``,
  those missing, in that order, and ``pr_url`` when neither ``pr_url`` nor
  ``pr_skipped_reason`` is there;
- never ``session_id``, which a ``continue`` dispatch must still list itself.

Everywhere else (``jarvis dispatch``, a ``dispatch`` task, any other lane) the list is taken as
given: that is the contract (docs/contracts.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: What NanoClaw adds when missing, in its order.
BASE_FIELDS = ("run_id", "branch", "commit_sha", "files_changed", "test_result", "risk")
PR_FIELDS = ("pr_url", "pr_skipped_reason")


def backfill_required_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its ``required_fields`` back-filled as NanoClaw does; ``doc`` itself (the
    same object) when nothing changes. The original is never modified."""
    contract = doc.get("output_contract")
    if not isinstance(doc.get("run_id"), str) or not isinstance(contract, Mapping):
        return doc
    before = contract.get("required_fields")
    if not isinstance(before, list):
        return doc
    after = list(dict.fromkeys(v.strip() for v in before if isinstance(v, str) and v.strip()))
    after += [name for name in BASE_FIELDS if name not in after]
    if not any(name in after for name in PR_FIELDS):
        after.append(PR_FIELDS[0])
    if after == before:
        return doc
    return {**doc, "output_contract": {**contract, "required_fields": after}}
