"""Extract acceptance criteria from a task's text with patterns, and add the universal ones.

The constraint-extraction document: at dispatch time, parse the task for explicit criteria
(files to create, tests that must pass, content a file must hold, commands that must succeed,
lint and type checks, dependencies), convert them to structured criteria, and append the
universal checklist (tests, lint, changelog, backlog) unless ``universal_criteria`` is false.

Patterns are deliberately conservative: a criterion that is not there costs a reviewer a minute,
while a wrong one fails a finished task. So:

* A file becomes ``file_exists`` only after a creation verb ("create", "add a new file", "write")
  or before "must exist"; merely mentioning a file asks for nothing.
* A path must look like a file (a known extension or a well-known name such as ``Makefile``).
  Abbreviations ("e.g.", "i.e."), version numbers ("v1.2.3", "Python 3.12"), product names
  ("Node.js") and anything inside a URL or an e-mail address never qualify; a sentence's final
  period is not part of a path.
* Paths must be relative and stay inside the repository; others are skipped with a note.
* A command is taken only from backticks or quotes, next to "run" or "must pass/succeed", and
  becomes an argument list; anything needing a shell (``| ; & > < $``, a backquote, globs,
  ``VAR=value`` prefixes) is skipped with a note. No criterion from task text ever sets ``shell``.
* Fenced code blocks are ignored: they show code, they do not state requirements.

Each rule that fires or declines for a reason says so in ``notes``, for the dispatch log.

The rules read text prepared by `core.criteria.extract_text` (white space collapsed, quotes and
addresses stood in for by one character each), and every pattern here has a bounded reach, so
extraction is linear in the task's length whatever its shape.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.contracts.criteria import Criterion
from core.criteria.extract_text import PRODUCT_NAMES, Block, FoundPath, Quote, read_blocks
from core.criteria.repo_commands import RepoCommands, infer_commands

__all__ = [
    "CHANGELOG_FILES",
    "BACKLOG_FILES",
    "Extraction",
    "canonical",
    "command_problem",
    "commands_note",
    "extract_criteria",
    "merge_criteria",
    "pattern_criteria",
    "task_text_of",
    "unique",
    "universal_criteria",
]

CRITERION: TypeAdapter[Any] = TypeAdapter(Criterion)

CHANGELOG_FILES = ("CHANGELOG.md", "CHANGES.md", "HISTORY.md", "CHANGELOG.rst", "NEWS.md")
BACKLOG_FILES = ("BACKLOG.md", "TODO.md", "backlog.md", "todo.md", "docs/BACKLOG.md")
#: A dated entry. The document's ``## \d{4}-\d{2}-\d{2}`` assumes its own changelog layout; a
#: repository's changelog often heads entries "## [1.2.0] - 2026-02-15", which still has a date.
CHANGELOG_PATTERN = r"\d{4}-\d{2}-\d{2}"
BACKLOG_PATTERN = r"\[x\]"  # as the document says: a ticked task-list box


@dataclass(frozen=True)
class Extraction:
    """Criteria extracted for one task, how they were found, and why each was or was not."""

    criteria: list[dict[str, Any]]
    """Plain dicts, each valid for `core.contracts.criteria.Criterion`."""
    source: str
    """``patterns``, ``model`` or ``model_fallback:<reason>``."""
    notes: list[str]
    """Why things were added or skipped, for the log."""


# --------------------------------------------------------------------------------------------
# Gathering the task text
# --------------------------------------------------------------------------------------------


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def task_text_of(dispatch: Mapping[str, Any]) -> str:
    """All the task text in a dispatch, one paragraph per piece; never raises.

    Reads a Jarvis dispatch's ``input`` and ``acceptance_tests``, an OpenClaw request's ``goal``
    (title, description, acceptance criteria, test plan) and a free ``task`` or ``description``
    string. Pieces of the wrong type are ignored. Paragraphs are separated by blank lines so that
    no pattern reads across two pieces.
    """
    if not isinstance(dispatch, Mapping):
        return ""
    pieces: list[str] = []
    for key in ("input", "task", "description"):
        pieces.extend(_texts(dispatch.get(key)))
    goal = dispatch.get("goal")
    if isinstance(goal, Mapping):
        for key in ("title", "description", "acceptance_criteria", "test_plan"):
            pieces.extend(_texts(goal.get(key)))
    elif isinstance(goal, str):
        pieces.extend(_texts(goal))
    pieces.extend(_texts(dispatch.get("acceptance_tests")))
    return "\n\n".join(p.strip() for p in pieces)


# --------------------------------------------------------------------------------------------
# Building criteria
# --------------------------------------------------------------------------------------------

_FIELD_ORDER = ("type", "path", "pattern", "command", "cwd", "timeout_s", "description")


def canonical(criterion: Mapping[str, Any], *, universal: bool) -> dict[str, Any]:
    """Validate ``criterion`` and return it as a plain dict with defaults left out.

    Raises:
        pydantic.ValidationError: when it is not a valid criterion.
    """
    model = CRITERION.validate_python({**criterion, "universal": universal})
    dumped = model.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    ordered = {key: dumped[key] for key in _FIELD_ORDER if key in dumped}
    ordered.update((k, v) for k, v in dumped.items() if k not in ordered)
    ordered["universal"] = universal
    return ordered


def _literal(text: str) -> str:
    """A regular expression matching ``text`` exactly, escaping only what ``re`` needs.

    ``re.escape`` also escapes spaces and ``#``, which makes a stored pattern such as
    ``## Installation`` unreadable for the person reviewing the criteria.
    """
    return _REGEX_SPECIAL.sub(r"\\\g<0>", text)


_REGEX_SPECIAL = re.compile(r"[.^$*+?{}\[\]\\|()]")


_SHELL_CHARS = "|;&><$`"
_SETS_VARIABLE = re.compile(r"[A-Za-z_]\w{0,255}=")


def command_problem(text: str) -> tuple[list[str] | None, str | None]:
    """Split ``text`` into an argument list, or say why it cannot run without a shell."""
    bad = sorted(ch for ch in set(_SHELL_CHARS + "\n") if ch in text)
    if bad:
        shown = " ".join("newline" if ch == "\n" else ch for ch in bad)
        return None, f"it uses shell syntax ({shown}), and criteria never run through a shell"
    if any(ch in text for ch in "*?["):
        return None, "it uses a glob, which only a shell would expand"
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        return None, f"it cannot be split into arguments ({exc})"
    if not argv:
        return None, "it is empty"
    if _SETS_VARIABLE.match(argv[0]):
        return None, "it sets an environment variable, which only a shell would do"
    return argv, None


@dataclass
class _Found:
    """Criteria and notes collected from the task text, with where each was found."""

    items: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, at: int, criterion: dict[str, Any]) -> None:
        try:
            self.items.append((at, canonical(criterion, universal=False)))
        except ValidationError as exc:  # a rule produced something invalid: log, never store
            self.notes.append(f"dropped {criterion.get('type')}: {exc.errors()[0]['msg']}")

    def skip(self, what: str, why: str) -> None:
        self.notes.append(f"skipped {what}: {why}")


@dataclass(frozen=True)
class _Context:
    commands: RepoCommands
    repo: Path | None


def _shown(argv: list[str]) -> str:
    return shlex.join(argv)


# --------------------------------------------------------------------------------------------
# Rules: files
# --------------------------------------------------------------------------------------------

_CREATE = re.compile(
    r"\b(?:creat(?:e|es|ed|ing)|add(?:s|ed|ing)?|writ(?:e|es|ing)|generat(?:e|es|ed|ing)"
    r"|scaffold|introduc(?:e|es|ed)|set\sup|new)\b",
    re.I,
)
_FILLERS = (
    "a|an|the|new|empty|blank|small|simple|basic|minimal|separate|dedicated|file|files|module"
    "|modules|script|scripts|component|components|test|tests|unit|integration|config"
    "|configuration|page|pages|class|workflow|document|doc|migration|fixture|fixtures|template"
    "|stylesheet|helper|helpers|entry|point|readme|license|python|typescript|javascript|markdown"
    "|json|yaml|toml|shell|bash|react|github|actions|ci|following|called|named|at|in|under|as"
    "|" + "|".join(re.escape(p) for p in PRODUCT_NAMES)
)
_FILLER_RUN = re.compile(rf"(?:\s?\b(?:{_FILLERS})(?=[\s:])){{0,8}}\s?:?", re.I)
_LIST_SEP = re.compile(r"\s?,\s?(?:and\s)?|\sand\s|\s?&\s", re.I)
_MUST_EXIST = re.compile(
    r"\s(?:must|should|shall|will|needs?\sto|has\sto)\s(?:(?:now|also|still)\s)?"
    r"(?:exist|be\s(?:created|added|generated|written|present))\b",
    re.I,
)
_ENSURE = re.compile(r"\b(?:ensure|make\ssure|verify|check)(?:\sthat)?(?:\sthe\sfile)?\s$", re.I)
_EXISTS = re.compile(r"\s(?:exists|is\s(?:created|present))\b", re.I)
_MOVE = re.compile(r"\b(?:renam|mov)(?:e|es|ed|ing)\b", re.I)
_MOVE_TO = re.compile(r"\s(?:to|as|into)\b", re.I)


def _path_list(block: Block, pos: int) -> list[FoundPath]:
    """Paths listed from ``pos`` on: "a.py", "a.py, b.py and a c.py file", after filler words."""
    found: list[FoundPath] = []
    while True:
        fillers = _FILLER_RUN.match(block.plain, pos)
        hit = block.path_at(fillers.end() if fillers else pos)
        if hit is None:
            return found
        found.append(hit)
        sep = _LIST_SEP.match(block.plain, hit.end)
        if sep is None:
            return found
        pos = sep.end()


def _file_exists(found: _Found, block: Block, hit: FoundPath) -> None:
    if hit.is_dir:
        return
    if hit.problem:
        found.skip(f"file_exists {hit.path}", hit.problem)
        return
    at = block.offset + hit.start
    found.add(
        at, {"type": "file_exists", "path": hit.path, "description": f"{hit.path} must exist"}
    )


def _files(found: _Found, block: Block) -> None:
    for match in _CREATE.finditer(block.plain):
        for hit in _path_list(block, match.end()):
            _file_exists(found, block, hit)
    for hit in list(block.paths.values()):
        if hit.quote is not None and hit.quote.start in block.used:
            continue
        ensured = _ENSURE.search(block.before(hit.start)) and _EXISTS.match(block.plain, hit.end)
        if _MUST_EXIST.match(block.plain, hit.end) or ensured:
            _file_exists(found, block, hit)
    for match in _MOVE.finditer(block.plain):
        source = block.path_at(match.end())
        to = _MOVE_TO.match(block.plain, source.end) if source else None
        target = block.path_at(to.end()) if to else None
        if target is not None:
            _file_exists(found, block, target)


# --------------------------------------------------------------------------------------------
# Rules: content
# --------------------------------------------------------------------------------------------

_WHAT = (
    "a|an|the|line|lines|string|text|section|heading|header|title|entry|key|word|phrase|comment"
    "|note|function|class|method|setting|value|field|constant|variable|component|called|named"
    "|with|exact|exactly|literal|default|new|following|statement|import|block"
)
_CONTENT_VERB = re.compile(
    r"(?:\s(?:must|should|shall|will|needs?\sto|has\sto|is\sto))?"
    r"(?:\s(?:also|still|now|only|always))?\s"
    r"(?:(?P<contain>contain(?:s|ing)?|includes?|mentions?|has|lists?)"
    r"|(?P<regex>match(?:es)?\s(?:the\s)?(?:regex|regexp|regular\sexpression|pattern))"
    r"|(?P<export>exports?)|(?P<define>defines?))"
    rf"(?:\s(?:{_WHAT})(?=\s)){{0,8}}\s(?=\x01)",
    re.I,
)
_PRONOUN = re.compile(r"(?:^|\W)(?:it|this\sfile|that\sfile|the\sfile|the\snew\sfile)$", re.I)
_ADD_QUOTE = re.compile(
    r"\b(?:add|append|insert|put|write)(?:s|ed|ing)?\s(?:(?:a|an|the|new)\s)?(?=\x01)", re.I
)
_ADD_TARGET = re.compile(
    rf"(?:\s(?:{_WHAT})(?=\s)){{0,8}}\s(?:to|in|into|inside)\s(?:the\s)?(?:file\s)?", re.I
)
_QUOTE_SEP = re.compile(r"\s?,\s?(?:and\s)?|\sand\s", re.I)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w{0,255}")


def _quote_list(block: Block, pos: int) -> list[Quote]:
    found: list[Quote] = []
    while (quote := block.quote_at(pos)) is not None:
        found.append(quote)
        sep = _QUOTE_SEP.match(block.plain, quote.end)
        if sep is None or block.quote_at(sep.end()) is None:
            break
        pos = sep.end()
    return found


def _content_pattern(kind: str, text: str, path: str) -> tuple[str, str]:
    """The pattern and description for one content requirement of the given kind."""
    if kind == "regex":
        return text, f"{path} must match /{text}/"
    if kind in ("export", "define") and _IDENTIFIER.fullmatch(text):
        if kind == "export":
            return rf"export\b.*\b{text}\b", f"{path} must export {text}"
        if path.endswith(".py"):
            return rf"(?m)^\s*(?:async\s+def|def|class)\s+{text}\b", f"{path} must define {text}"
        return rf"\b{text}\b", f"{path} must define {text}"
    return _literal(text), f'{path} must contain "{text}"'


def _content(found: _Found, block: Block, subject: FoundPath, kind: str, quote: Quote) -> None:
    block.used.add(quote.start)
    what = f"content_match for {quote.inner!r}"
    if subject.problem or subject.is_dir:
        found.skip(what, subject.problem or f"{subject.path} is a folder")
        return
    pattern, description = _content_pattern(kind, quote.inner, subject.path)
    try:
        re.compile(pattern)
    except re.error as exc:
        found.skip(what, f"the pattern does not compile ({exc})")
        return
    criterion = {"type": "content_match", "path": subject.path, "pattern": pattern}
    found.add(block.offset + quote.start, {**criterion, "description": description})


def _subject(block: Block, end: int) -> FoundPath | None:
    hit = block.path_ending_at(end)
    if hit is not None:
        return hit
    if _PRONOUN.search(block.before(end)):
        return block.last_path_before(end)
    return None


def _contents(found: _Found, block: Block, last: FoundPath | None) -> None:
    for match in _CONTENT_VERB.finditer(block.plain):
        kind = next(k for k in ("contain", "regex", "export", "define") if match.group(k))
        quotes = _quote_list(block, match.end())
        subject = _subject(block, match.start())
        if subject is None and _PRONOUN.search(block.before(match.start())):
            subject = last  # "It must contain ..." after a file named in an earlier item
        if not quotes:
            continue
        if subject is None:
            found.notes.append(f"not extracted: {quotes[0].inner!r} is required of no named file")
            continue
        for quote in quotes:
            _content(found, block, subject, kind, quote)
    for match in _ADD_QUOTE.finditer(block.plain):
        quotes = _quote_list(block, match.end())
        target = _ADD_TARGET.match(block.plain, quotes[-1].end) if quotes else None
        into = block.path_at(target.end()) if target else None
        if into is not None:
            for quote in quotes:
                _content(found, block, into, "contain", quote)


# --------------------------------------------------------------------------------------------
# Rules: dependencies
# --------------------------------------------------------------------------------------------

_DEP_KIND = r"(?:(?:npm|python|pypi|rust|go|dev)\s)?(?:package|dependency|library|module|crate)"
_DEP_ADD = re.compile(
    rf"\b(?:install|add)(?:s|ed|ing)?\s(?:(?:the|a)\s)?{_DEP_KIND}\s(?=\x01)", re.I
)
_DEP_AS = re.compile(r"\sas\san?\s(?:dev(?:elopment)?\s)?dependency\b", re.I)
_DEP_INSTALLED = re.compile(
    rf"(?:\b{_DEP_KIND}\s(?P<bare>[A-Za-z0-9@][\w.@/-]{0, 510}\w)|(?P<quoted>\x01))"
    r"\s(?:must|should|needs\sto|has\sto)\sbe\sinstalled\b",
    re.I,
)
_ADDED = re.compile(r"\badd(?:s|ed|ing)?\s$", re.I)
_DEP_NAME = re.compile(r"(?:@[\w.-]{1,214}/)?[\w.-]{1,214}(?:/[\w.-]{1,214}){0,8}")
_NAME_SEPARATORS = re.compile(r"[-_.]{1,16}")


def _dependency_pattern(manifest: str, name: str) -> str:
    if manifest == "package.json":
        return rf'"{_literal(name)}"\s*:'
    if manifest == "Cargo.toml":
        return rf"(?m)^\s*{_literal(name)}\s*="
    if manifest == "go.mod":
        return rf"(?m)^\s*(?:require\s+)?{_literal(name)}\s+v"
    # Python: names compare case-insensitively with '-', '_' and '.' interchangeable (PEP 503).
    flexible = "[-_.]+".join(_literal(part) for part in _NAME_SEPARATORS.split(name))
    return rf"(?im)(?:^|[\"'\s])(?:{flexible})(?=[\s\[<>=!~;,\"']|$)"


def _dependency(found: _Found, ctx: _Context, at: int, name: str) -> None:
    manifest = ctx.commands.manifest
    if not _DEP_NAME.fullmatch(name):
        found.skip(f"dependency {name!r}", "it does not look like a package name")
        return
    if manifest is None:
        found.skip(f"dependency {name}", "the repository has no dependency manifest to check")
        return
    criterion = {
        "type": "content_match",
        "path": manifest,
        "pattern": _dependency_pattern(manifest, name),
        "description": f"{name} must be a dependency in {manifest}",
    }
    found.add(at, criterion)


def _dependencies(found: _Found, block: Block, ctx: _Context) -> None:
    named: list[tuple[int, str]] = []
    for match in _DEP_ADD.finditer(block.plain):
        named.extend((q.start, q.inner) for q in _quote_list(block, match.end()))
    for candidate in list(block.quotes.values()):
        added = _ADDED.search(block.before(candidate.start))
        if added and _DEP_AS.match(block.plain, candidate.end):
            named.append((candidate.start, candidate.inner))
    for match in _DEP_INSTALLED.finditer(block.plain):
        quote = block.quote_at(match.start("quoted")) if match.group("quoted") else None
        if quote is not None:
            named.append((quote.start, quote.inner))
        elif match.group("bare"):
            named.append((match.start("bare"), match.group("bare")))
    for start, name in sorted(set(named)):
        if start in block.used:
            continue
        if start in block.quotes:
            block.used.add(start)
        _dependency(found, ctx, block.offset + start, name)


# --------------------------------------------------------------------------------------------
# Rules: commands in quotes
# --------------------------------------------------------------------------------------------

_RUN_BEFORE = re.compile(
    r"\b(?:run|runs|running|execute|executing|invoke|invoking)"
    r"(?:\s(?:the\s)?(?:command|script|check))?\s?:?\s?$|\bthe\scommand\s?:?\s?$",
    re.I,
)
_NEGATED = re.compile(
    r"(?:\b(?:not|never|avoid|without|instead\sof|rather\sthan)|n't)\s\S{0,80}\s?$", re.I
)
_SUCCEEDS = re.compile(
    r"\s(?:(?:must|should|shall|will|needs?\sto|has\sto|have\sto)\s(?:(?:still|also)\s)?)?"
    r"(?:succeeds?|pass(?:es)?|exits?\s(?:with\s)?(?:code\s|status\s)?0|returns?\s0"
    r"|completes?\ssuccessfully|runs?\scleanly|(?:is|are|be|stays?)\s(?:green|clean))\b",
    re.I,
)
_KNOWN_PROGRAMS = frozenset(
    """npm npx yarn pnpm bun deno node pytest py.test python python3 tox nox ruff mypy pyright
    flake8 pylint black isort cargo go make just gradle gradlew ./gradlew mvn mvnw dotnet jest
    vitest mocha eslint tsc prettier uv poetry hatch pre-commit rake bundle rspec mix swift
    docker""".split()
)
_TEST_TOOLS = frozenset({"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec"})
_LINT_TOOLS = frozenset(
    {"ruff", "flake8", "pylint", "mypy", "pyright", "eslint", "tsc", "golangci-lint", "black"}
)
_SCRIPT_RUNNERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_SUBCOMMAND_TOOLS = frozenset({"cargo", "go", "make", "just", "dotnet", "mvn", "gradle", "mix"})


def _kind_of(argv: list[str]) -> str:
    """``test_pass``, ``no_lint_errors`` or ``command_success`` for a command's arguments."""
    args = argv[1:]
    program = argv[0].rsplit("/", 1)[-1]
    if program in ("python", "python3") and args[:1] == ["-m"] and len(args) > 1:
        program, args = args[1], args[2:]
    if program == "npx" and args:
        program, args = args[0], args[1:]
    first = args[1] if program in _SCRIPT_RUNNERS and args[:1] == ["run"] else next(iter(args), "")
    if (
        program in _TEST_TOOLS
        or program == "unittest"
        or (
            (program in _SCRIPT_RUNNERS or program in _SUBCOMMAND_TOOLS or program == "gradlew")
            and first == "test"
        )
    ):
        return "test_pass"
    if program in _LINT_TOOLS or (program == "cargo" and first == "clippy"):
        return "no_lint_errors"
    if (program in _SCRIPT_RUNNERS or program in ("make", "just")) and first == "lint":
        return "no_lint_errors"
    if program == "go" and first == "vet":
        return "no_lint_errors"
    return "command_success"


