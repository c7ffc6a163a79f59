"""Text from workers and files made inert before anyone's terminal shows it.

Worker output, file names and messages that quote them may carry terminal escape sequences (a
terminal would execute them: retitle the window, rewrite the screen) or line and direction
controls that make displayed text lie about its content. `inert` keeps printable text, new lines
and tabs, and shows everything else as a visible ``\\xNN`` escape. The console, the command line
and the engine (for what it stores already escaped, such as a worker's stderr) share this one
rule; secrets are masked by `core.contracts.secrets_scan`.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, the C1 range (0x9b is a one-byte CSI in some
# terminals), and the Unicode line/paragraph separators and bidirectional overrides that can make
# displayed text lie about its content.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """``text`` with every control character shown as a visible escape."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
