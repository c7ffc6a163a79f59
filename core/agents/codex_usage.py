"""Codex's tokens per model call, from the session file it writes as it works.

``codex exec --json`` reports usage only when a turn ends (``turn.completed``): a budget read
from that stream alone stops Codex only after its turn, commits and all. Codex also writes each
thread to ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`` (``CODEX_HOME``
defaults to ``~/.codex``), one JSON object a line, and after every model call a line

    {"type": "event_msg", "payload": {"type": "token_count",
     "info": {"total_token_usage": {"input_tokens": …, "output_tokens": …, …}, …}}}

(codex-rs ``protocol/src/protocol.rs``: ``EventMsg::TokenCount``, ``TokenUsageInfo``; seen so
in codex 0.171.0's files). ``total_token_usage`` is the thread's running total, the very figure
``turn.completed`` reports at the end, so the two agree. A resumed thread appends to its file.

`RolloutUsage` follows that file while the runner reads Codex's output: it finds the file once
the thread id is known, reads only what was appended since it last looked (at most
`MAX_READ_BYTES` a time, whole lines only, a line over `MAX_LINE_BYTES` skipped unread), and
keeps nothing but the latest totals. Everything it cannot find or read is no figure: the
``turn.completed`` figures still come at the turn's end.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from core.agents.base import LineAdapter

#: The most read from the file at one look; the rest waits for the next.
MAX_READ_BYTES: Final = 4 * 1024 * 1024
#: A line longer than this (a huge tool output) is skipped unread.
MAX_LINE_BYTES: Final = 1024 * 1024
#: How much of a resumed thread's file is searched, from its end, for its totals so far.
TAIL_BYTES: Final = 4 * 1024 * 1024


#: A thread id as Codex makes them (a UUID): nothing else is looked for in file names.
_THREAD = re.compile(r"[0-9A-Za-z-]{1,100}")


def codex_home(env: Mapping[str, str]) -> Path | None:
    """Where Codex keeps its sessions for this environment: ``CODEX_HOME``, else ``~/.codex``."""
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"])
    return Path(env["HOME"]) / ".codex" if env.get("HOME") else None


def _totals(line: bytes) -> tuple[int, int] | None:
    """The thread's totals a ``token_count`` line gives, else None."""
    if b'"token_count"' not in line:
        return None
    try:
        doc: Any = json.loads(line)
        total = doc["payload"]["info"]["total_token_usage"]
        tokens_in, tokens_out = total["input_tokens"], total["output_tokens"]
    except (ValueError, KeyError, TypeError):
        return None
    if doc.get("type") != "event_msg" or doc["payload"].get("type") != "token_count":
        return None
    if type(tokens_in) is not int or type(tokens_out) is not int:
        return None
    return (tokens_in, tokens_out) if tokens_in >= 0 and tokens_out >= 0 else None


class RolloutUsage:
    """The latest totals of one thread's session file, read as it grows."""

    def __init__(self, home: Path, thread_id: str | None = None) -> None:
        """``thread_id``: a thread being resumed (its file exists: only what is appended from
        now on is new), or None for a new thread (its file is found once `follow` names it)."""
        self.home = home
        self.thread: str | None = None
        self.path: Path | None = None
        self.offset = 0
        self.skipping = False
        self.resumed = bool(thread_id)
        self.start: tuple[int, int] | None = None
        """A resumed thread's totals when following began: what its earlier turns used."""
        if thread_id:
            self.follow(thread_id)
            if self.path is not None:
                self.start = self._last_in_tail()
                self.offset = self._size()

    def follow(self, thread_id: str | None) -> None:
        """Follow ``thread_id``'s file (the first id named is kept)."""
        if self.thread is None and thread_id and _THREAD.fullmatch(thread_id):
            self.thread = thread_id
        if self.path is None and self.thread is not None:
            # A new thread's file is under today's date (a day either side, for the clock's
            # zone): looked for there only, as it is until it appears. A resumed one's may be
            # under any date: looked for once.
            if self.resumed:
                days = ["*/*/*"]
            else:
                today = date.today()
                days = sorted({f"{today + timedelta(days=n):%Y/%m/%d}" for n in (-1, 0, 1)})
            found = [
                path
                for day in days
                for path in self.home.glob(f"sessions/{day}/rollout-*-{self.thread}.jsonl")
            ]
            self.path = sorted(found)[-1] if found else None

    def totals(self) -> tuple[int, int] | None:
        """The newest totals appended since the last look, or None when none were."""
        if self.path is None:
            self.follow(None)
        if self.path is None:
            return None
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read(MAX_READ_BYTES)
        except OSError:
            return None
        latest = None
        end = chunk.rfind(b"\n") + 1
        if end == 0 and len(chunk) >= MAX_READ_BYTES:  # a line longer than a whole read
            self.skipping, self.offset = True, self.offset + len(chunk)
            return None
        for line in chunk[:end].split(b"\n"):
            if self.skipping:  # the end of a line too long to read
                self.skipping = False
                continue
            if len(line) <= MAX_LINE_BYTES:
                latest = _totals(line) or latest
        self.offset += end
        return latest

    def _size(self) -> int:
        try:
            return os.stat(self.path).st_size if self.path is not None else 0
        except OSError:
            return 0

    def _last_in_tail(self) -> tuple[int, int] | None:
        size = self._size()
        try:
            with open(self.path, "rb") as handle:  # type: ignore[arg-type]
                handle.seek(max(0, size - TAIL_BYTES))
                tail = handle.read(TAIL_BYTES)
        except (OSError, TypeError):
            return None
        for line in reversed(tail.split(b"\n")):
            found = _totals(line) if len(line) <= MAX_LINE_BYTES else None
            if found is not None:
                return found
        return None


def rollout_for(agent: str, env: Mapping[str, str], session: str | None) -> RolloutUsage | None:
    """The session file to follow for a turn of ``agent`` (Codex only), resuming ``session``;
    None for other agents, or when Codex's home is unknown."""
    home = codex_home(env) if agent == "codex" else None
    return RolloutUsage(home, session) if home is not None else None


def take_totals(rollout: RolloutUsage | None, adapter: LineAdapter, *, first: bool = False) -> None:
    """Give ``adapter`` what the session file says: with ``first``, a resumed thread's totals
    so far (its earlier turns, not counted again); else the totals appended since the last
    look, counted now."""
    if rollout is None:
        return
    if first:
        if rollout.start is not None:
            adapter.session_totals(*rollout.start, before=True)
        return
    rollout.follow(adapter.session_id)
    if (found := rollout.totals()) is not None:
        adapter.session_totals(*found)
