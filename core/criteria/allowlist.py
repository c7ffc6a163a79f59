"""Which criterion commands may run without an operator's approval.

Criteria come from task text, so a command in a criterion is, in the worst case, whatever a task
author wrote. The allowlist limits unattended runs to test, lint, type-check and build tools; any
other command waits for an operator to approve its exact argument list (`command_key`).

The allowlist vouches for a *program*: a tool named by its bare name and found on the host's
own ``PATH`` (absolute folders only, none inside the checkout: `runner.search_path`), which is
then executed by that absolute path. Anything else waits for approval, because it would run a
program the checkout (that is, a worker) chose:

* a path (``/any/dir/pytest``, ``./make``, ``.venv/bin/pytest``, ``./gradlew``): only the name
  on the list is vouched for, not a file that happens to have that name;
* a name that resolves into the checkout (through a symlink on ``PATH``), and ``python -m X``
  when the working directory holds an ``X`` (``-m`` imports from there first);
* a launcher that finds the tool in the project's own environment: ``npx X`` (the checkout's
  ``node_modules/.bin``), ``uv run X``, ``poetry run X``, ``pipenv run X`` (the project's
  virtual environment); and ``env X``, ``sh -c``, ``nice X`` and the like, which are not tools.

The arguments of a listed tool are read too (`core.criteria.tool_arguments`, a table per
tool): a path outside the checkout (``make -C /tmp/evil``, ``pytest /tmp/x/test_a.py``,
``--rootdir=/``, ``-C/abs``) or an option that has the tool load or run code the command names
(``make --eval``, ``pytest -p``, ``cargo --config``, ``go test -exec``) waits for approval.

What an allowed tool then does with the checkout is the repository's code: every test runner
executes it (``conftest.py``, a ``Makefile``, ``package.json`` scripts). The allowlist keeps a
criterion from naming an arbitrary program or reaching past the checkout; it is no sandbox, and
approval is where a person reads a command that is not on it.

Default allowlist (`DEFAULT_ALLOWLIST`) — these run with any arguments the tables allow:

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

``python -m X`` (any bare ``python``/``python3.N``/``pypy`` name) is looked through, so ``X``
is what is checked: the interpreter comes from ``PATH`` and the module from its installation.
Interpreter options this module does not understand stop the look-through, and so need
approval. A command through a shell (``shell: true``) always needs approval.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

from core.contracts.patterns import SEARCH_TIMEOUT_S
from core.criteria.tool_arguments import argument_problem, interpreter_problem

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
    unchecked_may_pass: bool = True
    """Whether a command criterion not run, because the checkout holds no repository, lets the
    run through (marked unverified); ``[git] unverified_may_review``."""


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


def _is_bare(name: str) -> bool:
    """A program named the way ``PATH`` finds it: no folder, no backslash, not empty."""
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")


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


def effective_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``python -m`` peeled off: the tool a command really starts.

    Only a bare interpreter name is looked through; ``/some/python -m pytest`` stays as it is.
    """
    current = list(argv)
    if current and _is_bare(current[0]) and _PYTHON.fullmatch(current[0]):
        inner = _after_python(current[1:])
        if inner:
            return inner
    return current


def _script_allowed(name: str) -> bool:
    return name.split(":", 1)[0] in SCRIPT_NAMES


def _subcommand_allowed(tool: str, args: Sequence[str], allowed: frozenset[str]) -> bool:
    if not args or args[0] not in allowed:
        return False
    if tool in ("npm", "yarn", "pnpm") and args[0] in ("run", "run-script"):
        return len(args) > 1 and _script_allowed(args[1])
    return True


NOT_LISTED: Final = "is not on the allowlist"


def approval_reason(argv: Sequence[str], policy: VerifyPolicy, *, base: str = ".") -> str | None:
    """Why ``argv`` cannot run unattended, judged from its words, or None when it can.

    Args:
        base: The working folder's path inside the checkout, which ``..`` climbs from.

    Returns:
        The end of a sentence about the command: `NOT_LISTED`, or what its arguments do
        (`core.criteria.tool_arguments`). Says nothing yet about where the tool is: `decide`
        also finds it on the host's ``PATH``.
    """
    if not argv or not _is_bare(argv[0]):
        return NOT_LISTED
    inner = effective_argv(argv)
    tool = inner[0] if inner else ""
    if not _is_bare(tool) or tool not in policy.allowlist:
        return NOT_LISTED
    allowed = policy.subcommands.get(tool)
    if allowed is not None and not _subcommand_allowed(tool, inner[1:], allowed):
        return NOT_LISTED
    # The interpreter's own options, when ``python -m`` was looked through.
    options = list(argv[1 : len(argv) - len(inner)]) if len(inner) < len(argv) else []
    return interpreter_problem(options, base=base) or argument_problem(tool, inner[1:], base=base)


def allowlisted(argv: Sequence[str], policy: VerifyPolicy, *, base: str = ".") -> bool:
    """Whether ``argv`` names an allowlisted tool (by its bare name) with allowed arguments."""
    return approval_reason(argv, policy, base=base) is None