_COMMAND_TEXT = {
    "test_pass": "must pass",
    "no_lint_errors": "must report no errors",
    "command_success": "must succeed",
}


def _quote_groups(block: Block) -> Iterator[list[Quote]]:
    """Runs of unused quotes joined by commas or "and": "`a`, `b` and `c` must pass"."""
    done: set[int] = set()
    for start in sorted(block.quotes):
        if start in done or start in block.used:
            continue
        group = _quote_list(block, start)
        done.update(q.start for q in group)
        if group:
            yield group


def _command(found: _Found, block: Block, quote: Quote, *, asked_to_run: bool) -> None:
    argv, problem = command_problem(quote.inner)
    if argv is None:
        block.used.add(quote.start)
        found.skip(f"command {quote.inner!r}", problem or "unknown")
        return
    program = argv[0]
    if not (asked_to_run or quote.backtick or program in _KNOWN_PROGRAMS):
        return  # a quoted phrase that must "pass" is not a command unless it plainly is one
    block.used.add(quote.start)
    kind = _kind_of(argv)
    description = f"`{_shown(argv)}` {_COMMAND_TEXT[kind]}"
    found.add(
        block.offset + quote.start, {"type": kind, "command": argv, "description": description}
    )


def _commands(found: _Found, block: Block) -> None:
    for group in _quote_groups(block):
        before = block.before(group[0].start)
        run = _RUN_BEFORE.search(before)
        if run and _NEGATED.search(before[: run.start()]):
            continue
        if not (run or _SUCCEEDS.match(block.plain, group[-1].end)):
            continue
        for quote in group:
            _command(found, block, quote, asked_to_run=run is not None)


