"""Rules for commands: quoted commands to run, tests and linters asked for in words, and the
changelog and backlog."""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.criteria.extract_base import (
    BACKLOG_FILES,
    BACKLOG_PATTERN,
    CHANGELOG_FILES,
    CHANGELOG_PATTERN,
    Context,
    Found,
    command_problem,
    first_existing,
    shown,
)
from core.criteria.extract_text import Block, FoundPath, Quote

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
        group = block.quote_list(start)
        done.update(q.start for q in group)
        if group:
            yield group


def _command(found: Found, block: Block, quote: Quote, *, asked_to_run: bool) -> None:
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
    description = f"`{shown(argv)}` {_COMMAND_TEXT[kind]}"
    found.add(
        block.offset + quote.start, {"type": kind, "command": argv, "description": description}
    )


def commands(found: Found, block: Block) -> None:
    for group in _quote_groups(block):
        before = block.before(group[0].start)
        run = _RUN_BEFORE.search(before)
        if run and _NEGATED.search(before[: run.start()]):
            continue
        if not (run or _SUCCEEDS.match(block.plain, group[-1].end)):
            continue
        for quote in group:
            _command(found, block, quote, asked_to_run=run is not None)


# --- tests and lint in words ----------------------------------------------------------------------

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
    return test, f"`{shown(test)}` cannot be narrowed to {', '.join(targets)}; runs the suite"


def tests_in_words(found: Found, block: Block, ctx: Context) -> None:
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


def _lint_command(match: re.Match[str], ctx: Context) -> tuple[list[str], str]:
    tool = (match.group("tool") or match.group("tool2") or "").lower()
    if tool in _TOOL_COMMANDS:
        return _TOOL_COMMANDS[tool], f"No {match.group('tool') or match.group('tool2')} errors"
    if tool.startswith("typ"):
        checker = _TYPE_CHECKERS.get(ctx.commands.ecosystem, ["mypy", "."])
        return checker, "No type errors"
    return ctx.commands.lint, "No lint errors"


def lint_in_words(found: Found, block: Block, ctx: Context) -> None:
    for match in _LINT_WORDS.finditer(block.plain):
        command, description = _lint_command(match, ctx)
        criterion = {"type": "no_lint_errors", "command": command, "description": description}
        found.add(block.offset + match.start(), criterion)


# --- changelog and backlog ------------------------------------------------------------------------

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


def bookkeeping(found: Found, block: Block, ctx: Context) -> None:
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