def needs_approval(argv: Sequence[str], policy: VerifyPolicy, *, shell: bool = False) -> bool:
    """Whether running ``argv`` must wait for an operator (not allowlisted, not yet approved).

    Judged from the words alone; `decide` also looks at where the program is.
    """
    if json.dumps(list(argv)) in policy.approved:
        return False
    return shell or not allowlisted(argv, policy)


def approval_notes(
    criteria: Iterable[Mapping[str, Any]], policy: VerifyPolicy = DEFAULT_POLICY
) -> list[str]:
    """A note for each command criterion that will wait for an operator rather than run
    unattended, and why (judged from its words, as `approval_reason`), for the extraction's log.
    """
    notes: list[str] = []
    for criterion in criteria:
        command = criterion.get("command")
        if not isinstance(command, str | list) or not command:
            continue
        shell = criterion.get("shell") is True
        try:
            argv = argv_of(command, shell=shell)
        except ValueError:
            continue
        cwd = criterion.get("cwd")
        base = posixpath.normpath(cwd) if isinstance(cwd, str) and cwd else "."
        why = "runs through a shell" if shell else approval_reason(argv, policy, base=base)
        if why is not None and json.dumps(argv) not in policy.approved:
            notes.append(f"`{shlex.join(argv)}` waits for an operator's approval before it runs: "
                         f"it {why}")  # fmt: skip
    return notes


@dataclass(frozen=True)
class Decision:
    """Whether and how a criterion command runs, once its program has been looked for."""

    verdict: Literal["run", "needs_approval", "missing"]
    executable: str | None = None
    """For ``run``: the program to execute (absolute), so what was checked is what runs."""
    reason: str = ""
    """For ``needs_approval`` and ``missing``: why, as the end of a sentence."""


def _module_shadow(module: str, cwd: Path) -> str | None:
    """The entry in ``cwd`` that ``python -m module`` would import instead of the tool."""
    top = module.split(".", 1)[0]
    try:
        names = os.listdir(cwd)
    except OSError:
        return None
    return next((n for n in sorted(names) if n == top or n.startswith(top + ".")), None)


def _locate(name: str, search_path: str, checkout: Path | None) -> Decision:
    """``name`` on ``search_path``; refused if it resolves into ``checkout`` (when given)."""
    found = shutil.which(name, path=search_path)
    if found is None:
        return Decision("missing", reason=f"{name!r} is not on the host's PATH")
    if checkout is not None and Path(os.path.realpath(found)).is_relative_to(checkout):
        return Decision("needs_approval", reason=f"`{name}` resolves into the checkout ({found})")
    return Decision("run", executable=found)


def decide(
    argv: Sequence[str],
    policy: VerifyPolicy,
    *,
    shell: bool,
    search_path: str,
    cwd: Path,
    checkout: Path,
) -> Decision:
    """Whether ``argv`` runs now, and which program it executes.

    Args:
        argv: The command (for a shell command, the ``/bin/sh -c`` it becomes).
        policy: The allowlist, and the commands an operator approved.
        shell: Whether it runs through a shell.
        search_path: The ``PATH`` it gets (`runner.search_path`: absolute, outside the checkout).
        cwd: Its working directory.
        checkout: The run's checkout (resolved): no unattended program may come from there.

    Returns:
        ``run`` with the absolute program; ``needs_approval`` with the reason; or ``missing``
        when the program cannot be found at all (approving it would not help).
    """
    if not argv:
        return Decision("missing", reason="the command is empty")
    program = argv[0]
    if json.dumps(list(argv)) in policy.approved:
        # An operator read this exact command: it runs as written (a path is the cwd's).
        if _is_bare(program):
            return _locate(program, search_path, None)
        target = program if os.path.isabs(program) else os.path.join(cwd, program)
        if not os.path.isfile(target) or not os.access(target, os.X_OK):
            return Decision("missing", reason=f"{program!r} is not an executable file")
        return Decision("run", executable=target)
    if shell:
        return Decision("needs_approval", reason="runs through a shell")
    base = _base(cwd, checkout)
    problem = approval_reason(argv, policy, base=base)
    if problem is not None:
        if not _is_bare(program) and allowlisted([_basename(program), *argv[1:]], policy,
                                                 base=base):  # fmt: skip
            return Decision(
                "needs_approval",
                reason="names its program by path; only a tool's bare name, found on the "
                "host's PATH, runs unattended",
            )
        return Decision("needs_approval", reason=problem)
    located = _locate(program, search_path, checkout)
    if located.verdict != "run":
        return located
    inner = effective_argv(argv)
    if inner != list(argv):  # python -m X: the module is looked for in the cwd first
        shadow = _module_shadow(inner[0], cwd)
        if shadow is not None:
            return Decision(
                "needs_approval",
                reason=f"`-m {inner[0]}` would import {shadow!r} from the working directory",
            )
    return located


def _base(cwd: Path, checkout: Path) -> str:
    """``cwd`` as a path inside ``checkout`` (``.`` for its top, or when it is not inside)."""
    try:
        return Path(os.path.abspath(cwd)).relative_to(checkout).as_posix() or "."
    except ValueError:
        return "."


def _basename(executable: str) -> str:
    return executable.replace("\\", "/").rsplit("/", 1)[-1]
