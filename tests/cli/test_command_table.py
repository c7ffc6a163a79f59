"""The command table names each handler as text, imported only when its command runs."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

from jarvis_cli import _handler, build_parser


def _leaves(parser: argparse.ArgumentParser, path: str = "jarvis") -> Iterator[tuple[str, str]]:
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield path, parser.get_default("handler")
        return
    for name, child in subparsers[0].choices.items():
        yield from _leaves(child, f"{path} {name}")


def test_every_command_names_a_handler_that_imports_and_is_callable() -> None:
    leaves = list(_leaves(build_parser()))
    assert len(leaves) >= 20
    for command, name in leaves:
        assert isinstance(name, str), command
        assert callable(_handler(name)), command


def test_opening_the_console_does_not_load_the_contract_models_or_the_extractor() -> None:
    # What `jarvis tui` imports before the screen is taken: parsing the command line must not
    # pull in pydantic (the contract models) or the criteria extractor, which cost a quarter
    # second of first paint when every command's module was imported up front.
    probe = (
        "import sys\n"
        "from jarvis_cli import build_parser, _handler\n"
        "args = build_parser().parse_args(['tui'])\n"
        "_handler(args.handler)\n"
        "import jarvis_tui.app\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'"
        " or m.startswith('core.criteria.extract') or m == 'core.intake')\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_only_the_console_commands_load_textual() -> None:
    # Every other command's handler, imported in one fresh interpreter, loads no Textual and no
    # screen of the console (`jarvis tui` and `jarvis demo` import theirs when they open them).
    others = sorted({name for _, name in _leaves(build_parser())} - {"tui.run", "demo.run"})
    probe = (
        "import sys\n"
        "from jarvis_cli import _handler\n"
        f"for name in {others!r}:\n"
        "    _handler(name)\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'"
        " or m.startswith(('jarvis_tui.app', 'jarvis_tui.screens', 'jarvis_tui.widgets')))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "host.run" in others and "runs.runs" in others
    assert out.stdout.strip() == ""
