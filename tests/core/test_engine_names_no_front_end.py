"""The engine names no other package of the project, not even as a string: the programs it
starts (the default worker, a background host) are given to it by the command line.

The import contracts (`lint-imports`) see every import, function-level ones included; a module
named in a string (``python -m jarvis_cli host``) is invisible to them, so this test reads the
strings of every engine module. Docstrings and comments may name the other packages: they
explain, they start nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import core

OTHERS = ("jarvis_cli", "jarvis_sim", "jarvis_tui")


def strings_naming_others(source: str) -> list[str]:
    """The string constants of ``source`` (docstrings left out) that name another package."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and any(other in node.value for other in OTHERS)
    ]


def test_no_engine_module_names_another_package_in_a_string() -> None:
    root = Path(core.__file__).parent
    found = {
        str(path.relative_to(root.parent)): named
        for path in sorted(root.rglob("*.py"))
        if (named := strings_naming_others(path.read_text("utf-8")))
    }
    assert found == {}


def test_the_check_sees_a_module_named_in_a_command_line() -> None:
    source = (
        '"""Starts jarvis_cli, says the docstring."""\n'
        'COMMAND = ["python", "-m", "jarvis_cli", "host"]\n'
        'DEFAULT = "jarvis_sim.simworker"\n'
    )
    assert sorted(strings_naming_others(source)) == ["jarvis_cli", "jarvis_sim.simworker"]
