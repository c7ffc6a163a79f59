"""A notice's text made safe for any medium: one line, inert, secrets masked, bounded.

A notice quotes what workers wrote (a failure's reason may carry their output): on its way to a
terminal escape, a chat channel or a log it must not hold an escape sequence, a control
character or a new line (`core.text.inert` shows each as a visible ``\\xNN``), nor a secret
the engine's scanner recognises (`core.contracts.secrets_scan.mask_secrets`).
"""

from __future__ import annotations

from core.contracts.secrets_scan import mask_secrets
from core.text import inert


def safe_line(text: str, limit: int) -> str:
    """``text`` on one line, secrets masked, every control character escaped, cut to ``limit``
    characters (the cut marked ``…``)."""
    flat = " ".join(text.replace("\r\n", "\n").split("\n"))
    line = inert(mask_secrets(flat), keep_lines=False, keep_tabs=False)
    return line if len(line) <= limit else line[: limit - 1] + "…"
