"""All SQL lives in the store (`core/store/`): a statement anywhere else is a place a second
backend cannot reach."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "jarvis_cli", "jarvis_sim", "jarvis_tui")
STORE = ROOT / "core" / "store"

_STATEMENT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|WITH|PRAGMA)\s")


def statements(path: Path) -> int:
    """String constants (f-string parts included) that begin an SQL statement."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _STATEMENT.match(node.value)
    )


def sql_outside_the_store() -> dict[str, int]:
    found: dict[str, int] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if STORE in path.parents:
                continue
            count = statements(path)
            if count:
                found[path.relative_to(ROOT).as_posix()] = count
    return found


def test_sql_appears_only_in_the_store() -> None:
    found = sql_outside_the_store()
    assert not found, f"SQL outside core/store/ (name the read or write there instead): {found}"


def test_the_check_sees_a_statement() -> None:
    sample = ROOT / "core" / "store" / "sqlite_store.py"
    assert statements(sample) > 0
