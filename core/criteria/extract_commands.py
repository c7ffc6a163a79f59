"""Rules for commands: quoted commands to run, tests and linters asked for in words, writing
tests, and the changelog and backlog.

A command is taken only from a quote, next to a verb that runs it ("run", "rerun", "lint with",
French "lance", German "führe … aus", Spanish "ejecuta") or before what it must do ("must pass",
"must come back clean", "doit réussir", "muss erfolgreich sein"). A task that asks for tests to
be written without naming a command gets the repository's own test command.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator

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
from core.criteria.extract_files import add_file, negated, path_list, wanted
from core.criteria.extract_text import Block, FoundPath, Quote
from core.criteria.extract_words import MODAL, PASS, RUN, STILL, TESTS, WRITE_TESTS

__all__ = ["bookkeeping", "commands", "lint_in_words", "tests_in_words", "tests_written"]

# What a command is called when it is named before it: "run the linter (`ruff check .`)".
_TOOL = (
    r"(?:the\s|le\s|la\s|les\s|den\s|die\s|das\s|el\s|los\s)?"
    r"(?:command|script|check|checks|linter|formatter|build|tests?|test\ssuite|type[\s-]?checker"
    r"|commande|befehl|comando|tests\sunitaires|pruebas)"
)
_RUN_BEFORE = re.compile(
    rf"\b{RUN}(?:\s{_TOOL})?(?:\s(?:again|once\smore|encore|erneut|nochmal|de\snuevo))?"
    r"(?:\s(?:it|them|this|that|le|la|les|es|sie|lo|la))?(?:\s(?:with|using|via|avec|mit|con))?"
    r"\s?:?\s?\(?$"
    r"|\bthe\scommand\s?:?\s?$"
    r"|\b(?:lint|build|check|test|type-?check|verify|compile|rebuild|relint)(?:s|ed|ing)?"
    r"(?:\s(?:it|everything|the\scode|the\sproject))?\swith\s?:?\s?$",
)
# The next command of a list whose first was asked to run: "… and the type checker (`tsc`)".
_RUN_TOO = re.compile(rf"(?:^|\b(?:and|then|et|puis|und|dann|y|luego)|,)\s{_TOOL}\s?:?\s?\(?$")
_NEGATED = re.compile(
    r"(?:\b(?:not|never|avoid|without|instead\sof|rather\sthan|ne|jamais|sans|nicht|nie"
    r"|ohne|no|nunca|sin)|n't)\s\S{0,80}\s?$",
)
_SUCCEEDS = re.compile(
    rf"\)?\s(?:{MODAL}\s(?:{STILL}\s)?)?{PASS}\b",
)
# "`make docs` is failing on CI; please fix it": what is to be fixed must succeed afterwards.
_FAILING = re.compile(
    r"\s(?:(?:is|are|keeps?|still)\s)?(?:failing|fails|broken|red|crashing|crashes|erroring"
    r"|échoue|plante|schlägt\sfehl|scheitert|falla|está\sfallando)\b",
)
_FIX = re.compile(
    r"\b(?:fix|repair|make\sit\spass|corrige[rz]?|répare[rz]?|behebe|beheben|repara|arregla)\b",
)
_FIX_REACH = 160
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
    """Every quoted command ``block`` asks to run or to succeed."""
    ran = False
    for group in _quote_groups(block):
        before = block.before(group[0].start)
        run = _RUN_BEFORE.search(before) or (_RUN_TOO.search(before) if ran else None)
        if run and _NEGATED.search(before[: run.start()]):
            continue
        end = group[-1].end
        failing = _FAILING.match(block.lower, end)
        to_fix = failing is not None and _FIX.search(
            block.lower, failing.end(), min(len(block.lower), failing.end() + _FIX_REACH)
        )
        if not (run or _SUCCEEDS.match(block.lower, end) or to_fix):
            continue
        ran = ran or run is not None
        for quote in group:
            _command(found, block, quote, asked_to_run=run is not None)


# --- tests and lint in words ----------------------------------------------------------------------

_TESTS_PASS = re.compile(
    rf"\b{TESTS}(?:\ssuite)?(?P<mid>(?:\s[^\s;:!?]{{1,512}}){{0,6}}?)"
    rf"\s(?:(?:{MODAL}|are\sexpected\sto)\s)?(?:{STILL}\s)?"
    r"(?:pass(?:es)?|succeed|(?:be|is|are|stays?)\sgreen|passer|passent|réussir|réussissent"
    r"|bestehen|durchlaufen|grün\ssein|pasar|pasan)\b",
)
_MID_STOP = re.compile(
    r"[.!?](?:\s|$)|\x01|\b(?:that|which|who|where|when|if|unless|but|not|never|no|fail\w{0,16}"
    r"|ne|pas|qui|que|si|nicht|kein|keine|wenn)\b|n't\b",
)
_PASS_OBJECT = re.compile(
    r"\s(?:a|an|the|this|that|these|those|it|them|its|their|through|along|over|down|around)\b",
)
_NO_BROKEN_TESTS = re.compile(
    r"\b(?:no\s(?:failing|broken)\stests|(?:don't|do\snot|without)\sbreak(?:ing)?\s"
    r"(?:(?:any|the|existing)\s){0,3}tests"
    r"|keep\s(?:(?:all|the|existing|our)\s){0,3}tests\s(?:passing|green))\b",
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
    for match in _TESTS_PASS.finditer(block.lower):
        if _MID_STOP.search(match.group("mid")) or _PASS_OBJECT.match(block.lower, match.end()):
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
    for match in _NO_BROKEN_TESTS.finditer(block.lower):
        criterion = {
            "type": "test_pass",
            "command": ctx.commands.test,
            "description": "Tests must pass",
        }
        found.add(block.offset + match.start(), criterion)


# "write tests for X", "add a regression test", "cover it with tests" — not "a test file".
_WRITE_TESTS = re.compile(
    rf"\b{WRITE_TESTS}\s(?:(?:a|an|some|more|new|the|extra|additional|des|un|une|de|nouveaux"
    r"|quelques|einige|neue|einen|una|unos|unas|algunos|algunas|nuevos|nuevas|más)\s){0,2}"
    r"(?:(?:unit|integration|regression|end-to-end|e2e|smoke)\s)?"
    rf"{TESTS}\b(?!\s(?:files?|fixtures?|data|helpers?|config\w{{0,8}}|director\w{{1,3}}"
    r"|folders?|environments?|servers?|databases?|accounts?|users?|fichiers?|dateien?"
    r"|archivos?)\b)"
    r"|\bcover\b(?:\s[^\s.;:!?]{1,40}){0,6}?\swith\s(?:(?:unit|integration)\s)?tests\b",
)
_TESTS_FOR = re.compile(
    r"\s(?:for|of|covering|pour|für|para|de)\s(?:(?:the|le|la|les|den|die|das|el)\s)?"
    r"(?:(?:file|module|fichier|datei|archivo)\s)?",
)


def tests_written(found: Found, block: Block) -> None:
    """Tests the task asks to be written, and the files they are for.

    Whether the repository's test command must then pass is decided once the whole task is
    read (`Found.tests_asked`): not when the task names a test command of its own.
    """
    for match in _WRITE_TESTS.finditer(block.lower):
        if negated(block, match.start()):
            continue
        found.tests_asked.append(block.offset + len(block.lower))
        joiner = _TESTS_FOR.match(block.lower, match.end())
        if joiner:
            for hit in wanted(block, match.start(), path_list(block, joiner.end())):
                add_file(found, block, hit)


def _lint_command(block: Block, match: re.Match[str], ctx: Context) -> tuple[list[str], str]:
    group = "tool" if match.group("tool") else "tool2"
    tool = match.group(group) or ""
    if tool in _TOOL_COMMANDS:
        as_written = block.plain[match.start(group) : match.end(group)]  # "TypeScript"
        return _TOOL_COMMANDS[tool], f"No {as_written} errors"
    if tool.startswith("typ"):
        checker = _TYPE_CHECKERS.get(ctx.commands.ecosystem, ["mypy", "."])
        return checker, "No type errors"
    return ctx.commands.lint, "No lint errors"


def lint_in_words(found: Found, block: Block, ctx: Context) -> None:
    for match in _LINT_WORDS.finditer(block.lower):
        command, description = _lint_command(block, match, ctx)
        criterion = {"type": "no_lint_errors", "command": command, "description": description}
        found.add(block.offset + match.start(), criterion)


# --- changelog and backlog ------------------------------------------------------------------------

_CHANGELOG_VERB = (
    r"\b(?:updat(?:e|es|ed|ing)|add(?:s|ed|ing)?|writ(?:e|es|ing)|met(?:s|tez|tre)\sà\sjour"
    r"|ajout(?:e|ez|er)|compl[èé]t(?:e|ez|er)|aktualisier(?:e|en)|ergänz(?:e|en)|füg(?:e|en)"
    r"|pfleg(?:e|en)|actualiz(?:a|ar)|añad(?:e|ir|a)|agreg(?:a|ar)|escrib(?:e|ir))\b"
    r"[^.!?]{0,40}?"
)
_UPDATED = (
    r"(?:updated|added|written|mise?\sà\sjour|complétée?|aktualisiert|ergänzt"
    r"|actualizad[oa]|añadid[oa])"
)
_CHANGELOG = re.compile(
    rf"{_CHANGELOG_VERB}\b(?P<word>change\s?log)\b"
    rf"|\b(?P<word2>change\s?log)(?:\sentry)?\s{MODAL}\s(?:be|être|werden|ser)\s{_UPDATED}\b",
)
_BACKLOG_VERB = (
    r"\b(?:updat(?:e|es|ed|ing)|mark(?:s|ed|ing)?|tick(?:s|ed)?(?:\soff)?|check\soff"
    r"|met(?:s|tez|tre)\sà\sjour|coch(?:e|ez|er)|marqu(?:e|ez|er)|aktualisier(?:e|en)"
    r"|hak(?:e|en)|markier(?:e|en)|actualiz(?:a|ar)|marc(?:a|ar)|tach(?:a|ar))\b"
    r"[^.!?]{0,40}?"
)
_BACKLOG = re.compile(
    rf"{_BACKLOG_VERB}\b(?P<word>backlog)\b"
    rf"|\b(?P<word2>backlog)(?:\s(?:item|task|entry))?\s{MODAL}\s(?:be|être|werden|ser)\s"
    r"(?:updated|marked|ticked|mis\sà\sjour|coché|aktualisiert|abgehakt|actualizado|marcado)\b",
)
# A path is one word (a quoted one, one character) of plain text: whether it is a changelog
# is read from its name, and its verb from the text before it.
_CHANGELOG_BEFORE = re.compile(rf"{_CHANGELOG_VERB}$")
_BACKLOG_BEFORE = re.compile(rf"{_BACKLOG_VERB}$")
_CHANGELOG_NAMES = frozenset({"changelog", "change_log", "changes", "history", "news"})
_BACKLOG_NAMES = frozenset({"backlog", "todo"})
_NOTES_EXTENSIONS = frozenset({"", "md", "markdown", "rst", "txt", "adoc"})
# An acceptance list's item: "- CHANGELOG.md updated".
_ITEM_START = re.compile(r"(?:[-*+]|\d{1,9}[.)])?\s?(?:the\s)?")
_LISTED = re.compile(
    r"\s(?:(?:is|was|has\sbeen)\s)?(?:updated|has\s(?:a|an)\s(?:new\s)?entry|ticked|marked"
    r"|mise?\sà\sjour|aktualisiert|actualizad[oa])\s?\.?$",
)


def _named(names: frozenset[str]) -> Callable[[str], bool]:
    def check(path: str) -> bool:
        stem, _, ext = posixpath.basename(path).lower().partition(".")
        return stem in names and ext in _NOTES_EXTENSIONS

    return check


_BOOKKEEPING = (
    (
        (_CHANGELOG, _named(_CHANGELOG_NAMES), _CHANGELOG_BEFORE),
        ("changelog_updated", CHANGELOG_FILES, CHANGELOG_PATTERN, "Changelog entry added"),
    ),
    (
        (_BACKLOG, _named(_BACKLOG_NAMES), _BACKLOG_BEFORE),
        ("backlog_updated", BACKLOG_FILES, BACKLOG_PATTERN, "Backlog task marked complete"),
    ),
)


def bookkeeping(found: Found, block: Block, ctx: Context) -> None:
    for (phrase, name, verb_before), (kind, files, pattern, description) in _BOOKKEEPING:
        asked: list[tuple[int, FoundPath | None]] = []
        for match in phrase.finditer(block.lower):
            word = match.start("word") if match.group("word") else match.start("word2")
            asked.append((match.start(), block.path_around(word)))
        for hit in block.paths.values():
            if not name(hit.path):
                continue
            listed = (
                hit.start <= 16
                and _ITEM_START.fullmatch(block.lower[: hit.start]) is not None
                and _LISTED.match(block.lower, hit.end) is not None
            )
            if listed or verb_before.search(block.before(hit.start)):
                asked.append((hit.start, hit))
        for at, named in asked:
            if named is not None and named.problem:
                found.skip(f"{kind} {named.path}", named.problem)
                continue
            path = named.path if named else first_existing(ctx.repo, files)
            criterion = {"type": kind, "path": path, "pattern": pattern, "description": description}
            found.add(block.offset + at, criterion)
