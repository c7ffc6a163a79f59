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


#: Characters a terminal draws as nothing: lone C0 and C1 controls but line feeds and tabs,
#: Unicode's format characters (zero-width spaces and joiners, bidi controls, the soft hyphen,
#: tags) and the variation selectors. The first character of every `HIDDEN` match is one.
_INVISIBLE = (
    r"\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    r"\u08e2\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff"
    r"\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    r"\U0001d173-\U0001d17a\U000e0001-\U000e01ef"
)
HIDDEN_START = re.compile(f"[{_INVISIBLE}]")

#: What a terminal does not draw as characters: escape sequences of every family (CSI; the
#: strings OSC, DCS, SOS, PM and APC up to their terminator; two-byte escapes; their one-byte C1
#: forms), then any invisible character left. A match never holds a line feed, so taking them
#: out keeps a text's lines where they were. Linear: a string's body stops at any introducer.
HIDDEN = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\n\x90\x98\x9c-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
    f"|[{_INVISIBLE}]"
)


def as_read(text: str) -> str:
    """``text`` as a reader sees it on a terminal, or reads it once its escapes are shown: every
    escape sequence, control and invisible character (`HIDDEN`) taken out, line feeds and tabs
    kept; ``text`` itself when it holds none. What a secret scanner must read, since a colour
    code inside a key splits it only for a program, never for a person."""
    return HIDDEN.sub("", text) if HIDDEN_START.search(text) else text


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
