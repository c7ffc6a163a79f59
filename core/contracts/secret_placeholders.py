"""Which assigned values are placeholders rather than secrets, for the secret scanner.

``password = "changeme"`` and ``token: ${TOKEN}`` are documentation; ``password = "hunter22"``
is a credential. `is_placeholder` draws that line for the scanner's assignment and bearer rules
(`core.contracts.secrets_scan`); a format with a distinctive shape (an AWS key id) is a finding
whatever it looks like.
"""

from __future__ import annotations

import re
from typing import Final

#: What replaces a secret (after at most its first four characters).
MASK: Final = "****"

#: Substrings (compared ignoring case) that mark a value as an obvious dummy.
DUMMY_MARKERS: Final = (
    "changeme",
    "change_me",
    "change-me",
    "example",
    "placeholder",
    "dummy",
    "redacted",
    "replaceme",
    "replace_me",
    "replace-me",
    "your_",
    "your-",
    "yourpassword",
    "yourtoken",
    "fake",
    "sample",
    "xxxx",
)
#: Whole values (compared ignoring case) that are words, not secrets.
DUMMY_WORDS: Final = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "secret",
        "token",
        "test",
        "testing",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "todo",
        "tbd",
        "foo",
        "bar",
        "baz",
        "foobar",
        "required",
        "optional",
        "string",
        "str",
    }
)
_MASK_CHARS = frozenset("*xX.-_#?• ")
_TEMPLATE = re.compile(
    r"^(?:<[^<>]*>|\{\{.*\}\}|\$\{.*\}|\$\(.*\)|\$[A-Za-z_][A-Za-z0-9_]*|%\(?[A-Za-z_]\w*\)?s?%?"
    r"|\{[A-Za-z_]\w*\})$",
    re.DOTALL,
)
_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_ENV_LOOKUP = re.compile(r"(?i)os\.environ|getenv|process\.env|\benv\[|\benv\(|secrets\.")


def is_placeholder(value: str, *, quoted: bool) -> bool:
    """Whether an assigned value is a placeholder rather than a literal secret.

    Placeholders: empty or blank; shorter than 4 characters (6 unquoted); containing `MASK`
    (already masked, which keeps `mask_secrets` idempotent); made only of mask
    characters (``***``, ``xxxx``, ``...``); a template or variable (``<redacted>``,
    ``{{ x }}``, ``${VAR}``, ``$VAR``, ``%(x)s``, ``%VAR%``, ``{name}``); an environment or
    secret-store lookup (``os.environ[...]``, ``getenv(...)``, ``process.env.X``,
    ``secrets.X``); a value containing a dummy marker (`DUMMY_MARKERS`, e.g. ``changeme``,
    ``example``) or equal to a dummy word (`DUMMY_WORDS`). Unquoted values are also placeholders
    when they read as code rather than data: containing ``(``, ``[``, ``{``, ``$`` or ``<``,
    starting with ``!`` (a YAML tag such as ``!vault``), a dotted reference (``settings.KEY``),
    or a plain identifier with no digit or symbol (``new_password``). Long mixed-case letter-only
    unquoted values (20+) are still treated as literals.
    """
    text = value.strip()
    lowered = text.casefold()
    if len(text) < (4 if quoted else 6):
        return True
    if MASK in text:
        return True  # masked already (stored worker text is): masking again would eat its prefix
    if set(text) <= _MASK_CHARS:
        return True
    if _TEMPLATE.match(text) or _ENV_LOOKUP.search(text):
        return True
    if lowered in DUMMY_WORDS or any(marker in lowered for marker in DUMMY_MARKERS):
        return True
    if quoted:
        return False
    if any(c in text for c in "([{$<") or text.startswith("!"):
        return True
    if _REFERENCE.fullmatch(text):
        return True
    has_digit = any(c.isdigit() for c in text)
    has_symbol = any(not c.isalnum() and c not in "_-" for c in text)
    if has_digit or has_symbol:
        return False
    mixed_case = any(c.isupper() for c in text) and any(c.islower() for c in text)
    return not (len(text) >= 20 and mixed_case)
