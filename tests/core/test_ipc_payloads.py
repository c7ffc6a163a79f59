from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.contracts.errors import FieldError
from core.ipc.files import MAX_EVENT_BYTES
from core.ipc.payloads import (
    AckFile,
    DispatchTask,
    MessageFile,
    ProgressEvent,
    SteerFile,
    SteerWorkerTask,
    parse_ack,
    parse_message,
    parse_progress,
    parse_steer,
    parse_task,
)
from tests.strategies import json_values

LANE = "jarvis-worker-1"
RUN = "task-7"

PROGRESS: dict[str, Any] = {
    "kind": "worker_progress",
    "run_id": RUN,
    "group_folder": LANE,
    "timestamp": "2026-11-22T03:30:00.120Z",
    "phase": "testing",
    "summary": "running pytest: 41 passed",
    "tool_used": "bash",
    "seq": 12,
}
ACK: dict[str, Any] = {"steer_id": "steer-3f9c0a1b2c3d4e5f", "acked_at": "2026-11-22T03:31:02.310Z"}
STEER: dict[str, Any] = {
    "kind": "worker_steer",
    "run_id": RUN,
    "from_group": "main",
    "timestamp": "2026-11-22T03:31:02.004Z",
    "message": "focus on the failing test",
    "steer_id": "steer-3f9c0a1b2c3d4e5f",
}
STEER_TASK: dict[str, Any] = {"type": "steer_worker", "run_id": RUN, "message": "stop after it"}
DISPATCH_TASK: dict[str, Any] = {
    "type": "dispatch",
    "target": "jarvis-worker-2",
    "payload": {"run_id": "task-8"},
}
MESSAGE: dict[str, Any] = {"type": "message", "chatJid": "team@g.us", "text": "hello"}


def encode(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


def progress(**changes: Any) -> ProgressEvent | list[FieldError]:
    doc = {k: v for k, v in {**PROGRESS, **changes}.items() if v is not ...}
    return parse_progress(encode(doc), lane=LANE, run_id=RUN)


def codes(result: object) -> list[tuple[str, str]]:
    assert isinstance(result, list), result
    return [(e.field, e.code) for e in result]


# --- progress -----------------------------------------------------------------------------------


def test_the_documented_progress_event_parses() -> None:
    event = progress()
    assert isinstance(event, ProgressEvent)
    assert (event.run_id, event.seq, event.tool_used) == (RUN, 12, "bash")


def test_tool_used_is_optional() -> None:
    event = progress(tool_used=...)
    assert isinstance(event, ProgressEvent) and event.tool_used is None


def test_progress_events_are_frozen() -> None:
    event = progress()
    assert isinstance(event, ProgressEvent)
    with pytest.raises(ValueError):
        event.seq = 13


def test_a_body_naming_another_run_is_refused() -> None:
    assert codes(progress(run_id="task-8")) == [("run_id", "run_id_mismatch")]


def test_a_body_naming_another_lane_is_refused() -> None:
    assert codes(progress(group_folder="jarvis-worker-2")) == [
        ("group_folder", "group_folder_mismatch")
    ]


def test_mismatches_are_reported_with_shape_errors() -> None:
    result = progress(run_id="task-8", seq=-1)
    assert codes(result) == [("run_id", "run_id_mismatch"), ("seq", "out_of_range")]


def test_seq_starts_at_zero_as_nanoclaws_worker_numbers_it() -> None:
    event = progress(seq=0)
    assert isinstance(event, ProgressEvent) and event.seq == 0


@pytest.mark.parametrize(
    ("timestamp", "utc"),
    [
        ("2026-03-17T10:01:02.345Z", "2026-03-17T10:01:02.345000Z"),
        ("2026-03-17T11:01:02.345+01:00", "2026-03-17T10:01:02.345000Z"),
        ("2026-03-17T10:01:02", "2026-03-17T10:01:02.000000Z"),
    ],
)
def test_an_events_time_is_kept_as_sortable_utc_text(timestamp: str, utc: str) -> None:
    event = progress(timestamp=timestamp)
    assert isinstance(event, ProgressEvent)
    assert (event.timestamp, event.at_utc) == (timestamp, utc)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"kind": "worker_steer"}, ("kind", "not_allowed")),
        ({"kind": ...}, ("kind", "required")),
        ({"seq": -1}, ("seq", "out_of_range")),
        ({"seq": -3}, ("seq", "out_of_range")),
        ({"seq": True}, ("seq", "wrong_type")),
        ({"seq": 1.0}, ("seq", "wrong_type")),
        ({"seq": "12"}, ("seq", "wrong_type")),
        ({"phase": " "}, ("phase", "empty")),
        ({"phase": "p" * 65}, ("phase", "too_long")),
        ({"summary": "s" * 4001}, ("summary", "too_long")),
        ({"summary": 5}, ("summary", "wrong_type")),
        ({"timestamp": "yesterday"}, ("timestamp", "bad_format")),
        ({"timestamp": "0001-01-01T00:00:00+01:00"}, ("timestamp", "bad_format")),
        ({"timestamp": 1763782200120}, ("timestamp", "wrong_type")),
        ({"tool_used": 3}, ("tool_used", "wrong_type")),
        ({"extra": 1}, ("extra", "unknown_field")),
    ],
)
def test_each_progress_rule(changes: dict[str, Any], expected: tuple[str, str]) -> None:
    assert codes(progress(**changes)) == [expected]


