"""The paths a diff's headers name: git's C-quoted paths, the ``a/`` and ``b/`` prefixes, a
path as written after ``---`` or ``rename from``, and the two paths of a ``diff --git`` line
(ambiguous when unquoted paths hold spaces). Part of the diff parser (`core.contracts.diffparse`).
"""

from __future__ import annotations

from typing import Final

_ESCAPES: Final = {
    "a": 7,
    "b": 8,
    "t": 9,
    "n": 10,
    "v": 11,
    "f": 12,
    "r": 13,
    '"': 34,
    "\\": 92,
}


def unquote_c(text: str) -> tuple[str | None, int]:
    """Decode a git C-style quoted path at the start of ``text``.

    Returns:
        The decoded path (octal escapes are UTF-8 bytes; undecodable bytes become U+FFFD) and the
        index just past the closing quote, or ``(None, 0)`` when the quote is not closed.
    """
    if not text.startswith('"'):
        return None, 0
    out = bytearray()
    i = 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", "replace"), i + 1
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            octal = text[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal) and int(octal, 8) < 256:
                out.append(int(octal, 8))
                i += 4
                continue
            out.append(ord("\\"))
            i += 1
            continue
        out.extend(ch.encode("utf-8", "surrogatepass"))
        i += 1
    return None, 0


def strip_prefix(path: str | None, prefix: str) -> str | None:
    if path is None:
        return None
    return path[len(prefix) :] if path.startswith(prefix) else path


def header_value(value: str) -> str | None:
    """A path as written after ``rename from`` or ``---``: quoted, or the text up to a tab."""
    if value.startswith('"'):
        decoded, _ = unquote_c(value)
        return decoded
    # GNU diff puts a tab and a timestamp after the name; git adds nothing.
    return value.split("\t", 1)[0].rstrip("\r")


def split_git_header(rest: str) -> tuple[str | None, str | None, bool]:
    """The two paths of ``diff --git <a> <b>``, prefixes still on, and whether the split is sure.

    Unquoted paths with spaces make the line ambiguous when the two paths differ; the other
    headers (``rename from``, ``---``) then say which paths are meant.
    """
    if rest.startswith('"'):
        a, end = unquote_c(rest)
        if a is None:
            return None, None, True
        tail = rest[end:].lstrip(" ")
        return a, (header_value(tail) if tail else None), True
    if rest.endswith('"'):
        idx = rest.rfind(' "')
        if idx < 0:
            return None, None, True
        b, _ = unquote_c(rest[idx + 1 :])
        return rest[:idx], b, True
    n = len(rest)
    if n % 2 == 1:
        half = n // 2
        a, b = rest[:half], rest[half + 1 :]
        # Same path on both sides (the usual case) settles where a path with spaces splits.
        if rest[half] == " " and (a == b or (a[:2] == "a/" and b[:2] == "b/" and a[2:] == b[2:])):
            return a, b, True
    sure = rest.count(" ") == 1
    idx = rest.find(" b/")
    if idx < 0:
        idx = rest.find(" ")
    if idx < 0:
        return rest or None, None, True
    return rest[:idx], rest[idx + 1 :], sure
