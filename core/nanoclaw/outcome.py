"""How a NanoClaw runner's attempt ends, judged from its decoded frames as NanoClaw's host does.

The completion is looked for in the frames' result text. When there is one, it is gated like any
worker's (NanoClaw accepts a valid completion whatever else the frames said). When there is none,
an error frame fails the run with the runner's own error as the reason, and so does a frame that
outgrew the 1 MiB cap (NanoClaw kills that runner); otherwise the usual rules apply (a crash, or
the ``parseable`` gate).
"""

from __future__ import annotations

import re

from core.contracts.secrets_scan import mask_secrets
from core.nanoclaw.frames import FRAME_LIMIT, Decoded
from core.text import inert

#: How much of the runner's error text a run's reason keeps.
ERROR_CHARS = 500
_CLOSING_TAG = re.compile(r"<\s*/\s*completion\s*>", re.IGNORECASE)


def has_completion(text: str) -> bool:
    """Whether the result text holds a closing completion tag (a completion to gate)."""
    return _CLOSING_TAG.search(text) is not None


def runner_failure(decoded: Decoded) -> str | None:
    """The reason the run fails without its completion being gated, or None."""
    if has_completion(decoded.text):
        return None
    if decoded.error is not None:
        said = inert(mask_secrets(decoded.error.strip()), keep_lines=False, keep_tabs=False)
        if len(said) > ERROR_CHARS:
            said = said[: ERROR_CHARS - 1] + "…"
        return f"the runner reported an error: {said}"
    if decoded.overflowed:
        return (
            f"the runner's output frame passed {FRAME_LIMIT:,} bytes without its end marker; "
            "the runner was stopped"
        )
    return None