def test_the_limits_themselves_are_allowed() -> None:
    assert isinstance(progress(phase="p" * 64, summary="s" * 4000, seq=1), ProgressEvent)


def test_an_empty_summary_is_allowed() -> None:
    assert isinstance(progress(summary=""), ProgressEvent)


def test_unsafe_run_ids_and_lanes_in_the_body_are_refused_as_such() -> None:
    result = parse_progress(
        encode({**PROGRESS, "run_id": "../x", "group_folder": "a/b"}), lane="a/b", run_id="../x"
    )
    assert codes(result) == [("group_folder", "bad_lane"), ("run_id", "run_id_unsafe")]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty"),
        (b"not json", "not_json"),
        (b'{"seq": 1', "not_json"),
        (b"[1]", "not_object"),
        (b"\xff\xfe", "not_utf8"),
        (b'{"seq": 1, "seq": 2}', "duplicate_key"),
        (b'{"a": "' + b"x" * MAX_EVENT_BYTES + b'"}', "too_large"),
    ],
)
def test_broken_files_are_errors_not_exceptions(data: bytes, code: str) -> None:
    for parse in PARSERS:
        assert codes(parse(data)) == [("$", code)]


# --- acknowledgements and steers ----------------------------------------------------------------


def test_the_documented_ack_parses() -> None:
    ack = parse_ack(encode(ACK))
    assert isinstance(ack, AckFile) and ack.steer_id == ACK["steer_id"]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"steer_id": ""}, ("steer_id", "empty")),
        ({"steer_id": "s" * 129}, ("steer_id", "too_long")),
        ({"acked_at": "not a time"}, ("acked_at", "bad_format")),
        ({"acked_at": None}, ("acked_at", "wrong_type")),
        ({"more": True}, ("more", "unknown_field")),
    ],
)
def test_each_ack_rule(changes: dict[str, Any], expected: tuple[str, str]) -> None:
    assert codes(parse_ack(encode({**ACK, **changes}))) == [expected]


def test_the_documented_steer_parses() -> None:
    steer = parse_steer(encode(STEER))
    assert isinstance(steer, SteerFile) and steer.message == STEER["message"]


def test_a_steer_needs_every_field() -> None:
    doc = {k: v for k, v in STEER.items() if k != "steer_id"}
    assert codes(parse_steer(encode(doc))) == [("steer_id", "required")]


