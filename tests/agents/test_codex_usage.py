"""Codex's per-call tokens from its session file: found by thread id, read as it grows (whole
lines only, bounded), totals counted once with turn.completed's, and a resumed thread's earlier
turns not counted again."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from core.agents.codex import CodexAdapter
from core.agents.codex_usage import (
    MAX_LINE_BYTES,
    RolloutUsage,
    codex_home,
    rollout_for,
    take_totals,
)

THREAD = "01a22138-5fed-7ff2-aaff-d9cac8c7b10d"


def token_count(tokens_in: int, tokens_out: int) -> bytes:
    usage = {"input_tokens": tokens_in, "cached_input_tokens": 0, "output_tokens": tokens_out}
    info = {"total_token_usage": usage, "last_token_usage": usage}
    line = {"type": "event_msg", "payload": {"type": "token_count", "info": info}}
    return json.dumps(line).encode() + b"\n"


def session_file(home: Path, thread: str = THREAD, day: date | None = None) -> Path:
    folder = home / "sessions" / f"{day or date.today():%Y/%m/%d}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"rollout-2026-11-28T08-09-25-{thread}.jsonl"


def test_codex_s_home_is_codex_home_else_under_home(tmp_path: Path) -> None:
    assert codex_home({"CODEX_HOME": "/x", "HOME": "/h"}) == Path("/x")
    assert codex_home({"HOME": "/h"}) == Path("/h/.codex")
    assert codex_home({}) is None
    assert rollout_for("claude-code", {"HOME": str(tmp_path)}, None) is None


def test_a_new_thread_s_file_is_followed_as_it_grows_whole_lines_only(tmp_path: Path) -> None:
    rollout = RolloutUsage(tmp_path)
    assert rollout.totals() is None  # no thread named yet
    rollout.follow(THREAD)
    assert rollout.totals() is None  # its file is not there yet
    path = session_file(tmp_path)
    with path.open("ab") as out:
        out.write(b'{"type": "session_meta"}\nnot json\n' + token_count(1500, 90))
        out.write(token_count(3000, 180)[:25])  # being written
    assert rollout.totals() == (1500, 90)
    assert rollout.totals() is None  # nothing new, and half a line is not a line
    with path.open("ab") as out:
        out.write(token_count(3000, 180)[25:])
        out.write(b'{"type": "event_msg", "payload": {"type": "token_count", "info": null}}\n')
    assert rollout.totals() == (3000, 180)


def test_a_line_too_long_is_skipped_and_what_follows_it_read(tmp_path: Path) -> None:
    rollout = RolloutUsage(tmp_path, None)
    rollout.follow(THREAD)
    path = session_file(tmp_path)
    huge = b'{"type": "token_count", "x": "' + b"x" * (5 * MAX_LINE_BYTES) + b'"}\n'
    path.write_bytes(huge + token_count(10, 1))
    seen = [rollout.totals() for _ in range(4)]
    assert (10, 1) in seen and rollout.offset == path.stat().st_size


def test_a_thread_id_that_is_not_one_is_never_looked_for(tmp_path: Path) -> None:
    session_file(tmp_path, thread="*")
    rollout = RolloutUsage(tmp_path)
    rollout.follow("*")
    rollout.follow("../../etc")
    assert rollout.thread is None and rollout.path is None


def test_the_file_s_totals_and_turn_completed_count_once(tmp_path: Path) -> None:
    adapter = CodexAdapter()
    rollout = RolloutUsage(tmp_path)
    started = {"type": "thread.started", "thread_id": THREAD}
    adapter.parse_line(json.dumps(started).encode())
    path = session_file(tmp_path)
    path.write_bytes(token_count(1500, 90))
    take_totals(rollout, adapter)
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (1500, 90)  # mid-turn
    usage = {"input_tokens": 3000, "cached_input_tokens": 0, "output_tokens": 180}
    adapter.parse_line(json.dumps({"type": "turn.completed", "usage": usage}).encode())
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (3000, 180)


def test_a_resumed_thread_s_earlier_turns_are_not_counted_again(tmp_path: Path) -> None:
    # Resumed from another run (context_intent continue): no earlier adapter in this process
    # knows the thread's totals, its file does. It may be under any date.
    path = session_file(tmp_path, day=date(2026, 1, 2))
    path.write_bytes(token_count(1500, 90) + token_count(6000, 360))
    rollout = RolloutUsage(tmp_path, THREAD)
    assert rollout.start == (6000, 360)
    adapter = CodexAdapter()
    take_totals(rollout, adapter, first=True)
    with path.open("ab") as out:
        out.write(token_count(7500, 450))
    take_totals(rollout, adapter)
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (1500, 90)
    usage = {"input_tokens": 7500, "cached_input_tokens": 0, "output_tokens": 450}
    adapter.parse_line(json.dumps({"type": "turn.completed", "usage": usage}).encode())
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (1500, 90)
