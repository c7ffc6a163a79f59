"""The real entry point, as a process: the boundary the in-process runner stands in for.

Most CLI tests run `jarvis_cli.run` in process (tests/jarvis_cli.py). Here the same
commands also run as ``python -m jarvis_cli`` and must end the same way, byte for byte: that is
what lets the rest trust the in-process runner. The exit codes scripts see, stdin through a
pipe, and the commands that always get a process of their own are checked here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import jarvis, jarvis_in_process, jarvis_process
from tests.conftest import SAMPLES
from tests.jarvis_cli import owns_its_process

DISPATCHES = SAMPLES / "dispatches"
VALID = DISPATCHES / "valid-backend-fix.json"
INVALID = DISPATCHES / "invalid-wrong-types.json"

#: One command per exit code and output kind: valid, invalid, I/O error, usage errors (plain
#: and --json, which argparse reports before any handler runs), human output and help.
COMMANDS = [
    pytest.param(("validate", "dispatch", VALID, "--json"), 0, id="valid-json"),
    pytest.param(("validate", "dispatch", INVALID, "--json"), 1, id="invalid-json"),
    pytest.param(("validate", "dispatch", INVALID), 1, id="invalid-human"),
    pytest.param(("validate", "dispatch", "/nonexistent/d.json", "--json"), 2, id="io-error"),
    pytest.param(("validate", "dispatch"), 2, id="usage"),
    pytest.param(("validate", "dispatch", "x.json", "--json", "--bogus"), 2, id="usage-json"),
    pytest.param(
        ("fingerprint", "--class", "timeout", "--code", "NAV_TIMEOUT", "--step", "3"),
        0,
        id="fingerprint",
    ),  # fmt: skip
    pytest.param(("--help",), 0, id="help"),
]


@pytest.mark.parametrize(("args", "code"), COMMANDS)
def test_in_process_and_the_real_entry_point_end_the_same_way(
    args: tuple[str | Path, ...], code: int
) -> None:
    real = jarvis_process(*args)
    assert real.code == code, real.stderr
    assert jarvis_in_process(*args) == real


def test_a_workspace_command_ends_the_same_way_in_process(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("dispatch", VALID, "--workspace", ws, "--json")
    real = jarvis_process(*args)
    assert real.code == 0, real.stderr
    listed = ("runs", "--workspace", ws, "--json")
    assert jarvis_in_process(*listed) == jarvis_process(*listed)
    # The same dispatch again, each way: its run id is taken, so it is refused as a duplicate.
    again, real_again = jarvis_in_process(*args), jarvis_process(*args)
    assert again == real_again and again.json()["outcome"] == "duplicate"


def test_stdin_through_a_pipe() -> None:
    assert jarvis_process("validate", "dispatch", "-", "--json", stdin=VALID.read_bytes()).code == 0
    refused = jarvis_process("validate", "dispatch", "-", "--json", stdin=b"fix it please")
    assert refused.code == 1 and refused.json()["valid"] is False


@pytest.mark.parametrize(
    ("args", "own"),
    [
        ((), True),
        (("tui",), True),
        (("demo",), True),
        (("host",), True),
        (("host", "--stop"), False),
        (("journal", "--follow"), True),
        (("journal",), False),
        (("runs",), False),
    ],
)
def test_commands_that_take_over_a_process_get_one(args: tuple[str, ...], own: bool) -> None:
    assert owns_its_process(args) is own


def test_the_runner_puts_back_what_a_command_changed(tmp_path: Path) -> None:
    import os
    import sys

    before = (sys.argv, sys.stdin, sys.stdout, sys.stderr, os.getcwd(), dict(os.environ))
    result = jarvis("dispatch", VALID, "--workspace", tmp_path / "ws", "--json", cwd=tmp_path)
    assert result.code == 0, result.stdout
    assert (sys.argv, sys.stdin, sys.stdout, sys.stderr, os.getcwd(), dict(os.environ)) == before
