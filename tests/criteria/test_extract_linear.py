"""Criteria extraction does work in proportion to the task's length, whatever its shape.

A task text comes from whoever dispatches, up to a megabyte. Timing a regular expression on a
loaded machine proves nothing, so linearity is shown in two countable parts:

1. **Every pattern has a bounded reach.** Parsed with the ``re`` module's own parser, no
   pattern the extractor runs on task text can look at more than `REACH` characters from where
   an attempt starts (its lookarounds included): no ``*`` or ``+`` without an upper bound.
   A search over *n* characters then makes at most *n* attempts of bounded cost each.
2. **The Python around the patterns is linear.** The extractor runs on inputs of size *n* and
   *2n* of many shapes, counting every line of the extractor's modules that executes (through
   ``sys.settrace``) and every character handed to a regular expression. Both counts are exact,
   so the ratio between the two sizes is the same on any machine: about 2 when the work is
   linear, about 4 when it is quadratic.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from types import FrameType, ModuleType
from typing import Any

import pytest

import core.criteria
import core.criteria.extract as extract
from core.criteria.extract import extract_criteria, task_text_of

#: The most characters one attempt of any extractor pattern may look at.
REACH = 4096
#: Linear work doubles with the input (less, with fixed costs); quadratic work quadruples.
MAX_RATIO = 2.5


def extractor_modules() -> list[ModuleType]:
    """Every module whose code reads task text during extraction: ``core.criteria.extract*``."""
    names = [m.name for m in pkgutil.iter_modules(core.criteria.__path__)]
    found = [
        importlib.import_module(f"core.criteria.{n}") for n in names if n.startswith("extract")
    ]
    assert extract in found and len(found) > 1
    return found


def _reach(parsed: Any) -> int:
    """How far one attempt of ``parsed`` can look, lookarounds included (they have no width)."""
    widest = parsed.getwidth()[1]
    for op, av in parsed.data:
        subs: list[Any] = []
        if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            subs = [av[1]]
        elif op in (
            sre_constants.MAX_REPEAT,
            sre_constants.MIN_REPEAT,
            getattr(sre_constants, "POSSESSIVE_REPEAT", None),
        ):
            subs = [av[2]]
        elif op is sre_constants.SUBPATTERN:
            subs = [av[3]]
        elif op is getattr(sre_constants, "ATOMIC_GROUP", None):
            subs = [av]
        elif op is sre_constants.BRANCH:
            subs = list(av[1])
        elif op is sre_constants.GROUPREF_EXISTS:
            subs = [s for s in av[1:] if s is not None]
        elif op is sre_constants.GROUPREF:
            return sre_constants.MAXREPEAT  # a back-reference can be as long as its group
        widest = max([widest, *(_reach(sub) for sub in subs)])
    return int(widest)


def module_patterns() -> list[tuple[str, re.Pattern[str]]]:
    found = []
    for module in extractor_modules():
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                found.append((f"{module.__name__.rsplit('.', 1)[-1]}.{name}", value))
    return found


def test_the_reach_measure_sees_unbounded_patterns() -> None:
    # The measure itself must be able to fail, or the test below proves nothing.
    assert _reach(sre_parse.parse(r"a+")) >= REACH
    assert _reach(sre_parse.parse(r"(?=\s*x)a")) >= REACH
    assert _reach(sre_parse.parse(r"(?:a{1,10}b){1,3}")) == 33
    assert _reach(sre_parse.parse(r"(?<![\w.])x{0,64}")) == 64


@pytest.mark.parametrize(("name", "pattern"), module_patterns(), ids=lambda v: str(v)[:40])
def test_every_pattern_has_a_bounded_reach(name: str, pattern: re.Pattern[str]) -> None:
    reach = _reach(sre_parse.parse(pattern.pattern, pattern.flags))
    assert reach <= REACH, f"{name} can look {reach} characters ahead: {pattern.pattern[:120]}"


def test_the_extractor_calls_no_uncompiled_regular_expressions() -> None:
    # `re.search(r"...", text)` would escape the check above; every pattern is a module constant.
    for module in extractor_modules():
        source = open(module.__file__ or "", encoding="utf-8").read()  # noqa: SIM115
        called = re.findall(r"\bre\.(search|match|fullmatch|finditer|findall|sub|split)\(", source)
        assert called == [], f"{module.__name__} calls re.{called} with an uncompiled pattern"


# --- counting work ----------------------------------------------------------------------------


@dataclass
class Work:
    lines: int = 0
    """Lines of the extractor's modules executed."""
    scanned: int = 0
    """Characters handed to regular expressions."""


class _Counted:
    """A compiled pattern that adds to ``work`` the characters each call can look at."""

    def __init__(self, pattern: re.Pattern[str], work: Work) -> None:
        self._pattern = pattern
        self._work = work
        self._reach = _reach(sre_parse.parse(pattern.pattern, pattern.flags))

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._pattern, name)
        if name not in _SCANNING:
            return attribute

        def counted(*args: Any) -> Any:
            if name in ("sub", "subn"):
                text, start, stop = args[1], 0, len(args[1])
            else:
                text = args[0]
                start = args[1] if len(args) > 1 else 0
                stop = min(args[2], len(text)) if len(args) > 2 else len(text)
            looked = max(0, stop - start)
            # An anchored match looks no further than the pattern reaches; the others try
            # every position up to the end.
            self._work.scanned += min(looked, self._reach) if name == "match" else looked
            return attribute(*args)

        return counted


