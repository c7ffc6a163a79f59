"""Who is acting: the operator's name recorded with every action.

``--operator`` wins, then ``JARVIS_OPERATOR``, then the OS user. The name is recorded in the audit
trail and shown to other operators, so it is cleaned of control characters and bounded.
"""

from __future__ import annotations

import getpass
import os
import re

ENV_VAR = "JARVIS_OPERATOR"
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def operator_name(explicit: str | None = None) -> str:
    chosen = explicit or os.environ.get(ENV_VAR)
    if not chosen:
        try:
            chosen = getpass.getuser()
        except (OSError, KeyError):  # no passwd entry, e.g. an arbitrary uid in a container
            chosen = f"uid-{os.getuid()}"
    cleaned = _UNPRINTABLE.sub("", chosen).strip()[:64]
    return cleaned or "unknown"
