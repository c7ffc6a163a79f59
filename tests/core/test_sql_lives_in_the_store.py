"""All SQL lives in the store's backends (`core/store/`): a statement anywhere else is a place a
second backend cannot reach. Modules that still hold SQL are listed with how many statements they
hold; the list only shrinks: a new module with SQL, or a listed one with more, fails."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "jarvis_cli", "jarvis_sim", "jarvis_tui")
STORE = ROOT / "core" / "store"

#: Statements still outside the store, by module: the work left to move behind it.
NOT_YET_MOVED: dict[str, int] = {
    "core/criteria/run_criteria.py": 8,
}

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


def test_sql_appears_only_in_the_store_and_the_modules_not_yet_moved() -> None:
    found = sql_outside_the_store()
    grown = {m: n for m, n in found.items() if n > NOT_YET_MOVED.get(m, 0)}
    assert not grown, f"SQL outside core/store/ (move it behind the store): {grown}"


def test_the_list_of_modules_not_yet_moved_is_exact() -> None:
    # A module moved behind the store leaves the list, so the list never hides new SQL.
    assert sql_outside_the_store() == NOT_YET_MOVED


def test_the_check_sees_a_statement() -> None:
    sample = ROOT / "core" / "store" / "sqlite_store.py"
    assert statements(sample) > 0
