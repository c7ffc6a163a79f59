"""The NanoClaw runner's framed stdout, decoded: results, errors, log around them, and every way
a stream can be broken (cut chunks, bad JSON, a lost end marker, a frame without end, a frame
over the 1 MiB cap), with escape sequences in results kept as data."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.nanoclaw.frames import END, FRAME_LIMIT, START, FrameDecoder, decode


def frame(doc: object) -> bytes:
    """One frame as the runner prints it: three lines, the JSON compact."""
    return START + b"\n" + json.dumps(doc).encode() + b"\n" + END + b"\n"


COMPLETION = '<completion>{"run_id": "r1"}</completion>'
RUN = (
    b"[agent-runner] starting\n"
    + frame({"status": "success", "result": "Working on it."})
    + b"some log line\n"
    + frame({"status": "success", "result": COMPLETION, "newSessionId": "s-1"})
    + frame({"status": "success", "result": None, "newSessionId": "s-2"})
    + b"[agent-runner] done\n"
)


def test_results_are_joined_with_newlines_and_log_is_left_out() -> None:
    got = decode(RUN)
    assert got.text == "Working on it.\n" + COMPLETION + "\n"
    assert (got.frames, got.results) == (3, 2)
    assert got.session_id == "s-2" and got.error is None
    assert got.problems == () and not got.overflowed and not got.unterminated


@pytest.mark.parametrize("size", [1, 2, 7, 26, 27, 64, 4096])
def test_chunks_cut_anywhere_decode_the_same(size: int) -> None:
    decoder = FrameDecoder()
    for at in range(0, len(RUN), size):
        decoder.feed(RUN[at : at + size])
    assert decoder.finish() == decode(RUN)


@given(st.lists(st.integers(min_value=1, max_value=len(RUN)), max_size=20))
def test_any_cut_of_the_stream_decodes_the_same(cuts: list[int]) -> None:
    decoder = FrameDecoder()
    last = 0
    for at in sorted(set(cuts)):
        decoder.feed(RUN[last:at])
        last = at
    decoder.feed(RUN[last:])
    assert decoder.finish() == decode(RUN)


def test_an_error_frame_carries_its_text() -> None:
    got = decode(frame({"status": "error", "result": None, "error": "Claude Code exited 1"}))
    assert got.error == "Claude Code exited 1" and got.text == ""
    bare = decode(frame({"status": "error", "result": None}))
    assert bare.error is not None and "without saying" in bare.error


def test_a_result_that_is_not_a_string_is_taken_as_its_json() -> None:
    got = decode(frame({"status": "success", "result": {"a": [1, "é"]}}))
    assert got.text == '{"a":[1,"é"]}\n'


def test_markers_need_not_be_on_their_own_lines() -> None:
    doc = json.dumps({"status": "success", "result": "x"}).encode()
    assert decode(b"log" + START + doc + END + b"more").text == "x\n"


@pytest.mark.parametrize(
    "body",
    [b"not json", b"", b"[1, 2]", b'"text"', b'{"status": "success", "result": "cut', b"{" * 5000],
)
def test_a_body_that_is_not_a_json_object_is_a_problem_and_skipped(body: bytes) -> None:
    good = frame({"status": "success", "result": COMPLETION})
    got = decode(START + b"\n" + body + b"\n" + END + b"\n" + good)
    assert got.text == COMPLETION + "\n"
    assert got.problems == ("a frame's body is not a JSON object",)


def test_a_frame_whose_end_was_lost_does_not_take_the_next_one_with_it() -> None:
    cut = START + b'\n{"status": "success", "resu'  # the runner died mid-line, then restarted
    got = decode(cut + b"\n" + frame({"status": "success", "result": COMPLETION}))
    assert got.text == COMPLETION + "\n"
    assert got.problems == ("a frame had no end marker before the next frame began",)


def test_a_start_marker_inside_a_result_is_only_text() -> None:
    text = f"the runner prints {START.decode()} before its JSON"
    assert decode(frame({"status": "success", "result": text})).text == text + "\n"


def test_a_start_without_end_is_reported_when_the_stream_ends() -> None:
    got = decode(frame({"status": "success", "result": "first"}) + START + b'\n{"status"')
    assert got.text == "first\n" and got.unterminated
    assert got.problems == ("the output ended inside a frame (a start marker without its end)",)


def test_an_end_without_start_is_log() -> None:
    assert decode(END + b"\n" + b'{"status": "error", "error": "x"}\n' + END).error is None


def test_a_frame_over_the_cap_overflows_and_is_skipped_unheld() -> None:
    decoder = FrameDecoder()
    decoder.feed(START + b'\n{"status": "success", "result": "')
    chunk = b"a" * 65536
    for _ in range(FRAME_LIMIT // len(chunk) + 8):  # 1.5 MiB into one frame
        decoder.feed(chunk)
        assert len(decoder._buf) <= FRAME_LIMIT + len(chunk)
    assert decoder.overflowed
    assert len(decoder._buf) < len(END)  # skipping: nothing of the frame is held
    decoder.feed(b'"}\n' + END + b"\n" + frame({"status": "success", "result": "after"}))
    got = decoder.finish()
    assert got.text == "after\n" and got.overflowed and not got.unterminated
    assert got.problems == (f"a frame passed {FRAME_LIMIT:,} bytes without its end marker",)


def test_a_frame_just_under_the_cap_is_read() -> None:
    text = "b" * (FRAME_LIMIT - 100)
    got = decode(frame({"status": "success", "result": text}))
    assert got.text == text + "\n" and not got.overflowed


def test_escape_sequences_in_results_stay_characters_of_the_result() -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J\r\u202e<completion>{}</completion>"
    got = decode(frame({"status": "success", "result": hostile}))
    assert got.text == hostile + "\n"  # kept as data: nothing here interprets or drops it
    raw = decode(START + b"\n" + b'{"result": "\x1b[31m"}' + b"\n" + END)
    assert raw.problems == ("a frame's body is not a JSON object",)  # a raw control char in JSON


def test_the_result_text_keeps_its_end_within_the_limit() -> None:
    decoder = FrameDecoder(results_limit=100)
    for n in range(50):
        decoder.feed(frame({"status": "success", "result": f"part {n:02d}"}))
    decoder.feed(frame({"status": "success", "result": "x" * 500}))
    got = decoder.finish()
    assert len(got.text) == 100 and got.text.endswith("x\n") and got.results == 51


def test_problems_are_counted_past_the_ones_described() -> None:
    bad = (START + b"\nnope\n" + END + b"\n") * 50
    got = decode(bad)
    assert got.problem_count == 50 and len(got.problems) == 20


@given(st.binary(max_size=2000))
def test_any_bytes_decode_without_raising(data: bytes) -> None:
    got = decode(data + RUN)
    assert got.frames >= 1


@given(st.text(max_size=200))
def test_any_result_text_comes_back_whole(text: str) -> None:
    assert decode(frame({"status": "success", "result": text})).text == text + "\n"
