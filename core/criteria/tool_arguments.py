"""Which arguments keep an allowlisted tool from running unattended.

The allowlist (`core.criteria.allowlist`) vouches for a program; this module vouches for what
the command asks it to do. A criterion comes from task text, so its arguments are, in the worst
case, whatever a task author wrote. Two kinds need an operator's approval:

* **A path outside the checkout**, in any argument of a listed tool: an absolute path, ``~``, or
  a ``..`` that climbs above the command's working folder, whether it stands alone, follows an
  ``=`` (``--rootdir=/srv``) or a ``:`` (``--cov-report=html:/tmp/x``), or is glued to a short
  option (``-C/tmp/evil``). Such a path lets the command read, write or run what the checkout does
  not hold (``make -C /tmp/evil``, ``pytest /tmp/evil/test_x.py``). A path inside the checkout is
  the repository's own business, like its ``Makefile`` and ``conftest.py``.
* **An option that has the tool load or run code the command names** (`ToolArgs.runs_code`):
  make's ``--eval``, pytest's ``-p`` plugins, cargo's ``--config``, go's ``-exec``, npm's
  ``--script-shell``… — whatever its value, unless the value is one of the tool's own built-in
  ones (`ToolArgs.safe_values`: ``pytest -p no:cacheprovider``, ``eslint -f json``).

Each tool's options are data, one `ToolArgs` per program in `TOOLS`, read the way the tool's
own parser reads them: short options glued into clusters (``make -sE…``), unique prefixes of
long options (GNU make, npm and argparse accept ``--ev`` for ``--eval``), go's single dash for
long options, jest's ``--setup-files`` for ``--setupFiles``. When in doubt a word is read as an
option, so a doubt costs an approval, never an unattended run. Arguments after ``--`` are read
the same way: a script or a test binary gets them, and this module cannot know its options.

Tools added by an operator (``[criteria] allow``) have no table and are not inspected: the
operator vouched for them with whatever arguments they are given.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Final


@dataclass(frozen=True)
class ToolArgs:
    """How one tool reads its arguments, and which of them run code the command names."""

    runs_code: frozenset[str] = frozenset()
    """Options (``-E``, ``--eval``) with which the tool loads or runs code named by the command."""
    safe_values: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    """For some of `runs_code`: a regular expression of values that load nothing (built-in
    plugins, reporters), matched whole."""
    valued: frozenset[str] = frozenset()
    """Options that take a value: the rest of a short cluster, or the next word."""
    clusters: bool = True
    """Whether single-dash letters combine (``-ks`` is ``-k -s``), as getopt and argparse read."""
    abbreviates: bool = False
    """Whether a unique prefix of a long option stands for it (getopt_long, argparse, nopt)."""
    single_dash_long: bool = False
    """Whether ``-name`` is a long option (go's flag package)."""
    fold: bool = False
    """Whether long options compare without case, ``-`` and ``_`` (yargs, cac, npm config)."""
    goals: frozenset[str] | None = None
    """When set, every positional word must be one of these (maven phases, gradle tasks)."""
    code_words: frozenset[str] = frozenset()
    """Positional words that run any program (``tox exec``)."""
    make_variables: bool = False
    """Whether ``NAME=value`` words set variables (make), which can run code."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Python's and pytest's ``-W action:message:category:module:lineno``: a category with a dot is
#: imported to be found, which runs that module.
_WARNING_FILTER = r"[^:]*(?::[^:]*(?::\w*(?::[^:]*(?::[^:]*)?)?)?)?"
#: pytest ``-o`` ini keys that load nothing and name no path.
_PYTEST_INI = (
    r"(?:log_cli|log_cli_level|log_level|log_format|log_date_format|console_output_style"
    r"|junit_family|junit_suite_name|junit_logging|xfail_strict|empty_parameter_set_mark"
    r"|verbosity_assertions|verbosity_test_cases|asyncio_mode|faulthandler_timeout)=[\w.:%-]*"
)
_PYTEST = ToolArgs(
    runs_code=_words("-p --pyargs -o --override-ini --pdbcls --tx --pastebin -W --pythonwarnings"),
    safe_values={
        "-p": r"no:[\w.-]+",
        "-W": _WARNING_FILTER,
        "--pythonwarnings": _WARNING_FILTER,
        "-o": _PYTEST_INI,
        "--override-ini": _PYTEST_INI,
    },
    valued=_words("-k -m -p -c -o -W -r -n"),
)
_NPM = ToolArgs(
    # npm reads any --key=value as its configuration; these keys name a program or code to run.
    # ``--config.`` is pnpm's --config.KEY=VALUE, any key.
    runs_code=_words(
        "--script-shell --shell --node-options --onload-script --init-module --git --editor "
        "--browser --viewer --use-node-version --node-gyp --inspect --inspect-brk --yarn-path "
        "--config. --call -c"
    ),
    valued=_words("-C -w -F"),
    abbreviates=True,
    fold=True,
)
_GRADLE = ToolArgs(
    goals=_words("test build check clean assemble"),
    clusters=False,
    valued=_words(
        "-b -c -D -g -I -p -P -x -M -F --build-file --settings-file --system-prop "
        "--gradle-user-home --init-script --project-dir --project-prop --exclude-task "
        "--include-build --project-cache-dir --console --warning-mode --max-workers --priority "
        "--tests --write-verification-metadata --dependency-verification --update-locks "
        "--configuration-cache-problems"
    ),
)
_MAVEN = ToolArgs(
    goals=_words("clean validate compile test-compile test package verify"),
    clusters=False,
    valued=_words(
        "-f -s -gs -t -gt -D -P -pl -rf -T -l -b -emp -ep --file --settings --global-settings "
        "--toolchains --global-toolchains --define --activate-profiles --projects --resume-from "
        "--threads --log-file --builder --color --encrypt-master-password --encrypt-password"
    ),
)
_ESLINT_FORMATS = (
    r"checkstyle|compact|html|jslint-xml|json|json-with-metadata|junit|stylish|tap|unix"
    r"|visualstudio"
)
_PYLINT_REPORTERS = r"[a-z0-9]+(?::[^,]*)?(?:,[a-z0-9]+(?::[^,]*)?)*"

#: Every tool of the default allowlist, by the name it is run by.
TOOLS: Final[Mapping[str, ToolArgs]] = MappingProxyType(
    {
        "pytest": _PYTEST,
        "py.test": _PYTEST,
        "ruff": ToolArgs(valued=_words("-o")),
        "flake8": ToolArgs(valued=_words("-j"), abbreviates=True),
        "mypy": ToolArgs(
            runs_code=_words("--python-executable --install-types"),
            valued=_words("-m -p -c"),
            abbreviates=True,
        ),
        # pyright runs the interpreter it is given, to ask it for its search paths.
        "pyright": ToolArgs(runs_code=_words("--pythonpath"), valued=_words("-p -t -v")),
        "pylint": ToolArgs(
            # A reporter named module.Class is imported.
            runs_code=_words("--init-hook --load-plugins --output-format -f"),
            safe_values={"--output-format": _PYLINT_REPORTERS, "-f": _PYLINT_REPORTERS},
            valued=_words("-j -d -e -f -r"),
            abbreviates=True,
        ),
        "black": ToolArgs(valued=_words("-l -t -c -W")),
        "isort": ToolArgs(abbreviates=True),
        "tox": ToolArgs(
            runs_code=_words("-x --override --force-dep -i --index-url"),
            valued=_words("-e -c -x -i"),
            code_words=_words("e exec"),
            abbreviates=True,
        ),
        "nox": ToolArgs(valued=_words("-s -e -k -t -f -p -P"), abbreviates=True),
        "eslint": ToolArgs(
            runs_code=_words("--plugin --parser --inspect-config -f --format"),
            safe_values={"-f": _ESLINT_FORMATS, "--format": _ESLINT_FORMATS},
            valued=_words("-c -f -o"),
        ),
        "tsc": ToolArgs(valued=_words("-p -t -m")),
        "jest": ToolArgs(
            runs_code=_words(
                "--testRunner --runner --testEnvironment --globalSetup --globalTeardown "
                "--setupFiles --setupFilesAfterEnv --transform --reporters --resolver "
                "--testResultsProcessor --watchPlugins --snapshotResolver --testSequencer "
                "--filter --prettierPath --preset --haste --moduleLoader --dependencyExtractor "
                "--config -c"
            ),
            # A config given inline (JSON) can name any module; a config file is a path.
            safe_values={
                "--testEnvironment": r"node|jsdom",
                "--reporters": r"default|summary|github-actions",
                "--config": r"[^{\[].*",
                "-c": r"[^{\[].*",
            },
            valued=_words("-c -t"),
            fold=True,
        ),
        "vitest": ToolArgs(
            # Besides modules to load: a debugger port, an API or UI server, a browser.
            runs_code=_words(
                "--inspect --inspect-brk --api --ui --open --browser --reporter --environment "
                "--pool --globalSetup --setupFiles --coverage.customProviderModule"
            ),
            safe_values={
                "--reporter": r"default|basic|verbose|dot|json|junit|tap|tap-flat"
                r"|hanging-process|github-actions|html|blob|tree",
                "--environment": r"node|jsdom|happy-dom|edge-runtime",
                "--pool": r"threads|forks|vmThreads|vmForks",
            },
            valued=_words("-c -r -t"),
            fold=True,
        ),
        "prettier": ToolArgs(runs_code=_words("--plugin --plugin-search-dir --plugin-search")),
        "make": ToolArgs(
            runs_code=_words("-E --eval"),
            valued=_words(
                "-C -f -I -o -W -j -l -O --directory --file --makefile --include-dir --old-file "
                "--assume-old --what-if --new-file --assume-new"
            ),
            abbreviates=True,
            make_variables=True,
        ),
        "cargo": ToolArgs(runs_code=_words("--config -Z"), valued=_words("-p -j -F -Z -C")),
        "go": ToolArgs(
            # -ldflags names the external linker with -extld (and its archiver with -extar).
            runs_code=_words("--exec --toolexec --vettool --ldflags --gccgoflags"),
            safe_values={"--ldflags": r"(?s)(?!.*-ext(?:ld|ar)\b).*"},
            clusters=False,
            single_dash_long=True,
        ),
        "gradle": _GRADLE,
        "gradlew": _GRADLE,
        "mvn": _MAVEN,
        "mvnw": _MAVEN,
        "npm": _NPM,
        "yarn": _NPM,
        "pnpm": _NPM,
    }
)

#: The interpreter's own options before ``-m`` (`core.criteria.allowlist` looks through them).
PYTHON_OPTIONS: Final = ToolArgs(
    runs_code=_words("-W"),
    safe_values={"-W": _WARNING_FILTER},
    valued=_words("-W -X"),
    clusters=False,
)

# Make variables that change how make itself runs, or what it reads.
_MAKE_SPECIAL: Final = _words(
    "SHELL .SHELLFLAGS MAKESHELL MAKEFLAGS MFLAGS GNUMAKEFLAGS MAKEFILES MAKEOVERRIDES MAKE "
    "MAKE_COMMAND MAKECMDGOALS MAKEFILE_LIST .RECIPEPREFIX .DEFAULT_GOAL .EXTRA_PREREQS "
    ".INCLUDE_DIRS .ONESHELL .SUFFIXES VPATH"
)
_MAKE_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# A value make passes on as plain text: no $(…) to expand, nothing a recipe's shell would read
# as syntax (quotes, ;, |, &, <, >, backquote, backslash, #, globs).
_MAKE_PLAIN = re.compile(r"[A-Za-z0-9_.,+/:@%= -]*")
# How a word is cut into the pieces that might be paths: "--cov-report=html:/tmp/x",
# "a,b", a quoted TOML value ("extend = '/etc/x'").
_PIECES = re.compile(r"[=:,\s'\"()]+")


_RUNS_CODE = "loads or runs code the command names"


def _climbs(piece: str, base: str) -> bool:
    """Whether the relative path ``piece``, from ``base`` (the working folder's path inside the
    checkout), climbs out of the checkout with ``..``."""
    if ".." not in piece:
        return False
    joined = posixpath.normpath(posixpath.join(base, piece))
    return joined == ".." or joined.startswith("../")


def _glued(word: str, rules: ToolArgs | None) -> str | None:
    """The value glued to a short option in ``word`` (``-C/abs``, ``-sC/abs``), or None.

    In a cluster the value starts after the first letter that takes one, or at the first
    character that is no option letter (a ``/``, ``.`` or ``~`` of a path given to an option
    the table does not know).
    """
    if not word.startswith("-") or word.startswith("--") or len(word) < 3:
        return None
    if rules is None or not rules.clusters:
        return word[2:]
    for at in range(1, len(word)):
        option = "-" + word[at]
        if option in rules.valued or option in rules.runs_code:
            return word[at + 1 :]
        if not word[at].isalnum():
            return word[at:]
    return None


def outside_path(word: str, base: str = ".", rules: ToolArgs | None = None) -> str | None:
    """The part of ``word`` that names a path outside the checkout, or None.

    Args:
        base: the command's working folder, relative to the checkout (``.`` for its top).
        rules: how the tool reads a short-option cluster, to find a value glued into it.
    """
    candidates = [word]
    glued = _glued(word, rules)
    if glued:
        candidates.append(glued)
    for candidate in candidates:
        for piece in _PIECES.split(candidate):
            if piece.startswith(("/", "~")) or _climbs(piece, base):
                return piece
    return None


def _key(name: str, rules: ToolArgs) -> str:
    return name.replace("-", "").replace("_", "").lower() if rules.fold else name


@cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _long_option(name: str, rules: ToolArgs) -> str | None:
    """The option of `ToolArgs.runs_code` that the long option ``name`` (no dashes) is, or None.

    A dotted name (``--api.port``) counts as its first part too, an option written with a final
    dot (``--config.``) stands for its dotted keys only, and a tool that abbreviates reads any
    prefix of an option as that option.
    """
    key = _key(name, rules)
    head = _key(name.split(".", 1)[0], rules)
    for option in rules.runs_code:
        if not option.startswith("--"):
            continue
        if option.endswith("."):  # only its dotted keys: ``--config.x=y``, not ``--config``
            if key.startswith(_key(option[2:], rules)):
                return option
            continue
        wanted = _key(option[2:], rules)
        if wanted in (key, head):
            return option
        if rules.abbreviates and key and wanted.startswith(key):
            return option
    return None


class _Reader:
    """One pass over a tool's arguments, in the tool's own way of reading them."""

    def __init__(self, tool: str, rules: ToolArgs) -> None:
        self.tool = tool
        self.rules = rules
        self.pending: str | None = None
        """A `runs_code` option whose value is the next word."""
        self.pending_written = ""
        self.value_next = False
        """The next word is an option's value, not a positional word."""
        self.ended = False
        """``--`` was read: every word after it is positional."""

    def _code(self, option: str, value: str | None, written: str, sep: str = " ") -> str | None:
        """Why ``option``, ``written`` so, with ``value`` (None: it is the next word) needs
        approval, or None for a value in its `ToolArgs.safe_values`."""
        safe = self.rules.safe_values.get(option)
        if safe is not None and value is None:
            self.pending, self.pending_written = option, written
            return None
        if safe is not None and value is not None and _pattern(safe).fullmatch(value):
            return None
        shown = written if value is None else f"{written}{sep}{value}"
        named = option.rstrip(".")
        alias = "" if written.startswith(named) else f" ({self.tool}'s `{named}`)"
        return f"passes `{shown}`{alias}, with which {self.tool} {_RUNS_CODE}"

    def _long(self, word: str) -> str | None:
        written, eq, value = word.partition("=")
        name = written.lstrip("-")
        option = _long_option(name, self.rules)
        if option is not None:
            return self._code(option, value if eq else None, written, "=")
        self.value_next = not eq and f"--{name}" in self.rules.valued
        return None

    def _short(self, word: str) -> str | None:
        rules = self.rules
        if not rules.clusters:
            option, eq, value = word.partition("=")
            if option in rules.runs_code:
                return self._code(option, value if eq else None, option, "=")
            if word[:2] in rules.runs_code:
                return self._code(word[:2], word[2:], word[:2], "")
            self.value_next = not eq and option in rules.valued
            return None
        for at in range(1, len(word)):
            option, rest = "-" + word[at], word[at + 1 :]
            if option in rules.runs_code:
                return self._code(option, rest or None, option, "")
            if option in rules.valued:
                self.value_next = not rest
                return None
        return None

    def _positional(self, word: str) -> str | None:
        rules = self.rules
        if word in rules.code_words:
            return f"asks {self.tool} for {word!r}, which runs any program"
        if rules.make_variables and "=" in word:
            return _make_variable(word)
        if rules.goals is not None and word not in rules.goals:
            allowed = ", ".join(sorted(rules.goals))
            return f"asks {self.tool} for {word!r}; only {allowed} run unattended"
        return None

    def read(self, word: str) -> str | None:
        """Why ``word`` (the next argument) needs approval, or None."""
        if self.pending is not None:
            option, self.pending = self.pending, None
            return self._code(option, word, self.pending_written)
        value, self.value_next = self.value_next, False
        if word.startswith("@"):  # argparse reads a file of arguments wherever it stands
            return f"passes {word!r}, which reads more arguments from a file"
        if self.ended or (value and not word.startswith("-")):
            return None if value else self._positional(word)
        if word == "--":
            # What follows goes to a script or a test binary whose options this table does not
            # know: paths and positional words are still read, options are not.
            self.ended = True
            return None
        if word == "-":
            return None
        if word.startswith("--") or (self.rules.single_dash_long and word.startswith("-")):
            return self._long(word)
        if word.startswith("-"):
            return self._short(word)
        return self._positional(word)


def _make_variable(word: str) -> str | None:
    """Why the make argument ``NAME=value`` needs approval, or None.

    make expands a ``:=`` value at once and runs a ``!=`` value in a shell, a name is expanded
    too, and a recipe pastes a value into its shell: only ``NAME=plain text`` runs unattended.
    """
    name, _, value = word.partition("=")
    if (
        _MAKE_NAME.fullmatch(name) is None
        or name in _MAKE_SPECIAL
        or _MAKE_PLAIN.fullmatch(value) is None
    ):
        return f"sets the make variable `{word}`, which can run code or change how make runs"
    return None


def argument_problem(tool: str, args: Sequence[str], *, base: str = ".") -> str | None:
    """Why running the allowlisted ``tool`` with ``args`` needs an operator, or None.

    Args:
        tool: The program's bare name (``python -m X`` already looked through to ``X``).
        args: Its arguments.
        base: The working folder's path inside the checkout (``.``: its top), which a ``..``
            climbs from.

    Returns:
        The end of a sentence that starts with the command (``names a path outside the
        checkout ('/tmp/evil')``), or None when nothing in ``args`` needs approval; always None
        for a tool `TOOLS` does not hold.
    """
    rules = TOOLS.get(tool)
    return None if rules is None else _problem(tool, rules, args, base)


def interpreter_problem(options: Sequence[str], *, base: str = ".") -> str | None:
    """Why the interpreter's own ``options`` (before ``-m``) need an operator, or None."""
    return _problem("python", PYTHON_OPTIONS, options, base)


def _problem(tool: str, rules: ToolArgs, args: Sequence[str], base: str) -> str | None:
    reader = _Reader(tool, rules)
    for word in args:
        outside = outside_path(word, base, rules)
        if outside is not None:
            return f"names a path outside the checkout ({outside!r})"
        problem = reader.read(word)
        if problem is not None:
            return problem
    return None