# --------------------------------------------------------------------------------------------
# Rules: tests and lint in words
# --------------------------------------------------------------------------------------------

_TESTS_PASS = re.compile(
    r"\btests?(?:\ssuite)?(?P<mid>(?:\s[^\s;:!?]{1,512}){0,6}?)"
    r"\s(?:(?:must|should|shall|will|needs?\sto|has\sto|have\sto|are\sexpected\sto)\s)?"
    r"(?:(?:still|all|also|continue\sto)\s)?"
    r"(?:pass(?:es)?|succeed|(?:be|is|are|stays?)\sgreen)\b",
    re.I,
)
_MID_STOP = re.compile(
    r"[.!?](?:\s|$)|\x01|\b(?:that|which|who|where|when|if|unless|but|not|never|no|fail\w{0,16})\b"
    r"|n't\b",
    re.I,
)
_PASS_OBJECT = re.compile(
    r"\s(?:a|an|the|this|that|these|those|it|them|its|their|through|along|over|down|around)\b",
    re.I,
)
_NO_BROKEN_TESTS = re.compile(
    r"\b(?:no\s(?:failing|broken)\stests|(?:don't|do\snot|without)\sbreak(?:ing)?\s"
    r"(?:(?:any|the|existing)\s){0,3}tests)\b",
    re.I,
)
_TOOLS = r"ruff|eslint|flake8|mypy|pyright|clippy|tsc|typescript|golangci-lint"
_LINT_WORDS = re.compile(
    r"\bno\s(?:new\s)?(?P<generic>lint(?:ing|er)?)[- ](?:errors?|warnings?|issues?|failures?"
    r"|problems?|violations?)\b"
    r"|\b(?P<generic2>lint(?:ing|er)?|the\slinter)\s(?:(?:must|should|needs\sto|has\sto)\s)?"
    r"(?:still\s)?(?:pass(?:es)?|succeeds?|(?:is|be|stays?)\sclean)\b"
    r"|\blint[- ]clean\b(?P<generic3>)"
    rf"|\bno\s(?:new\s)?(?P<tool>{_TOOLS}|type(?:[- ]?check(?:ing|er)?)?|typing)"
    r"\s(?:errors?|warnings?|issues?|complaints|failures|problems?)\b"
    rf"|\b(?P<tool2>{_TOOLS})\s(?:(?:must|should|needs\sto|has\sto)\s)?(?:still\s)?"
    r"(?:pass(?:es)?|succeeds?|(?:is|be|stays?)\sclean|reports?\sno\serrors)\b",
    re.I,
)
_TOOL_COMMANDS = {
    "ruff": ["ruff", "check", "."],
    "eslint": ["npx", "eslint", "."],
    "flake8": ["flake8"],
    "mypy": ["mypy", "."],
    "pyright": ["pyright"],
    "clippy": ["cargo", "clippy", "--", "-D", "warnings"],
    "tsc": ["npx", "tsc", "--noEmit"],
    "typescript": ["npx", "tsc", "--noEmit"],
    "golangci-lint": ["golangci-lint", "run"],
}
_TYPE_CHECKERS = {
    "python": ["mypy", "."],
    "node": ["npx", "tsc", "--noEmit"],
    "rust": ["cargo", "check"],
    "go": ["go", "vet", "./..."],
}


