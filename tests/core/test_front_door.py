"""The front ends reach the engine through its front door (`core.service`) and the lifecycle's
enums alone: the import contract's list is every other module of the engine, and the names the
front ends take from `core.lifecycle` are enums."""

from __future__ import annotations

import ast
import pkgutil
import tomllib
from enum import Enum
from pathlib import Path

import core
import core.lifecycle
from core.service.actions import MAX_REASON

ROOT = Path(__file__).parents[2]
CONTRACT = "The console and the command line reach the engine through core.service alone"
FRONT_ENDS = ("jarvis_tui", "jarvis_cli")


def _contract() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == CONTRACT]
    return contract


def test_the_contract_forbids_every_engine_module_but_the_front_door_and_the_lifecycle() -> None:
    contract = _contract()
    engine = {f"core.{m.name}" for m in pkgutil.iter_modules(core.__path__)}
    assert "core.service" in engine and "core.store" in engine  # the walk found the engine
    forbidden = set(contract["forbidden_modules"])  # type: ignore[call-overload]
    assert forbidden == engine - {"core.service", "core.lifecycle"}
    assert contract["source_modules"] == list(FRONT_ENDS)


def _lifecycle_names() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for package in FRONT_ENDS:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.module == "core.lifecycle":
                    found.setdefault(str(path.relative_to(ROOT)), set()).update(
                        alias.name for alias in node.names
                    )
                if isinstance(node, ast.Import):
                    assert all(a.name != "core.lifecycle" for a in node.names), path
    return found


def test_the_front_ends_take_only_enums_from_the_lifecycle() -> None:
    found = _lifecycle_names()
    assert found, "the front ends name the lifecycle's states"
    for path, names in found.items():
        for name in names:
            value = getattr(core.lifecycle, name)
            assert isinstance(value, type) and issubclass(value, Enum), f"{path}: {name}"


def test_the_check_notices_a_function_taken_from_the_lifecycle() -> None:
    value = core.lifecycle.stage_of
    assert not (isinstance(value, type) and issubclass(value, Enum))


def test_the_reason_limit_is_the_engines() -> None:
    from core.operator_actions import MAX_REASON as ENGINE

    assert MAX_REASON == ENGINE