# --- tasks --------------------------------------------------------------------------------------


def test_a_steer_worker_task_parses() -> None:
    task = parse_task(encode(STEER_TASK))
    assert isinstance(task, SteerWorkerTask) and task.run_id == RUN


def test_a_dispatch_task_parses_with_any_payload_object() -> None:
    task = parse_task(encode(DISPATCH_TASK))
    assert isinstance(task, DispatchTask) and task.payload == {"run_id": "task-8"}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"run_id": RUN, "message": "m"}, ("type", "required")),
        ({"type": "explode"}, ("type", "not_allowed")),
        ({"type": 5}, ("type", "not_allowed")),
        ({**STEER_TASK, "message": "  "}, ("message", "empty")),
        ({**STEER_TASK, "run_id": "a b"}, ("run_id", "run_id_whitespace")),
        ({**STEER_TASK, "target": LANE}, ("target", "unknown_field")),
        ({**DISPATCH_TASK, "payload": "{}"}, ("payload", "wrong_type")),
        ({**DISPATCH_TASK, "target": "../lane"}, ("target", "bad_lane")),
        ({"type": "dispatch", "target": LANE}, ("payload", "required")),
    ],
)
def test_each_task_rule(doc: dict[str, Any], expected: tuple[str, str]) -> None:
    assert codes(parse_task(encode(doc))) == [expected]


# --- messages -----------------------------------------------------------------------------------


def test_a_message_parses_and_keeps_nanoclaw_fields() -> None:
    message = parse_message(encode({**MESSAGE, "sender": "bot", "ts": 3}))
    assert isinstance(message, MessageFile)
    assert message.chatJid == "team@g.us" and message.text == "hello"
    assert message.model_extra == {"sender": "bot", "ts": 3}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"type": "note"}, ("type", "not_allowed")),
        ({"text": ...}, ("text", "required")),
        ({"text": {"a": 1}}, ("text", "wrong_type")),
        ({"chatJid": 7}, ("chatJid", "wrong_type")),
    ],
)
def test_each_message_rule(changes: dict[str, Any], expected: tuple[str, str]) -> None:
    doc = {k: v for k, v in {**MESSAGE, **changes}.items() if v is not ...}
    assert codes(parse_message(encode(doc))) == [expected]


# --- properties ---------------------------------------------------------------------------------


def _parse_progress(data: bytes) -> object:
    return parse_progress(data, lane=LANE, run_id=RUN)


PARSERS: list[Callable[[bytes], object]] = [
    _parse_progress,
    parse_ack,
    parse_steer,
    parse_task,
    parse_message,
]
MODELS = (ProgressEvent, AckFile, SteerFile, SteerWorkerTask, DispatchTask, MessageFile)


def _is_model_or_errors(result: object) -> bool:
    if isinstance(result, list):
        return bool(result) and all(isinstance(e, FieldError) for e in result)
    return isinstance(result, MODELS)


@given(st.binary(max_size=400))
def test_arbitrary_bytes_give_a_model_or_errors(data: bytes) -> None:
    for parse in PARSERS:
        assert _is_model_or_errors(parse(data))


@given(json_values)
def test_arbitrary_json_gives_a_model_or_errors(value: Any) -> None:
    data = json.dumps(value).encode()
    for parse in PARSERS:
        assert _is_model_or_errors(parse(data))


_mutations = st.dictionaries(
    st.sampled_from(sorted({*PROGRESS, *STEER, *DISPATCH_TASK, *MESSAGE, "chatJid", "zzz"})),
    json_values,
    max_size=4,
)


@given(st.sampled_from([PROGRESS, ACK, STEER, STEER_TASK, DISPATCH_TASK, MESSAGE]), _mutations)
def test_near_valid_documents_give_a_model_or_errors(
    base: dict[str, Any], changes: dict[str, Any]
) -> None:
    data = encode({**base, **changes})
    for parse in PARSERS:
        assert _is_model_or_errors(parse(data))