def _targeted(test: list[str], targets: list[str]) -> tuple[list[str], str | None]:
    """The test command narrowed to ``targets``, or the whole suite and why it could not be."""
    pytest = test[:1] in (["pytest"], ["py.test"]) or test[:3] == ["python", "-m", "pytest"]
    if pytest:
        return [*test, *targets], None
    if all(t.endswith(".py") for t in targets):
        return ["pytest", *targets], None
    if test[:1] in (["npm"], ["yarn"], ["pnpm"]):
        return [*test, "--", *targets], None
    return test, f"`{_shown(test)}` cannot be narrowed to {', '.join(targets)}; runs the suite"


def _tests_in_words(found: _Found, block: Block, ctx: _Context) -> None:
    for match in _TESTS_PASS.finditer(block.plain):
        if _MID_STOP.search(match.group("mid")) or _PASS_OBJECT.match(block.plain, match.end()):
            continue
        lo, hi = match.span("mid")
        hits = block.paths_within(lo, hi)
        unsafe = [p for p in hits if p.problem]
        for hit in unsafe:
            found.skip(f"test target {hit.path}", hit.problem or "")
        if unsafe:
            continue
        targets = [p.path for p in sorted(hits, key=lambda p: p.start)]
        command, why = (
            _targeted(ctx.commands.test, targets) if targets else (ctx.commands.test, None)
        )
        if why:
            found.notes.append(why)
        description = f"Tests in {', '.join(targets)} must pass" if targets else "Tests must pass"
        criterion = {"type": "test_pass", "command": command, "description": description}
        found.add(block.offset + match.start(), criterion)
    for match in _NO_BROKEN_TESTS.finditer(block.plain):
        criterion = {
            "type": "test_pass",
            "command": ctx.commands.test,
            "description": "Tests must pass",
        }
        found.add(block.offset + match.start(), criterion)


