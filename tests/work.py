"""Counting work instead of timing it.

A test that asserts "this takes under a second" fails on a loaded machine and passes on a fast
one whatever the code does. `python_steps` counts the lines of Python that a call executes in
the modules named: the same number on any machine, so a test can say "twice the input costs
twice the work" exactly. Work done inside C (a regular expression, ``str.find``) is not counted;
the benchmarks in tests/bench/ measure speed, including that.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any, TypeVar

T = TypeVar("T")


def python_steps(call: Callable[[], T], *modules: ModuleType) -> tuple[T, int]:
    """Run ``call``; its result and how many lines of ``modules``' code it executed."""
    files = {module.__file__ for module in modules}
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame: FrameType, event: str, arg: Any) -> Any:
        # Only frames of the named modules are traced line by line; the rest run untraced.
        return local if frame.f_code.co_filename in files else None

    previous = sys.gettrace()
    sys.settrace(global_)
    try:
        result = call()
    finally:
        sys.settrace(previous)
    return result, count


def growth(steps: Callable[[int], int], size: int) -> float:
    """How many times the work grows when the input doubles from ``size``: about 2 for work
    linear in the input, 4 for quadratic, 1 for work that does not depend on it."""
    return steps(2 * size) / steps(size)
