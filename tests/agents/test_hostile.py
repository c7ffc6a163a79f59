"""Whatever an agent prints, an adapter answers with sane events and never raises.

Memory is bounded by counting it (tracemalloc), never by timing anything.
"""

from __future__ import annotations

import copy
import io
import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.agents.aider import AiderAdapter
from core.agents.base import MAX_FINAL_CHARS, MAX_LINE_BYTES, MAX_REPORTED_PROBLEMS, LineAdapter
from core.agents.events import total_usage
from core.agents.lines import read_lines
from core.agents.registry import ADAPTERS, adapter_for
from tests.agents.helpers import FIXTURES, assert_sane, lines_of, run

NAMES = sorted(ADAPTERS)
JSON_AGENTS = ["claude-code", "codex", "opencode"]
FOLDERS = {"claude-code": "claude_code", "codex": "codex", "opencode": "opencode"}
HOSTILE_LINES: list[bytes | str] = [
    b"",
    b"\n",
    b"\r\n",
    b"   \t  \n",
    b"\x00" * 64,
    b"\xff\xfe\xfd\xfc",
    b"\xed\xa0\x80",  # a UTF-8-encoded surrogate: not UTF-8
    b"\xc3",  # a cut multi-byte character
    b'{"type":"result","subtype":"success","result":"cut',
    b"{",
    b"}",
    b"[]",
    b"null",
    b"1e999999",
    b'"just a string"',
    b'{"type": null}',
    b'{"type": {"nested": true}}',
    b'{"type": "\\ud800"}',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"\\ud800\\udfff\\ud83d"}]}}',
    b'{"type":"result","total_cost_usd":NaN,"usage":{"input_tokens":Infinity}}',
    b'{"type":"result","total_cost_usd":1e308,"usage":{"input_tokens":99999999999999999999999}}',
    b'{"type":"turn.completed","usage":{"input_tokens":true,"output_tokens":1.5}}',
    b'{"type":"step_finish","part":{"reason":"stop","cost":-1,"tokens":{"input":-5}}}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b"\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x9b6n\x1bP+q\x1b\\",
    b"\x1b[31mApplied edit to \x1b[0m/etc/passwd\x1b[K",
    "Tokens: 9" * 100 + " sent",
    b"Tokens: 999999999999k sent, 999999999999k received."
    b" Cost: $999999999999.0 message, $1 session.",
    b"Commit zzzzzzz not a sha",
    ("\u202e\u2066" * 1000 + "\n").encode(),
]


def _as_bytes(line: bytes | str) -> bytes:
    return line.encode() if isinstance(line, str) else line


@pytest.mark.parametrize("name", NAMES)
def test_hostile_lines_never_raise_and_give_at_most_one_event_each(name: str) -> None:
    adapter = adapter_for(name)
    for raw in HOSTILE_LINES:
        events = adapter.parse_line(_as_bytes(raw))
        for event in events:
            assert_sane(event)
        assert len(events) <= 2, (raw[:40], events)  # an answer line may be a message + error
    for event in adapter.finish():
        assert_sane(event)
    assert adapter.finish() == []  # the end is reported once


@pytest.mark.parametrize("name", NAMES)
def test_objects_and_odd_types_are_refused_quietly(name: str) -> None:
    adapter = adapter_for(name)
    for line in (None, 42, "a str", object(), memoryview(b'{"type":"x"}'), bytearray(b"{")):
        for event in adapter.parse_line(line):  # type: ignore[arg-type]
            assert_sane(event)


