"""Infer a repository's test and lint commands from the files at its root.

The constraint-extraction document asks for the universal test and lint criteria to use the
workspace's own commands, read from ``package.json``, ``pyproject.toml``, ``Cargo.toml`` and the
like. Commands are argument lists, never shell strings: they end up in criteria that are run
later, and nothing here should need a shell.

How a command is chosen, first match wins:

Tests
    1. pytest configured: ``[tool.pytest.ini_options]`` / ``[tool.pytest]`` in pyproject.toml,
       a ``pytest.ini``, ``[tool:pytest]`` in setup.cfg, ``[pytest]`` in tox.ini, or pytest among
       pyproject.toml's dependencies → ``pytest``
    2. package.json with a ``test`` script that is not npm's placeholder → ``npm test``
    3. Cargo.toml → ``cargo test``; 4. go.mod → ``go test ./...``
    5. a Makefile with a ``test`` target → ``make test``
    6. a Python project without pytest configuration → ``pytest``; 7. nothing → ``pytest``

Lint
    1. ruff configured (``[tool.ruff]``, ruff.toml, .ruff.toml) or a ruff dependency →
       ``ruff check .``
    2. flake8 configured (``[flake8]`` in setup.cfg or tox.ini, .flake8) or a dependency →
       ``flake8``
    3. package.json with a ``lint`` script → ``npm run lint``
    4. an ESLint configuration file → ``npx eslint .``
    5. Cargo.toml → ``cargo clippy -- -D warnings``; 6. go.mod → ``go vet ./...``
    7. a Makefile with a ``lint`` target → ``make lint``
    8. a Python project → ``ruff check .``; 9. nothing → ``ruff check .``

The last resorts are Python tools because this project's own fleet works on Python repositories
most; ``source`` says ``default`` when they were used so a reviewer can tell a guess from a
finding. Every file read is size-capped, and a file that cannot be parsed is skipped with a note
rather than failing: a broken manifest in a target repository must not stop a dispatch.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Larger manifests are not read. Real ones are a few KiB; the cap keeps a hostile file cheap.
READ_LIMIT = 256 * 1024

PYTEST = ["pytest"]
RUFF = ["ruff", "check", "."]
_NPM_PLACEHOLDER = "no test specified"
_PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini")
_MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
_ESLINT_CONFIGS = (
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
)
# A rule line: one or more target names, a colon that is not part of ``:=``.
_MAKE_RULE = re.compile(r"^([A-Za-z0-9_.%/-]+(?:[ \t]+[A-Za-z0-9_.%/-]+)*)[ \t]*::?(?!=)", re.M)
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class RepoCommands:
    """The commands that run a repository's tests and linter, and where they came from."""

    test: list[str]
    lint: list[str]
    test_source: str
    """The file that decided the test command, or ``default``."""
    lint_source: str
    """The file that decided the lint command, or ``default``."""
    ecosystem: str = "unknown"
    """``python``, ``node``, ``rust``, ``go`` or ``unknown``: picks type checkers and manifests."""
    manifest: str | None = None
    """The file that lists the repository's dependencies, if one exists."""
    notes: tuple[str, ...] = field(default=())
    """Files that were present but could not be read, for the extraction log."""

    @property
    def source(self) -> str:
        """Which file decided the commands: one name when both agree, else both."""
        if self.test_source == self.lint_source:
            return self.test_source
        return f"test: {self.test_source}; lint: {self.lint_source}"


@dataclass
class _Facts:
    """What the detectors need from the repository, read once."""

    root: Path
    notes: list[str] = field(default_factory=list)
    pyproject: dict[str, Any] = field(default_factory=dict)
    package: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return (self.root / name).is_file()

    def text(self, name: str) -> str:
        if name not in self.texts:
            self.texts[name] = _read(self.root / name, self.notes) or ""
        return self.texts[name]

    def section(self, name: str, header: str) -> bool:
        """Whether an INI-style file has a ``[header]`` section."""
        return re.search(rf"^\[{re.escape(header)}\][ \t]*$", self.text(name), re.M) is not None


def _read(path: Path, notes: list[str]) -> str | None:
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            data = handle.read(READ_LIMIT + 1)
    except OSError as exc:
        notes.append(f"{path.name} could not be read ({exc.strerror}); ignored")
        return None
    if len(data) > READ_LIMIT:
        notes.append(f"{path.name} is over {READ_LIMIT} bytes; ignored")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        notes.append(f"{path.name} is not UTF-8; ignored")
        return None


