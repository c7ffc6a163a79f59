"""Which criterion commands may run without an operator's approval.

Criteria come from task text, so a command in a criterion is, in the worst case, whatever a task
author wrote. The allowlist limits unattended runs to test, lint, type-check and build tools; any
other command waits for an operator to approve its exact argument list (`command_key`).

The allowlist is not a sandbox for the repository's own code: every test runner executes the
checkout (``conftest.py``, ``Makefile``, ``package.json`` scripts), so what it guards against is a
criterion naming an arbitrary program (``curl ... | sh``, ``rm -rf ~``), not a hostile checkout.
For the same reason a tool is recognised by its basename wherever it lives (``.venv/bin/pytest``,
``./gradlew``), and arguments are not inspected: several allowed tools can be pointed at other
code by an option (``make -f``, ``pytest -p``). The allowlist keeps a criterion from naming an
arbitrary program; approval is where a person reads a command that is not on it.

Default allowlist (`DEFAULT_ALLOWLIST`) — these run with any arguments:

* Python: pytest, py.test, ruff, flake8, mypy, pyright, pylint, black, isort, tox, nox
* JavaScript/TypeScript: eslint, tsc, jest, vitest, prettier
* Other: make

These run only with a listed first argument (`DEFAULT_SUBCOMMANDS`), because their other
subcommands install packages, publish or run arbitrary programs:

* cargo: test, build, check, clippy, fmt, nextest
* go: test, build, vet
* gradle, gradlew: test, build, check
* mvn, mvnw: test, verify, compile, package
* npm: ``test``/``t``, or ``run``/``run-script`` with a script named in `SCRIPT_NAMES`
* yarn, pnpm: the same, and also ``yarn lint`` style shorthands for those script names

Wrappers are looked through, so the tool they start is what is checked: ``python -m X``
(any ``python``/``python3.N``/``pypy`` name), ``uv run X``, ``poetry run X``, ``pipenv run X``
and ``npx X``. A wrapper with options this module does not understand is not looked through,
and so needs approval. A command through a shell (``shell: true``) always needs approval.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from core.contracts.patterns import SEARCH_TIMEOUT_S

SHELL: Final = "/bin/sh"

DEFAULT_ALLOWLIST: Final = frozenset(
    {
        "pytest",
        "py.test",
        "ruff",
        "flake8",
        "mypy",
        "pyright",
        "pylint",
        "black",
        "isort",
        "tox",
        "nox",
        "eslint",
        "tsc",
        "jest",
        "vitest",
        "prettier",
        "make",
        "cargo",
        "go",
        "gradle",
        "gradlew",
        "mvn",
        "mvnw",
        "npm",
        "yarn",
        "pnpm",
    }
)

#: package.json script names that only test, lint, type-check or build (``test:unit`` counts
#: as ``test``). Scripts are repository code, like a Makefile; the names keep ``npm run deploy``
#: and ``npm run release`` out of unattended runs.
SCRIPT_NAMES: Final = frozenset(
    {"test", "lint", "build", "check", "typecheck", "type-check", "types", "format"}
)

_NPM_STYLE: Final = frozenset({"test", "t", "run", "run-script"})

DEFAULT_SUBCOMMANDS: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "cargo": frozenset({"test", "build", "check", "clippy", "fmt", "nextest"}),
        "go": frozenset({"test", "build", "vet"}),
        "gradle": frozenset({"test", "build", "check"}),
        "gradlew": frozenset({"test", "build", "check"}),
        "mvn": frozenset({"test", "verify", "compile", "package"}),
        "mvnw": frozenset({"test", "verify", "compile", "package"}),
        "npm": _NPM_STYLE,
        "yarn": _NPM_STYLE | SCRIPT_NAMES,
        "pnpm": _NPM_STYLE | SCRIPT_NAMES,
    }
)

_PYTHON = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)*)?w?")
#: Interpreter options that take no value and cannot change which module runs.
_PYTHON_FLAGS: Final = frozenset({"-u", "-B", "-E", "-s", "-S", "-O", "-OO", "-q", "-I", "-P"})
_PYTHON_VALUED: Final = frozenset({"-W", "-X"})
_RUNNERS: Final = frozenset({"uv", "poetry", "pipenv"})
#: ``uv run`` options that take no value; anything else makes the command unresolvable.
_RUNNER_FLAGS: Final = frozenset(
    {"--frozen", "--locked", "--offline", "--no-sync", "-q", "--quiet"}
)


@dataclass(frozen=True)
class VerifyPolicy:
    """What verification may run unattended, for how long, and how much output it keeps."""

    allowlist: frozenset[str] = DEFAULT_ALLOWLIST
    """Executable basenames that run without approval (after looking through wrappers)."""
    timeout_s: float = 300
    """Per-criterion time limit; a criterion that sets its own ``timeout_s`` uses that."""
    pattern_timeout_s: float = SEARCH_TIMEOUT_S
    """Time limit of one pattern search (`core.contracts.patterns.search`)."""
    output_cap: int = 4096
    """How many bytes of the end of a command's combined output to keep."""
    approved: frozenset[str] = frozenset()
    """`command_key` values an operator approved; they run even if not allowlisted."""
    env_passthrough: frozenset[str] = frozenset()
    """Extra environment variables to pass to commands; names that look secret never pass."""
    subcommands: Mapping[str, frozenset[str]] = field(
        default_factory=lambda: DEFAULT_SUBCOMMANDS, hash=False
    )
    """Tools allowed only with one of these first arguments (see the module docstring)."""


