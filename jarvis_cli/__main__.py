"""Entry point of the ``jarvis`` command (also ``python -m jarvis_cli``)."""

from __future__ import annotations

import sys

from jarvis_cli import run


def main() -> None:
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
