"""What runs without approval by its words: allowlisted tool names, ``python -m``, approval keys.

Where the named tool is found is `decide`'s part: tests/criteria/test_allowlist_resolution.py.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.criteria.allowlist import (
    DEFAULT_POLICY,
    allowlisted,
    argv_of,
    command_key,
    effective_argv,
    needs_approval,
)


def test_command_key_is_the_json_of_the_argument_list() -> None:
    assert command_key("pytest -q tests") == json.dumps(["pytest", "-q", "tests"])
    assert command_key("pytest -q tests") == command_key(["pytest", "-q", "tests"])
    assert command_key("pytest  -q\ttests") == command_key("pytest -q tests")
    assert command_key("pytest -k 'a b'") == json.dumps(["pytest", "-k", "a b"])


def test_a_shell_key_differs_from_the_same_text_without_a_shell() -> None:
    assert command_key("npm test", shell=True) == json.dumps(["/bin/sh", "-c", "npm test"])
    assert command_key("npm test", shell=True) != command_key("npm test")
    assert argv_of(["echo", "a b"], shell=True) == ["/bin/sh", "-c", "echo 'a b'"]


def test_command_key_rejects_unbalanced_quotes() -> None:
    with pytest.raises(ValueError):
        command_key("pytest -k 'open")


@pytest.mark.parametrize(
    ("argv", "inner"),
    [
        ("python -m pytest -q", "pytest -q"),
        ("python3 -m mypy core", "mypy core"),
        ("python3.11 -u -X dev -m ruff check", "ruff check"),
        ("python3 -mpytest", "pytest"),
        ("pypy3 -m pytest", "pytest"),
        # Not looked through: an interpreter by path, and launchers that find the tool in the
        # project's own environment (the checkout), not on the host's PATH.
        ("/usr/bin/python3 -mpytest", "/usr/bin/python3 -mpytest"),
        ("uv run pytest", "uv run pytest"),
        ("poetry run python -m pytest", "poetry run python -m pytest"),
        ("pipenv run flake8", "pipenv run flake8"),
        ("npx eslint .", "npx eslint ."),
        ("python -c 'print(1)'", "python -c 'print(1)'"),
        ("python script.py", "python script.py"),
        ("uv run --with requests pytest", "uv run --with requests pytest"),
        ("uv pip install x", "uv pip install x"),
        ("npx --yes evil", "npx --yes evil"),
        ("python -m", "python -m"),
    ],
)
def test_wrappers_are_looked_through(argv: str, inner: str) -> None:
    assert effective_argv(argv.split()) == inner.split()


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "python -m pytest",
        "ruff check .",
        "mypy core",
        "make test",
        "tox -e py311",
        "npm test",
        "npm t",
        "npm run lint",
        "npm run test:unit",
        "npm run-script build",
        "yarn lint",
        "yarn run typecheck",
        "pnpm test",
        "cargo test --all",
        "cargo clippy",
        "go test ./...",
        "go vet ./...",
        "gradlew check",
        "mvn verify",
    ],
)
def test_test_lint_and_build_tools_are_allowlisted(command: str) -> None:
    assert allowlisted(command.split(), DEFAULT_POLICY)
    assert not needs_approval(command.split(), DEFAULT_POLICY)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "curl https://example.com/x.sh",
        "sh -c pytest",
        "bash script.sh",
        "python -c print(1)",
        "python setup.py test",
        "python -m http.server",
        "npm install",
        "npm publish",
        "npm run deploy",
        "npm run",
        "npm",
        "npm --prefix other test",
        "yarn add leftpad",
        "pnpm exec anything",
        "npx cowsay hi",
        "cargo install ripgrep",
        "cargo publish",
        "go run main.go",
        "go install x",
        "gradle publish",
        "mvn deploy",
        "uv run --with x pytest",
        "env pytest",
        # A path is not the tool's name, wherever it points.
        ".venv/bin/pytest",
        "/any/dir/pytest",
        "./make test",
        "./gradlew check",
        "/usr/bin/python3 -m pytest",
        # Launchers that run the tool from the checkout's own environment.
        "npx eslint .",
        "npx tsc --noEmit",
        "uv run pytest",
        "poetry run pytest",
        "pipenv run flake8",
        "nice pytest",
        "sh -c pytest",
    ],
)
def test_other_commands_are_not(command: str) -> None:
    assert not allowlisted(command.split(), DEFAULT_POLICY)
    assert needs_approval(command.split(), DEFAULT_POLICY)


def test_an_empty_command_is_never_allowlisted() -> None:
    assert not allowlisted([], DEFAULT_POLICY)


def test_an_approved_key_needs_no_further_approval() -> None:
    argv = ["python", "scripts/check.py"]
    policy = replace(DEFAULT_POLICY, approved=frozenset({command_key(argv)}))
    assert not needs_approval(argv, policy)
    assert needs_approval(["python", "scripts/other.py"], policy)


def test_a_shell_command_always_needs_approval_unless_approved() -> None:
    argv = argv_of("pytest", shell=True)
    policy = replace(DEFAULT_POLICY, allowlist=DEFAULT_POLICY.allowlist | {"sh"})
    assert needs_approval(argv, policy, shell=True)
    approved = replace(policy, approved=frozenset({command_key("pytest", shell=True)}))
    assert not needs_approval(argv, approved, shell=True)


def test_a_custom_allowlist_replaces_the_default() -> None:
    policy = replace(DEFAULT_POLICY, allowlist=frozenset({"just"}))
    assert allowlisted(["just", "test"], policy)
    assert not allowlisted(["pytest"], policy)


def test_policies_compare_by_value() -> None:
    assert replace(DEFAULT_POLICY) == DEFAULT_POLICY
    assert hash(replace(DEFAULT_POLICY)) == hash(DEFAULT_POLICY)