def _load_facts(root: Path) -> _Facts:
    facts = _Facts(root)
    pyproject = _read(root / "pyproject.toml", facts.notes)
    if pyproject is not None:
        try:
            facts.pyproject = tomllib.loads(pyproject)
        except tomllib.TOMLDecodeError as exc:
            facts.notes.append(f"pyproject.toml is not valid TOML ({exc}); ignored")
    package = _read(root / "package.json", facts.notes)
    if package is not None:
        try:
            loaded = json.loads(package)
        except ValueError as exc:
            facts.notes.append(f"package.json is not valid JSON ({exc}); ignored")
        else:
            if isinstance(loaded, dict):
                facts.package = loaded
            else:
                facts.notes.append("package.json is not a JSON object; ignored")
    return facts


def _table(doc: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """``doc[k1][k2]...`` when every step is a table, else an empty table."""
    value: Any = doc
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _normalise(name: str) -> str:
    # PEP 503: names differing only in case and runs of '-', '_', '.' are the same project.
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(requirements: Iterable[str]) -> set[str]:
    names = set()
    for requirement in requirements:
        match = _REQUIREMENT_NAME.match(requirement)
        if match:
            names.add(_normalise(match.group(1)))
    return names


def python_dependencies(pyproject: Mapping[str, Any]) -> set[str]:
    """Every dependency name pyproject.toml declares, in any of the common places, normalised."""
    project = _table(pyproject, "project")
    requirements = _strings(project.get("dependencies"))
    for group in (
        *_table(project, "optional-dependencies").values(),
        *_table(pyproject, "dependency-groups").values(),
        *_table(pyproject, "tool", "pdm", "dev-dependencies").values(),
    ):
        requirements.extend(_strings(group))
    requirements.extend(_strings(_table(pyproject, "tool", "uv").get("dev-dependencies")))
    poetry = _table(pyproject, "tool", "poetry")
    tables = [_table(poetry, "dependencies"), _table(poetry, "dev-dependencies")]
    tables.extend(_table(group, "dependencies") for group in _table(poetry, "group").values())
    requirements.extend(name for table in tables for name in table)
    return _requirement_names(requirements)


def _makefile_targets(facts: _Facts) -> tuple[str, set[str]] | None:
    for name in _MAKEFILES:
        if facts.has(name):
            targets = {t for m in _MAKE_RULE.finditer(facts.text(name)) for t in m.group(1).split()}
            return name, targets
    return None


def _make_target(facts: _Facts, target: str) -> tuple[list[str], str] | None:
    found = _makefile_targets(facts)
    if found and target in found[1]:
        return ["make", target], found[0]
    return None


Detector = Callable[[_Facts], tuple[list[str], str] | None]


def _pytest_configured(facts: _Facts) -> tuple[list[str], str] | None:
    if _table(facts.pyproject, "tool", "pytest"):
        return PYTEST, "pyproject.toml"
    if facts.has("pytest.ini"):
        return PYTEST, "pytest.ini"
    if facts.has("setup.cfg") and facts.section("setup.cfg", "tool:pytest"):
        return PYTEST, "setup.cfg"
    if facts.has("tox.ini") and facts.section("tox.ini", "pytest"):
        return PYTEST, "tox.ini"
    if "pytest" in python_dependencies(facts.pyproject):
        return PYTEST, "pyproject.toml"
    return None


def _npm_script(facts: _Facts, script: str) -> str | None:
    value = _table(facts.package, "scripts").get(script)
    return value if isinstance(value, str) and value.strip() else None


def _npm_test(facts: _Facts) -> tuple[list[str], str] | None:
    script = _npm_script(facts, "test")
    if script is None or _NPM_PLACEHOLDER in script:
        return None
    return ["npm", "test"], "package.json"


def _cargo(argv: list[str]) -> Detector:
    return lambda facts: (argv, "Cargo.toml") if facts.has("Cargo.toml") else None


def _go(argv: list[str]) -> Detector:
    return lambda facts: (argv, "go.mod") if facts.has("go.mod") else None


def _python_project(argv: list[str]) -> Detector:
    def detect(facts: _Facts) -> tuple[list[str], str] | None:
        marker = next((m for m in _PYTHON_MARKERS if facts.has(m)), None)
        return (argv, marker) if marker else None

    return detect


def _ruff_configured(facts: _Facts) -> tuple[list[str], str] | None:
    if _table(facts.pyproject, "tool", "ruff"):
        return RUFF, "pyproject.toml"
    for name in ("ruff.toml", ".ruff.toml"):
        if facts.has(name):
            return RUFF, name
    if "ruff" in python_dependencies(facts.pyproject):
        return RUFF, "pyproject.toml"
    return None


def _flake8_configured(facts: _Facts) -> tuple[list[str], str] | None:
    if facts.has(".flake8"):
        return ["flake8"], ".flake8"
    for name in ("setup.cfg", "tox.ini"):
        if facts.has(name) and facts.section(name, "flake8"):
            return ["flake8"], name
    if "flake8" in python_dependencies(facts.pyproject):
        return ["flake8"], "pyproject.toml"
    return None


def _npm_lint(facts: _Facts) -> tuple[list[str], str] | None:
    return (["npm", "run", "lint"], "package.json") if _npm_script(facts, "lint") else None


def _eslint(facts: _Facts) -> tuple[list[str], str] | None:
    config = next((c for c in _ESLINT_CONFIGS if facts.has(c)), None)
    return (["npx", "eslint", "."], config) if config else None


TEST_DETECTORS: tuple[Detector, ...] = (
    _pytest_configured,
    _npm_test,
    _cargo(["cargo", "test"]),
    _go(["go", "test", "./..."]),
    lambda facts: _make_target(facts, "test"),
    _python_project(PYTEST),
)
LINT_DETECTORS: tuple[Detector, ...] = (
    _ruff_configured,
    _flake8_configured,
    _npm_lint,
    _eslint,
    _cargo(["cargo", "clippy", "--", "-D", "warnings"]),
    _go(["go", "vet", "./..."]),
    lambda facts: _make_target(facts, "lint"),
    _python_project(RUFF),
)

_ECOSYSTEMS = (
    ("python", ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt")),
    ("node", ("package.json",)),
    ("rust", ("Cargo.toml",)),
    ("go", ("go.mod",)),
)
_BY_SOURCE = {name: eco for eco, names in _ECOSYSTEMS for name in names} | {
    "pytest.ini": "python",
    "tox.ini": "python",
}


def _first(
    detectors: Iterable[Detector], facts: _Facts, default: list[str]
) -> tuple[list[str], str]:
    for detect in detectors:
        found = detect(facts)
        if found:
            return list(found[0]), found[1]
    return list(default), "default"


def _ecosystem(facts: _Facts, test_source: str) -> str:
    """The ecosystem of the file that chose the tests; else of the first manifest present."""
    if test_source in _BY_SOURCE:
        return _BY_SOURCE[test_source]
    for ecosystem, names in _ECOSYSTEMS:
        if any(facts.has(name) for name in names):
            return ecosystem
    return "unknown"


def _manifest(facts: _Facts, ecosystem: str) -> str | None:
    for eco, names in _ECOSYSTEMS:
        if eco == ecosystem:
            return next((name for name in names if facts.has(name)), None)
    return None


def infer_commands(repo: Path | None) -> RepoCommands:
    """The test and lint commands for ``repo``, as argument lists; never raises.

    Args:
        repo: The repository's root folder, or ``None`` when it is not known.

    Returns:
        The commands, which file decided each (``default`` for the fallback), the ecosystem,
        the dependency manifest, and notes on files that could not be read.
    """
    if repo is None or not repo.is_dir():
        why = "no repository given" if repo is None else f"{repo} is not a folder"
        return RepoCommands(list(PYTEST), list(RUFF), "default", "default", notes=(why,))
    facts = _load_facts(repo)
    test, test_source = _first(TEST_DETECTORS, facts, PYTEST)
    lint, lint_source = _first(LINT_DETECTORS, facts, RUFF)
    ecosystem = _ecosystem(facts, test_source)
    return RepoCommands(
        test=test,
        lint=lint,
        test_source=test_source,
        lint_source=lint_source,
        ecosystem=ecosystem,
        manifest=_manifest(facts, ecosystem),
        notes=tuple(facts.notes),
    )
