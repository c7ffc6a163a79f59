"""``jarvis completion bash|zsh``: a shell completion script, generated from the parser itself
(shtab), so every command, verb and option the parser knows completes, and a new one completes
with no script to edit."""

from __future__ import annotations

import argparse
import sys


def run(args: argparse.Namespace) -> int:
    import shtab

    from jarvis_cli import build_parser

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0
