"""Entry point of the ``jarvis`` command (also ``python -m jarvis_tui``)."""

from __future__ import annotations

import sys

from jarvis_tui.cli import run


def main() -> None:
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