def _lint_command(match: re.Match[str], ctx: _Context) -> tuple[list[str], str]:
    tool = (match.group("tool") or match.group("tool2") or "").lower()
    if tool in _TOOL_COMMANDS:
        return _TOOL_COMMANDS[tool], f"No {match.group('tool') or match.group('tool2')} errors"
    if tool.startswith("typ"):
        checker = _TYPE_CHECKERS.get(ctx.commands.ecosystem, ["mypy", "."])
        return checker, "No type errors"
    return ctx.commands.lint, "No lint errors"


def _lint_in_words(found: _Found, block: Block, ctx: _Context) -> None:
    for match in _LINT_WORDS.finditer(block.plain):
        command, description = _lint_command(match, ctx)
        criterion = {"type": "no_lint_errors", "command": command, "description": description}
        found.add(block.offset + match.start(), criterion)


# --------------------------------------------------------------------------------------------
# Rules: changelog and backlog
# --------------------------------------------------------------------------------------------

_CHANGELOG_VERB = r"\b(?:updat(?:e|es|ed|ing)|add(?:s|ed|ing)?|writ(?:e|es|ing))\b[^.!?]{0,40}?"
_CHANGELOG = re.compile(
    rf"{_CHANGELOG_VERB}\b(?P<word>change\s?log)\b"
    r"|\b(?P<word2>change\s?log)(?:\sentry)?\s(?:must|should|needs\sto|has\sto)\sbe\s"
    r"(?:updated|added|written)\b",
    re.I,
)
_BACKLOG_VERB = (
    r"\b(?:updat(?:e|es|ed|ing)|mark(?:s|ed|ing)?|tick(?:s|ed)?(?:\soff)?|check\soff)\b"
    r"[^.!?]{0,40}?"
)
_BACKLOG = re.compile(
    rf"{_BACKLOG_VERB}\b(?P<word>backlog)\b"
    r"|\b(?P<word2>backlog)(?:\s(?:item|task|entry))?\s(?:must|should|needs\sto|has\sto)\sbe\s"
    r"(?:updated|marked|ticked)\b",
    re.I,
)
# A quoted path is one character of plain text: its name is read from the quote, its verb
# from the text before it.
_CHANGELOG_NAME = re.compile(r"\bchange\s?log\b", re.I)
_CHANGELOG_BEFORE = re.compile(rf"{_CHANGELOG_VERB}$", re.I)
_BACKLOG_NAME = re.compile(r"\bbacklog\b", re.I)
_BACKLOG_BEFORE = re.compile(rf"{_BACKLOG_VERB}$", re.I)


