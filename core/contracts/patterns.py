"""Regular expressions from outside the host: the one way they are checked and matched.

A criterion's ``pattern`` comes from task text, a dispatch, an operator or a model, and the
text it is matched against comes from a worker (a file in the checkout, a command's output).
Python's ``re`` backtracks: ``^(a+)+$`` against ``"a" * 34 + "b"`` runs for hours, and it holds
the interpreter lock the whole time, so a host matching it in-process stops ingesting, ignores
SIGTERM, and freezes again on the same run after a restart.

So a pattern is only ever *matched* in a child interpreter (`search`): ``python -I -S`` with
its own session, a time limit (killed at the deadline, or at once when the caller cancels) and
address-space and CPU limits of its own, so even a child orphaned by a ``kill -9`` of its parent
ends by itself. Starting one costs tens of milliseconds, a few times per verified run. The
semantics stay Python's ``re``, the same engine that validated the pattern at dispatch.

*Compiling* happens in-process (`pattern_problem`): sre's parser and compiler do not
backtrack, and a pattern is at most `MAX_PATTERN_CHARS` long.

Why not a linear-time engine (RE2, the ``google-re2`` package)? It refuses lookarounds and
backreferences that valid criteria already use (the extractor's dependency patterns use a
lookahead), reads ``\\w``, ``\\d`` and ``\\Z`` differently from ``re``, and is linear only with
a large constant: measured, ``\\w{1000}\\w{1000}\\w{1000}c`` over 2 MiB took 97 s with RE2's
default memory budget. It would still need a time limit, and would change what a pattern means.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Final, Literal

MAX_PATTERN_CHARS: Final = 4096
"""Longer patterns are refused: no criterion needs one, and compile time grows with length."""
SEARCH_TIMEOUT_S: Final = 10.0
"""A search of a few MiB with a sane pattern takes milliseconds; ten seconds is a runaway."""
SEARCH_MEMORY_BYTES: Final = 512 * 1024 * 1024
"""The matcher's address-space limit: the text, its JSON copy, and room for sre's stack."""
_STEP_S: Final = 0.05
"""How often a waiting search looks at its deadline and at the caller's cancel flag."""

# The matcher. It reads one JSON request on stdin and writes one JSON answer on stdout; the
# limits are set before the request is read, and RLIMIT_CPU ends it even if nobody kills it.
_MATCHER: Final = """\
import json, re, resource, sys
memory, cpu = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
try:
    request = json.loads(sys.stdin.buffer.read())
    found = re.compile(request["pattern"], request["flags"]).search(request["text"])
    answer = {"span": [found.start(), found.end()] if found else None}
except MemoryError:
    answer = {"error": "the search needed more memory than it is allowed"}
except Exception as exc:
    answer = {"error": f"{type(exc).__name__}: {exc}"}
sys.stdout.write(json.dumps(answer))
"""

SearchStatus = Literal["found", "not_found", "timed_out", "error", "cancelled"]


@dataclass(frozen=True)
class PatternSearch:
    """How one search ended."""

    status: SearchStatus
    span: tuple[int, int] | None = None
    """Where the first match is in the text (characters), when ``found``."""
    detail: str = ""
    """Why, for ``timed_out`` and ``error``: a sentence for the person reading the result."""


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable regular expression, or None when it is.

    Compiles it in-process: compiling does not backtrack (only matching does).
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"it is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS} are allowed"
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return str(exc)
    return None


def search(
    pattern: str,
    text: str,
    *,
    multiline: bool = True,
    timeout_s: float = SEARCH_TIMEOUT_S,
    cancel: threading.Event | None = None,
) -> PatternSearch:
    """Search ``text`` for ``pattern`` (Python ``re``) in a child process. Never raises.

    Args:
        pattern: The regular expression, from wherever it came.
        text: What to search; the caller bounds its size.
        multiline: Compile with ``re.MULTILINE`` (``^`` and ``$`` at every line).
        timeout_s: Wall-clock limit; the child is killed when it is reached.
        cancel: When set, the search is abandoned at once (``cancelled``): a host shutting
            down never waits for a pattern.

    Returns:
        ``found`` with the span, ``not_found``, ``timed_out``, ``error`` or ``cancelled``.
    """
    problem = pattern_problem(pattern)
    if problem is not None:
        return PatternSearch("error", detail=f"bad pattern {pattern!r}: {problem}")
    request = json.dumps(
        {"pattern": pattern, "flags": int(re.MULTILINE) if multiline else 0, "text": text}
    ).encode("utf-8")
    cpu_s = int(timeout_s) + 1
    # The request goes in through a file, not a pipe: communicate() can be retried (to look at
    # the deadline and the cancel flag) only while it has no input left to write.
    with tempfile.TemporaryFile() as stdin:
        stdin.write(request)
        stdin.seek(0)
        try:
            child = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _MATCHER, str(SEARCH_MEMORY_BYTES), str(cpu_s)],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # a signal meant for the host's group never reaches it
            )
        except OSError as exc:
            return PatternSearch("error", detail=f"the pattern matcher did not start: {exc}")
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            out, err = child.communicate(timeout=_STEP_S)
            break
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.is_set():
                _end(child)
                return PatternSearch("cancelled", detail="the search was stopped")
            if time.monotonic() >= deadline:
                _end(child)
                return PatternSearch(
                    "timed_out",
                    detail=f"pattern {pattern!r} was still searching after {timeout_s:g} s and "
                    "was stopped (it backtracks too much on this text; simplify it)",
                )
    return _answer(pattern, child.returncode, out, err)


def _end(child: subprocess.Popen[bytes]) -> None:
    child.kill()
    child.communicate()


def _answer(pattern: str, code: int, out: bytes, err: bytes) -> PatternSearch:
    try:
        answer = json.loads(out)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        why = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:]
        return PatternSearch(
            "error", detail=f"the matcher for {pattern!r} {why}" + (f": {tail[0]}" if tail else "")
        )
    if "error" in answer:
        return PatternSearch("error", detail=f"bad pattern {pattern!r}: {answer['error']}")
    span = answer.get("span")
    if isinstance(span, list) and len(span) == 2:
        return PatternSearch("found", span=(int(span[0]), int(span[1])))
    return PatternSearch("not_found")