@given(st.binary(max_size=200), st.text(max_size=20), st.text(max_size=20))
def test_progress_never_raises_whatever_the_path_says(data: bytes, lane: str, run_id: str) -> None:
    assert _is_model_or_errors(parse_progress(data, lane=lane, run_id=run_id))


# --- the plain progress event's short way --------------------------------------------------------

_PLAIN = {
    "kind": "worker_progress",
    "run_id": "run-7",
    "group_folder": "jarvis-worker-1",
    "timestamp": "2026-11-22T03:30:00.120Z",
    "phase": "testing",
    "summary": "ran the tests: 12 passed",
    "seq": 3,
}
_ODD_VALUES: list[Any] = [
    None, True, False, 0, 3, -1, 2**63 - 1, 2**63, 1.0, float("nan"), "3", [], [1], {}, {"a": 1},
    "", " ", "\t\n", "\ud800", "a\udfffb", "é", "naïve", "x" * 64, "x" * 65, "x" * 4_000,
    "x" * 4_001, "run-7", "run 7", "../run-7", "jarvis-worker-1", "errors", "worker_progress",
    "Worker_progress", "2026-11-22T03:30:00Z", "2026-11-22T03:30:00+05:00", "2026-13-01T00:00:00Z",
    "not a time", "24:00", "2026-11-22", "0001-01-01T00:00:00+01:00",
]  # fmt: skip
_ODD_KEYS = [*_PLAIN, "tool_used", "usage", "extra", "Kind"]


def _documents() -> list[dict[str, Any]]:
    """The plain event with one field changed to each odd value, or one dropped, or two changed."""
    one = [{**_PLAIN, key: value} for key in _ODD_KEYS for value in _ODD_VALUES]
    dropped = [{k: v for k, v in _PLAIN.items() if k != key} for key in _PLAIN]
    return [dict(_PLAIN), *one, *dropped]


def _short_way_agrees(document: dict[str, Any]) -> None:
    from pydantic import ValidationError

    from core.ipc.payloads import ProgressEvent, _plain_progress

    plain = _plain_progress(document, lane="jarvis-worker-1", run_id="run-7")
    if plain is None:
        return  # the model judges it, as before
    try:
        checked = ProgressEvent.model_validate(document)
    except ValidationError as exc:
        raise AssertionError(f"the short way took what the model refuses: {exc}") from None
    assert plain.model_dump() == checked.model_dump()
    assert plain.at_utc == checked.at_utc


def test_the_short_way_accepts_only_what_the_model_accepts_one_change_at_a_time() -> None:
    for document in _documents():
        _short_way_agrees(document)


@given(
    changes=st.dictionaries(st.sampled_from(_ODD_KEYS), st.sampled_from(_ODD_VALUES) | json_values,
                            max_size=3),
)  # fmt: skip
def test_the_short_way_accepts_only_what_the_model_accepts(changes: dict[str, Any]) -> None:
    _short_way_agrees({**_PLAIN, **changes})


def test_a_plain_event_takes_the_short_way_and_an_odd_one_the_model() -> None:
    from core.ipc.payloads import _plain_progress

    plain = _plain_progress(dict(_PLAIN), lane="jarvis-worker-1", run_id="run-7")
    assert plain is not None and plain.seq == 3 and plain.tool_used is None
    with_all = {**_PLAIN, "tool_used": "pytest", "usage": {"tokens_in": 5}}
    assert _plain_progress(with_all, lane="jarvis-worker-1", run_id="run-7") is not None
    # Whatever the model would explain goes to the model: here, with the same errors as ever.
    odd = {**_PLAIN, "seq": True}
    assert _plain_progress(odd, lane="jarvis-worker-1", run_id="run-7") is None
    refused = parse_progress(json.dumps(odd).encode(), lane="jarvis-worker-1", run_id="run-7")
    assert isinstance(refused, list) and [e.field for e in refused] == ["seq"]
