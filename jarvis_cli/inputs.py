"""Reading the documents a command is given: a path, or ``-`` for standard input."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


class UsageError(Exception):
    """A problem with how the command was called or with reading its input (exit code 2).

    Attributes:
        code: a stable snake_case code.
        message: one sentence.
        lines: more lines shown after it (the end of a log), each on its own.
    """

    def __init__(self, code: str, message: str, lines: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.lines = tuple(lines)


def read_input(source: str, *, limit: int) -> bytes:
    """Read at most ``limit + 1`` bytes from a file or from stdin (``-``).

    Reading one byte past the limit is enough for the validator to report "too large" without
    holding an arbitrarily large input in memory.
    """
    try:
        if source == "-":
            return sys.stdin.buffer.read(limit + 1)
        path = Path(source)
        if path.is_dir():
            raise UsageError("is_directory", f"{source} is a directory, not a file.")
        with path.open("rb") as handle:
            return handle.read(limit + 1)
    except FileNotFoundError:
        raise UsageError("not_found", f"{source} does not exist.") from None
    except PermissionError:
        raise UsageError(
            "permission_denied", f"{source} cannot be read: permission denied."
        ) from None
    except OSError as exc:
        raise UsageError("io_error", f"{source} cannot be read: {exc.strerror or exc}.") from None


def existing_dir(source: str) -> Path:
    path = Path(source)
    if not path.is_dir():
        raise UsageError("not_a_directory", f"{source} is not a directory.")
    return path


def has_terminal() -> bool:
    """Whether a full-screen console has a terminal to draw on and read keys from: stdin and
    stdout are both one, or Textual is told to drive something else (``TEXTUAL_DRIVER``, which
    textual-serve sets for a console it serves to a browser)."""
    import os

    if os.environ.get("TEXTUAL_DRIVER"):
        return True
    return sys.stdin.isatty() and sys.stdout.isatty()
