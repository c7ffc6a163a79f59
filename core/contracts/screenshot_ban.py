"""The screenshot ban: dispatches and completion evidence must not ask for or cite screenshots.

Evidence must be text-based browser assertions, which a reviewer can read and a gate can check;
an image proves nothing mechanically. The pattern covers plurals, separators and tool names
(``screenshots``, ``screen-shot``, ``screen shot``, ``take_screenshot``,
``mcp__chrome-devtools__take_screenshot``) and the close synonyms ``screen capture`` and
``screengrab``. It cannot tell intent, so a negated mention ("do not take screenshots") is refused
too: the fix is to state the text assertion wanted instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from core.contracts.errors import FieldError, join_path, preview

_PATTERN = re.compile(r"screen[\s_\-]*(?:shot|capture|grab|cap)s?", re.IGNORECASE)


def mentions_screenshot(text: str) -> str | None:
    """The first screenshot reference in ``text``, or None."""
    match = _PATTERN.search(text)
    return match.group() if match else None


def screenshot_errors(value: Any, field: str, *, subject: str) -> Iterator[FieldError]:
    """A `screenshot_reference` error for every string under ``value`` that mentions one.

    Args:
        value: a string, or a list/dict of them (other types are ignored: their type errors are
            reported elsewhere).
        field: the dotted path of ``value``.
        subject: what the text is, for the message ("the task input", "browser evidence").
    """
    # Paths are built only for a match: most strings match nothing, and this runs on every dispatch.
    stack: list[tuple[tuple[str | int, ...], Any]] = [((field,), value)]
    while stack:
        parts, node = stack.pop()
        if isinstance(node, str):
            match = _PATTERN.search(node)
            if match:
                path = join_path(*parts)
                yield FieldError(
                    path,
                    "screenshot_reference",
                    f"{path} mentions {preview(match.group())}: screenshots are not allowed in "
                    f"{subject}; use text-based browser assertions instead.",
                )
        elif isinstance(node, list):
            stack.extend(((*parts, i), v) for i, v in enumerate(node))
        elif isinstance(node, dict):
            stack.extend(((*parts, str(k)), v) for k, v in node.items())