def first_existing(repo: Path | None, names: tuple[str, ...]) -> str:
    """The first of ``names`` that is a file in ``repo``; the first name if none is."""
    if repo is not None:
        for name in names:
            if (repo / name).is_file():
                return name
    return names[0]


_BOOKKEEPING = (
    (
        (_CHANGELOG, _CHANGELOG_NAME, _CHANGELOG_BEFORE),
        ("changelog_updated", CHANGELOG_FILES, CHANGELOG_PATTERN, "Changelog entry added"),
    ),
    (
        (_BACKLOG, _BACKLOG_NAME, _BACKLOG_BEFORE),
        ("backlog_updated", BACKLOG_FILES, BACKLOG_PATTERN, "Backlog task marked complete"),
    ),
)


def _bookkeeping(found: _Found, block: Block, ctx: _Context) -> None:
    for (phrase, name, verb_before), (kind, files, pattern, description) in _BOOKKEEPING:
        asked: list[tuple[int, FoundPath | None]] = []
        for match in phrase.finditer(block.plain):
            word = match.start("word") if match.group("word") else match.start("word2")
            asked.append((match.start(), block.path_around(word)))
        for hit in block.paths.values():
            quote = hit.quote
            if quote and name.search(hit.path) and verb_before.search(block.before(quote.start)):
                asked.append((quote.start, hit))
        for at, named in asked:
            if named is not None and named.problem:
                found.skip(f"{kind} {named.path}", named.problem)
                continue
            path = named.path if named else first_existing(ctx.repo, files)
            criterion = {"type": kind, "path": path, "pattern": pattern, "description": description}
            found.add(block.offset + at, criterion)


