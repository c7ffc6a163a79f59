"""Feeding fixtures to adapters, and what every event must be whatever the input."""

from __future__ import annotations

import math
from pathlib import Path

from core.agents.base import AgentAdapter
from core.agents.events import MAX_ERROR_CHARS, MAX_SUMMARY_CHARS, PHASES, AgentEvent
from core.text import unsafe

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: The checkout the fixtures' runs happen in: paths inside it are shown relative to it.
CWD = "/work/checkouts/task-42"

Triple = tuple[str, str, str | None]


def lines_of(path: Path) -> list[bytes]:
    """The fixture's lines, each with its line ending, as a pipe hands them over."""
    return path.read_bytes().splitlines(keepends=True)


def run(adapter: AgentAdapter, lines: list[bytes]) -> list[AgentEvent]:
    """Every event of ``lines`` and of the end of the stream, each checked with `assert_sane`."""
    events: list[AgentEvent] = []
    for line in lines:
        events.extend(adapter.parse_line(line))
    events.extend(adapter.finish())
    for event in events:
        assert_sane(event)
    return events


def triples(events: list[AgentEvent]) -> list[Triple]:
    return [(e.phase, e.summary, e.tool) for e in events]


_UNSAFE = unsafe(keep_lines=False, keep_tabs=False)


def _one_line(text: str, limit: int) -> None:
    assert len(text) <= limit, len(text)
    assert not _UNSAFE.search(text), repr(text)
    assert "\x1b" not in text
    text.encode("utf-8")  # no lone surrogates: it must be writable


def assert_sane(event: AgentEvent) -> None:
    """What the host may rely on, whatever the agent printed."""
    assert isinstance(event, AgentEvent)
    assert event.phase in PHASES
    _one_line(event.summary, MAX_SUMMARY_CHARS)
    if event.tool is not None:
        _one_line(event.tool, 64)
    if event.error is not None:
        _one_line(event.error, MAX_ERROR_CHARS)
    if event.phase == "error":
        assert event.error
    if event.session_id is not None:
        _one_line(event.session_id, 200)
    if event.final_text is not None:
        event.final_text.encode("utf-8")
    for tokens in (event.tokens_in, event.tokens_out):
        assert tokens is None or (type(tokens) is int and tokens > 0)
    if event.cost_usd is not None:
        assert math.isfinite(event.cost_usd) and event.cost_usd >= -1e-12