@pytest.mark.parametrize("name", NAMES)
def test_a_5_mb_line_is_skipped_unread_and_reported_once(name: str) -> None:
    inner = b'{"type":"assistant","message":{"content":[{"type":"text","text":"'
    huge = inner + b"a" * (5 * 1024 * 1024) + b'"}]}}\n'
    adapter = adapter_for(name)
    tracemalloc.start()
    try:
        first = adapter.parse_line(huge)
        second = adapter.parse_line(huge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Not a copy, not a decode: far less than the line (5 MB) and less than the cap (1 MiB).
    assert peak < MAX_LINE_BYTES // 4, peak
    assert [e.error for e in first] == ["line too long"]
    assert second == []
    end = adapter.finish()
    assert "1 more lines were skipped" in end[-1].summary


def test_a_line_just_under_the_cap_is_read() -> None:
    text = "x" * (MAX_LINE_BYTES - 200)
    line = json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": text}})
    events = adapter_for("codex").parse_line(line.encode() + b"\n")
    assert [e.phase for e in events] == ["message"]
    assert len(events[0].summary) <= 400


def test_aider_keeps_at_most_its_cap_of_reply_text() -> None:
    line = b"r" * (900 * 1024) + b"\n"
    adapter = AiderAdapter()
    tracemalloc.start()
    try:
        for _ in range(8):  # 7.2 MB of reply, never reported as complete
            assert adapter.parse_line(line) == []
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 3 * MAX_FINAL_CHARS, held
    (end,) = adapter.finish()
    assert end.final_text is not None and len(end.final_text) <= MAX_FINAL_CHARS


class _Endless(io.RawIOBase):
    """A stream of one ``size``-byte line and then a short one, made up as it is read."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.tail = b'\n{"type":"thread.started","thread_id":"t-1"}\n'

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.left > 0:
            n = min(len(buffer), self.left)
            buffer[:n] = b"z" * n
            self.left -= n
            return n
        n = min(len(buffer), len(self.tail))
        buffer[:n] = self.tail[:n]
        self.tail = self.tail[n:]
        return n


def test_read_lines_hands_on_a_100_mb_line_as_its_first_cap_plus_one_bytes() -> None:
    stream = io.BufferedReader(_Endless(100 * 1024 * 1024 + 1), buffer_size=64 * 1024)
    adapter = adapter_for("codex")
    seen: list[int] = []
    events = []
    tracemalloc.start()
    try:
        for line in read_lines(stream):
            seen.append(len(line))
            events += adapter.parse_line(line)
            del line
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == [MAX_LINE_BYTES + 1, 44]
    assert peak < 3 * MAX_LINE_BYTES, peak
    assert [e.error for e in events] == ["line too long", None]
    assert adapter.session_id == "t-1"


def test_read_lines_keeps_ordinary_lines_whole() -> None:
    data = b"one\ntwo\r\n\nlast without newline"
    assert list(read_lines(io.BytesIO(data), limit=8)) == [
        b"one\n",
        b"two\r\n",
        b"\n",
        b"last with",
    ]
    over = list(read_lines(io.BytesIO(b"0123456789abcdef\nnext\n"), limit=8))
    assert over == [b"012345678", b"next\n"]
    exact = list(read_lines(io.BytesIO(b"1234567\n"), limit=8))
    assert exact == [b"1234567\n"]


@pytest.mark.parametrize("name", NAMES)
def test_after_enough_unreadable_lines_the_rest_are_only_counted(name: str) -> None:
    adapter = adapter_for(name)
    garbage = b"\xff\xfe not understood" if name != "aider" else b""
    reported = []
    for _ in range(MAX_REPORTED_PROBLEMS + 30):
        reported += adapter.parse_line(b"{" if name != "aider" else garbage)
    if name == "aider":
        assert reported == []  # any text may be part of a reply: nothing is refused
        return
    assert len(reported) == MAX_REPORTED_PROBLEMS
    end = adapter.finish()
    assert end[-1].summary.endswith(
        "30 more lines were skipped (not understood, or over the size cap)"
    )


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*at, key))
    elif isinstance(value, list):
        for index, child in enumerate(value[:3]):
            yield from _paths(child, (*at, index))


def _replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return doc


WRONG = [None, True, 0, -1, 2**70, 1.5e308, "", "x" * 500, "\x1b[31m", [], [None], {}, {"type": 1}]


@pytest.mark.parametrize("name", JSON_AGENTS)
def test_json_of_the_wrong_shape_at_every_level_never_raises(name: str) -> None:
    docs = []
    for fixture in sorted((FIXTURES / FOLDERS[name]).glob("*.jsonl")):
        for line in lines_of(fixture):
            try:
                docs.append(json.loads(line))
            except ValueError:
                continue
    checked = 0
    for doc in docs:
        for path in _paths(doc):
            if path == ("type",):
                continue
            for value in WRONG:
                adapter = adapter_for(name)
                line = json.dumps(_replaced(doc, path, value)).encode()
                for event in adapter.parse_line(line) + adapter.finish():
                    assert_sane(event)
                assert total_usage([]).tokens_in == 0
                checked += 1
    assert checked > 1_000


@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_adds_up_to_the_adapters_totals(name: str) -> None:
    folder = FIXTURES / FOLDERS.get(name, name)
    for fixture in sorted(p for p in folder.iterdir() if p.suffix != ".md"):
        adapter = adapter_for(name)
        events = run(adapter, lines_of(fixture))
        total = total_usage(events)
        assert (total.tokens_in, total.tokens_out) == (
            adapter.usage.tokens_in,
            adapter.usage.tokens_out,
        )
        assert (total.cost_usd is None) == (adapter.usage.cost_usd is None)
        assert total.cost_usd == pytest.approx(adapter.usage.cost_usd)
        assert sum(e.phase in ("done",) for e in events) <= 1


@pytest.mark.parametrize("name", NAMES)
def test_fixtures_fed_whole_or_without_line_endings_mean_the_same(name: str) -> None:
    folder = FIXTURES / FOLDERS.get(name, name)
    fixture = next(p for p in sorted(folder.iterdir()) if p.stem == "success" and p.suffix != ".md")
    stripped: Callable[[bytes], bytes] = lambda line: line.rstrip(b"\r\n")  # noqa: E731
    with_endings = run(adapter_for(name), lines_of(fixture))
    without = run(adapter_for(name), [stripped(line) for line in lines_of(fixture)])
    crlf = run(adapter_for(name), [stripped(line) + b"\r\n" for line in lines_of(fixture)])
    assert with_endings == without == crlf


def test_every_adapter_class_is_a_line_adapter() -> None:
    assert all(issubclass(cls, LineAdapter) for cls in ADAPTERS.values())
    assert Path(__file__).parent.joinpath("fixtures").is_dir()