# --------------------------------------------------------------------------------------------
# Putting it together
# --------------------------------------------------------------------------------------------


def _key(criterion: Mapping[str, Any]) -> tuple[Any, ...]:
    command = criterion.get("command")
    return (
        criterion["type"],
        criterion.get("path"),
        criterion.get("pattern"),
        tuple(command) if isinstance(command, list) else command,
        criterion.get("cwd"),
    )


def pattern_criteria(
    task_text: str, commands: RepoCommands, repo: Path | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The criteria the patterns find in ``task_text``, in reading order, without duplicates."""
    found = _Found()
    text = task_text if isinstance(task_text, str) else ""
    blocks, fenced = read_blocks(text)
    if fenced:
        found.notes.append("ignored fenced code blocks: they show code, not requirements")
    ctx = _Context(commands, repo)
    last: FoundPath | None = None
    for block in blocks:
        _contents(found, block, last)
        _dependencies(found, block, ctx)
        _commands(found, block)
        _files(found, block)
        _tests_in_words(found, block, ctx)
        _lint_in_words(found, block, ctx)
        _bookkeeping(found, block, ctx)
        last = block.last_path_before(len(block.plain)) or last
    ordered = [criterion for _, criterion in sorted(found.items, key=lambda item: item[0])]
    return unique(ordered), found.notes


def unique(criteria: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``criteria`` without repeats (same type, path, pattern, command and cwd), first kept."""
    seen: set[tuple[Any, ...]] = set()
    kept: list[dict[str, Any]] = []
    for criterion in criteria:
        if _key(criterion) not in seen:
            seen.add(_key(criterion))
            kept.append(criterion)
    return kept


def universal_criteria(commands: RepoCommands, repo: Path | None) -> list[dict[str, Any]]:
    """The document's universal checklist as criteria, with the repository's own commands."""
    changelog = first_existing(repo, CHANGELOG_FILES)
    backlog = first_existing(repo, BACKLOG_FILES)
    raw: list[dict[str, Any]] = [
        {
            "type": "test_pass",
            "command": commands.test,
            "description": "All existing tests must pass",
        },
        {
            "type": "no_lint_errors",
            "command": commands.lint,
            "description": "No linting or type errors",
        },
        {
            "type": "changelog_updated",
            "path": changelog,
            "pattern": CHANGELOG_PATTERN,
            "description": "Changelog entry added for today",
        },
        {
            "type": "backlog_updated",
            "path": backlog,
            "pattern": BACKLOG_PATTERN,
            "description": "Backlog task marked complete",
        },
    ]
    return [canonical(c, universal=True) for c in raw]


def merge_criteria(
    task: list[dict[str, Any]], universal: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Task criteria, then the universal ones the task did not already ask for.

    The task's copy wins a tie: it was asked for explicitly, so it must stay even when a later
    dispatch turns the universal checklist off.
    """
    taken = {_key(c) for c in task}
    merged = list(task)
    notes: list[str] = []
    for criterion in universal:
        if _key(criterion) in taken:
            notes.append(f"universal {criterion['type']} already asked for by the task; kept once")
        else:
            merged.append(criterion)
    return merged, notes


def commands_note(commands: RepoCommands) -> list[str]:
    """Log lines saying which commands were inferred, from which file, and what was unreadable."""
    shown = f"test `{_shown(commands.test)}`, lint `{_shown(commands.lint)}`"
    return [f"commands from {commands.source}: {shown}", *commands.notes]


def extract_criteria(
    task_text: str, *, repo: Path | None = None, universal: bool = True
) -> Extraction:
    """Extract criteria from ``task_text`` with patterns, plus the universal ones; never raises.

    Args:
        task_text: The task, e.g. from `task_text_of`.
        repo: The target repository's root, used to infer test and lint commands and to find
            its changelog, backlog and dependency manifest. ``None`` uses the defaults.
        universal: Append the universal checklist (tests, lint, changelog, backlog).

    Returns:
        The criteria, task-derived first in reading order, with ``source`` ``patterns``.
    """
    commands = infer_commands(repo)
    task, notes = pattern_criteria(task_text, commands, repo)
    if universal:
        task, merge_notes = merge_criteria(task, universal_criteria(commands, repo))
        notes.extend(merge_notes)
    return Extraction(task, "patterns", [*commands_note(commands), *notes])