_SCANNING = {"search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}


@contextmanager
def counting(*also: str) -> Iterator[Work]:
    """Count the extractor's work (and that of the files ``also`` names) inside the block."""
    work = Work()
    modules = extractor_modules()
    files = {module.__file__ for module in modules} | set(also)
    saved = [(m, n, v) for m in modules for n, v in vars(m).items() if isinstance(v, re.Pattern)]
    for module, name, value in saved:
        setattr(module, name, _Counted(value, work))

    def local(frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        if event == "line":
            work.lines += 1
        return local

    def trace(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        return local if frame.f_code.co_filename in files else None

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield work
    finally:
        sys.settrace(previous)
        for module, name, value in saved:
            setattr(module, name, value)


def work_for(text: str) -> Work:
    with counting() as work:
        extract_criteria(text, universal=False)
    return work


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


TASK = (
    "Create src/app/handlers.py and update README.md; it must contain `## Usage`.\n"
    "- Run `pytest tests/test_handlers.py` and `ruff check .`\n"
    "- All tests in tests/test_handlers.py must pass, e.g. after editing config.json.\n\n"
)

# Shapes chosen to defeat a backtracking pattern or a loop over everything found so far.
SHAPES: dict[str, Callable[[int], str]] = {
    "one long word": lambda n: "a" * n,
    "a long run of spaces inside a sentence": lambda n: "tests" + " " * n + "pass",
    "spaces after a path": lambda n: "a.py" + " " * n + "x",
    "spaces after a verb": lambda n: "create" + " " * n + "x",
    "spaces before a bullet": lambda n: "\n" + " " * n + "-",
    "digits after a newline": lambda n: "\n" + "1" * n,
    "dots": lambda n: "." * n,
    "words and dots": _repeat("a."),
    "hyphens": lambda n: "-" * n,
    "a-hyphenated-word": _repeat("a-"),
    "plus signs": _repeat("a+"),
    "a long URL": lambda n: "http://" + "a" * n,
    "an e-mail that never ends": lambda n: "a." * (n // 2) + "@",
    "many lines": _repeat("Create src/a.py.\n"),
    "many backticks": lambda n: "x" + "`" * n,
    "backticked words": _repeat("`x` "),
    "one long backtick quote": lambda n: "`" + "a " * (n // 2) + "`",
    "a long list of quotes": _repeat("`a`, "),
    "a long list of double quotes over lines": _repeat('"a",\n  '),
    "one long quoted word": lambda n: "`" + "a" * n + "`",
    "opening curly quotes": lambda n: "“" * n,
    "opening curly quotes and letters": _repeat("“a"),
    "many paths": _repeat("src/a/b/c.py "),
    "a deep path": lambda n: "a/" * (n // 2) + "b.py",
    "nested brackets": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "repeated creation words": _repeat("new "),
    "fillers after a verb": lambda n: "create " + "the " * (n // 4),
    "a long word after tests": lambda n: "tests " + "x" * n + " pass",
    "a long word after package": lambda n: "package " + "a" * n + " must",
    "paths and tests that pass": _repeat("a.py tests pass "),
    "paths and pronouns": _repeat("a.py it has `x` "),
    "paths and changelogs": _repeat("update changelog a.py "),
    "a fence that never closes": lambda n: "```\n" + "create a.py\n" * (n // 12),
    "fences": _repeat("```\n"),
    "bullets": _repeat("- a\n"),
    "a realistic task, repeated": _repeat(TASK),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_work_grows_linearly_with_the_text(shape: str) -> None:
    make = SHAPES[shape]
    small, large = work_for(make(6000)), work_for(make(12000))
    # The counter must see the work, or a ratio of two small numbers would prove nothing.
    assert small.lines > 100, small
    assert large.lines <= MAX_RATIO * small.lines, (small, large)
    assert large.scanned <= MAX_RATIO * small.scanned, (small, large)


def _careless(text: str) -> int:
    """Every sentence compared with every other, as a careless rule would do."""
    sentences = text.split(". ")
    return sum(1 for _ in sentences for _ in sentences)


def test_the_work_counter_sees_quadratic_work() -> None:
    with counting(__file__) as small:
        _careless("a. " * 300)
    with counting(__file__) as large:
        _careless("a. " * 600)
    assert large.lines / small.lines > MAX_RATIO


def test_a_long_realistic_task_costs_a_few_lines_of_work_per_character() -> None:
    # A bound on the constant, not only on the growth: 50 KB of ordinary task text (every line
    # is traced, so a larger text costs the suite seconds and proves the same bound).
    text = task_text_of({"input": TASK * (50_000 // len(TASK))})
    with counting() as work:
        extract_criteria(text, universal=False)
    assert work.lines <= 8 * len(text), work
    assert work.scanned <= 25 * len(text), work
