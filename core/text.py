"""Text from workers and files made inert before anyone's terminal shows it.

Worker output, file names and messages that quote them may carry terminal escape sequences (a
terminal would execute them: retitle the window, rewrite the screen) or line and direction
controls that make displayed text lie about its content. `inert` shows every such character as
a visible escape (``\\x1b``, ``\\u202e``). The console, the command line and the engine (for what
it stores already escaped, such as a worker's stderr) share this one rule; secrets are masked by
`core.contracts.secrets_scan`.
"""

from __future__ import annotations

import re
from functools import cache

#: Characters a terminal may act on or that make text lie about itself, besides the C0 controls:
#: DEL and the C1 controls (0x9b is a one-byte CSI to some terminals), the Unicode line and
#: paragraph separators, and every bidirectional control (Unicode's Bidi_Control property).
_OTHERS = r"\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

#: The characters `inert` escapes that ``json.dumps`` leaves as they are (it escapes C0 itself).
JSON_UNSAFE = re.compile(rf"[{_OTHERS}]")

#: Terminal control sequences (colours, cursor moves): formatting a worker wrote, not content.
TERMINAL_CODES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def as_a_terminal_leaves_it(line: str) -> str:
    """One line of a worker's output as a terminal would leave it: colour and cursor codes
    dropped, and a line redrawn with carriage returns (a progress bar) only as last drawn.

    The result still holds any other control character (an OSC title change, a bell): it is
    not inert, only less noisy.
    """
    return TERMINAL_CODES.sub("", line).rsplit("\r", 1)[-1]


@cache
def unsafe(*, keep_lines: bool = True, keep_tabs: bool = True) -> re.Pattern[str]:
    """The characters `inert` escapes, less line feeds and tabs when they are kept."""
    kept = ("\n" if keep_lines else "") + ("\t" if keep_tabs else "")
    c0 = "".join(f"\\x{code:02x}" for code in range(0x20) if chr(code) not in kept)
    return re.compile(f"[{c0}{_OTHERS}]")


def escaped(match: re.Match[str]) -> str:
    """The visible escape for the character ``match`` found: ``\\x1b``, ``\\n``, ``\\u202e``."""
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def inert(text: str, *, keep_lines: bool = True, keep_tabs: bool = True) -> str:
    """``text`` with every control character shown as a visible escape.

    Args:
        keep_lines: leave line feeds as they are, for text shown where lines are laid out;
            False escapes them too, for text that must stay on one line.
        keep_tabs: leave tabs as they are.
    """
    return unsafe(keep_lines=keep_lines, keep_tabs=keep_tabs).sub(escaped, text)
