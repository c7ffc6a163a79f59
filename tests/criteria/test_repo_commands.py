"""Inferring a repository's test and lint commands from the files at its root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.criteria.repo_commands import RepoCommands, infer_commands, python_dependencies


def write(root: Path, files: dict[str, str]) -> Path:
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    return root


def decided(commands: RepoCommands) -> tuple[list[str], str, list[str], str]:
    return commands.test, commands.test_source, commands.lint, commands.lint_source


PYPROJECT_BOTH = """
[project]
name = "x"
[tool.pytest.ini_options]
testpaths = ["tests"]
[tool.ruff]
line-length = 100
"""


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"pyproject.toml": PYPROJECT_BOTH},
            (["pytest"], "pyproject.toml", ["ruff", "check", "."], "pyproject.toml"),
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\n'
                'dev = ["pytest>=8", "Ruff==0.8"]\n'
            },
            (["pytest"], "pyproject.toml", ["ruff", "check", "."], "pyproject.toml"),
        ),
        (
            {
                "pyproject.toml": "[tool.poetry.group.dev.dependencies]\n"
                'pytest = "^8"\nflake8 = "*"\n'
            },
            (["pytest"], "pyproject.toml", ["flake8"], "pyproject.toml"),
        ),
        (
            {"pytest.ini": "[pytest]\n", "ruff.toml": "line-length = 90\n"},
            (["pytest"], "pytest.ini", ["ruff", "check", "."], "ruff.toml"),
        ),
        (
            {"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n[flake8]\n"},
            (["pytest"], "setup.cfg", ["flake8"], "setup.cfg"),
        ),
        (
            {"tox.ini": "[tox]\nenvlist = py311\n[pytest]\n[flake8]\nmax-line-length = 100\n"},
            (["pytest"], "tox.ini", ["flake8"], "tox.ini"),
        ),
        (
            {"package.json": json.dumps({"scripts": {"test": "vitest run", "lint": "eslint ."}})},
            (["npm", "test"], "package.json", ["npm", "run", "lint"], "package.json"),
        ),
        (
            {
                "package.json": json.dumps({"scripts": {"test": "jest"}}),
                "eslint.config.js": "export default [];\n",
            },
            (["npm", "test"], "package.json", ["npx", "eslint", "."], "eslint.config.js"),
        ),
        (
            {"Cargo.toml": '[package]\nname = "x"\n'},
            (
                ["cargo", "test"],
                "Cargo.toml",
                ["cargo", "clippy", "--", "-D", "warnings"],
                "Cargo.toml",
            ),
        ),
        (
            {"go.mod": "module example.org/x\n"},
            (["go", "test", "./..."], "go.mod", ["go", "vet", "./..."], "go.mod"),
        ),
        (
            {"Makefile": ".PHONY: test lint\ntest: build\n\tprove\nlint:\n\tcheck\n"},
            (["make", "test"], "Makefile", ["make", "lint"], "Makefile"),
        ),
        (
            {"setup.py": "from setuptools import setup\n"},
            (["pytest"], "setup.py", ["ruff", "check", "."], "setup.py"),
        ),
        ({}, (["pytest"], "default", ["ruff", "check", "."], "default")),
    ],
    ids=[
        "pyproject-config",
        "pyproject-deps",
        "poetry-group",
        "pytest.ini-ruff.toml",
        "setup.cfg",
        "tox.ini",
        "package.json",
        "eslint-config",
        "cargo",
        "go",
        "makefile",
        "python-fallback",
        "nothing",
    ],
)
def test_commands_by_repository_files(
    tmp_path: Path, files: dict[str, str], expected: tuple[list[str], str, list[str], str]
) -> None:
    assert decided(infer_commands(write(tmp_path, files))) == expected


def test_npms_placeholder_test_script_is_not_a_test_command(tmp_path: Path) -> None:
    placeholder = 'echo "Error: no test specified" && exit 1'
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": placeholder}})})
    commands = infer_commands(tmp_path)
    assert (commands.test, commands.test_source) == (["pytest"], "default")
    assert commands.ecosystem == "node"
    assert commands.manifest == "package.json"


def test_a_make_variable_named_test_is_not_a_target(tmp_path: Path) -> None:
    write(tmp_path, {"Makefile": "test := unit\nlint ?= x\nall:\n\techo $(test)\n"})
    assert infer_commands(tmp_path).test_source == "default"


def test_a_python_config_wins_over_a_makefile(tmp_path: Path) -> None:
    write(tmp_path, {"Makefile": "test:\n\tpytest\n", "pyproject.toml": PYPROJECT_BOTH})
    assert infer_commands(tmp_path).test_source == "pyproject.toml"


def test_package_json_tests_win_over_a_bare_pyproject(tmp_path: Path) -> None:
    # A pyproject.toml with no pytest in it says less than a real npm test script.
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "tools"\n',
            "package.json": json.dumps({"scripts": {"test": "jest"}}),
        },
    )
    commands = infer_commands(tmp_path)
    assert (commands.test, commands.ecosystem) == (["npm", "test"], "node")
    assert commands.lint_source == "pyproject.toml"  # the Python fallback for lint
    assert commands.source == "test: package.json; lint: pyproject.toml"


def test_source_is_one_name_when_both_commands_come_from_one_file(tmp_path: Path) -> None:
    write(tmp_path, {"Cargo.toml": '[package]\nname = "x"\n'})
    commands = infer_commands(tmp_path)
    assert commands.source == "Cargo.toml"
    assert (commands.ecosystem, commands.manifest) == ("rust", "Cargo.toml")


def test_broken_manifests_are_skipped_with_notes(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.ruff\n", "package.json": "{not json"})
    commands = infer_commands(tmp_path)
    assert decided(commands) == (
        ["pytest"],
        "pyproject.toml",
        ["ruff", "check", "."],
        "pyproject.toml",
    )
    assert any("pyproject.toml is not valid TOML" in n for n in commands.notes)
    assert any("package.json is not valid JSON" in n for n in commands.notes)


def test_a_package_json_that_is_not_an_object_is_ignored(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": "[1, 2]"})
    commands = infer_commands(tmp_path)
    assert commands.test_source == "default"
    assert "package.json is not a JSON object; ignored" in commands.notes


def test_an_oversized_or_binary_manifest_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("#" * 300_000)
    (tmp_path / "package.json").write_bytes(b"\xff\xfe{}")
    commands = infer_commands(tmp_path)
    assert any("over" in n and "pyproject.toml" in n for n in commands.notes)
    assert "package.json is not UTF-8; ignored" in commands.notes


def test_no_repository_gives_the_defaults_and_says_so(tmp_path: Path) -> None:
    commands = infer_commands(None)
    assert decided(commands) == (["pytest"], "default", ["ruff", "check", "."], "default")
    assert commands.notes == ("no repository given",)
    missing = infer_commands(tmp_path / "missing")
    assert missing.source == "default"
    assert "is not a folder" in missing.notes[0]


def test_returned_commands_are_fresh_lists(tmp_path: Path) -> None:
    # Callers put these lists into criteria; one caller's change must not leak into another's.
    first = infer_commands(None)
    first.test.append("-x")
    assert infer_commands(None).test == ["pytest"]


def test_python_dependencies_reads_every_common_place() -> None:
    pyproject = {
        "project": {
            "dependencies": ["Requests>=2", "  attrs"],
            "optional-dependencies": {"dev": ["pytest_cov; python_version>'3'"]},
        },
        "dependency-groups": {"lint": ["ruff", {"include-group": "dev"}]},
        "tool": {
            "poetry": {"dependencies": {"python": "^3.11"}, "dev-dependencies": {"Black": "*"}},
            "uv": {"dev-dependencies": ["mypy"]},
            "pdm": {"dev-dependencies": {"test": ["hypothesis"]}},
        },
    }
    assert python_dependencies(pyproject) == {
        "requests",
        "attrs",
        "pytest-cov",
        "ruff",
        "python",
        "black",
        "mypy",
        "hypothesis",
    }
    assert python_dependencies({"project": {"dependencies": "oops"}}) == set()