DEFAULT_POLICY: Final = VerifyPolicy()


def argv_of(command: str | Sequence[str], *, shell: bool = False) -> list[str]:
    """The argument list that running ``command`` executes.

    A string is split like a POSIX shell would split it, unless ``shell`` is set, in which case
    it is handed to ``/bin/sh -c`` whole. A list given with ``shell`` is quoted back into one
    script. Raises ValueError for a string with unbalanced quotes.
    """
    if shell:
        script = command if isinstance(command, str) else shlex.join(command)
        return [SHELL, "-c", script]
    if isinstance(command, str):
        return shlex.split(command)
    return list(command)


def command_key(command: str | Sequence[str], *, shell: bool = False) -> str:
    """A stable key for approving ``command``: the JSON of the argument list it executes.

    ``"pytest -q"`` and ``["pytest", "-q"]`` share a key because they run the same thing; a shell
    command's key names the shell, so approving it never approves the same text without one.
    Raises ValueError for a string with unbalanced quotes.
    """
    return json.dumps(argv_of(command, shell=shell))


def _basename(executable: str) -> str:
    return executable.replace("\\", "/").rsplit("/", 1)[-1]


def _after_python(args: Sequence[str]) -> list[str] | None:
    """What ``python <args>`` runs: the module for ``-m X``, else None (the interpreter)."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-m" and index + 1 < len(args):
            return list(args[index + 1 :])
        if arg.startswith("-m") and len(arg) > 2:
            return [arg[2:], *args[index + 1 :]]
        if arg in _PYTHON_FLAGS:
            index += 1
        elif arg in _PYTHON_VALUED:
            index += 2
        else:
            return None
    return None


def _after_runner(args: Sequence[str]) -> list[str] | None:
    """What ``uv run <args>`` (or poetry/pipenv) runs, or None when it cannot be told."""
    if not args or args[0] != "run":
        return None
    rest = list(args[1:])
    while rest and rest[0] in _RUNNER_FLAGS:
        rest.pop(0)
    if not rest or rest[0].startswith("-"):
        return None
    return rest


def effective_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with wrappers (``python -m``, ``uv run``, ``npx``) peeled off, repeatedly."""
    current = list(argv)
    for _ in range(4):  # wrappers nest rarely; a bound keeps a silly chain from looping
        if not current:
            return current
        name = _basename(current[0])
        inner: list[str] | None = None
        if _PYTHON.fullmatch(name):
            inner = _after_python(current[1:])
        elif name in _RUNNERS:
            inner = _after_runner(current[1:])
        elif name == "npx" and len(current) > 1 and not current[1].startswith("-"):
            inner = current[1:]
        if inner is None:
            return current
        current = inner
    return current


def _script_allowed(name: str) -> bool:
    return name.split(":", 1)[0] in SCRIPT_NAMES


def _subcommand_allowed(tool: str, args: Sequence[str], allowed: frozenset[str]) -> bool:
    if not args or args[0] not in allowed:
        return False
    if tool in ("npm", "yarn", "pnpm") and args[0] in ("run", "run-script"):
        return len(args) > 1 and _script_allowed(args[1])
    return True


def allowlisted(argv: Sequence[str], policy: VerifyPolicy) -> bool:
    """Whether ``argv`` may run without approval under ``policy``'s allowlist."""
    inner = effective_argv(argv)
    if not inner:
        return False
    tool = _basename(inner[0])
    if tool not in policy.allowlist:
        return False
    allowed = policy.subcommands.get(tool)
    return allowed is None or _subcommand_allowed(tool, inner[1:], allowed)


def needs_approval(argv: Sequence[str], policy: VerifyPolicy, *, shell: bool = False) -> bool:
    """Whether running ``argv`` must wait for an operator (not allowlisted, not yet approved)."""
    if json.dumps(list(argv)) in policy.approved:
        return False
    return shell or not allowlisted(argv, policy)
