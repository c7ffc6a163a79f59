"""The worker profiles docs/agents.md shows, for the live tests to run exactly those.

A profile is the ```toml block after a ``<!-- profile: NAME -->`` line; its placeholders
``<program>``, ``<server>`` and ``<home>`` are the only things a test fills in.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

AGENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
_BLOCK = r"<!-- profile: {name} -->\s*```toml\n(?P<toml>.*?)```"


def documented_profile(name: str, *, program: Path, server: str, home: Path) -> str:
    """The TOML of profile ``name`` as docs/agents.md shows it, its placeholders filled in.

    Raises:
        LookupError: the page shows no such profile.
    """
    found = re.search(_BLOCK.format(name=re.escape(name)), AGENTS_DOC.read_text(), re.DOTALL)
    if found is None:
        raise LookupError(f"docs/agents.md shows no profile {name!r}")
    text = found.group("toml")
    for placeholder, value in (("<program>", str(program)), ("<server>", server),
                               ("<home>", str(home))):  # fmt: skip
        text = text.replace(placeholder, value)
    tomllib.loads(text)  # a page that shows broken TOML fails here, not in the host
    return text
