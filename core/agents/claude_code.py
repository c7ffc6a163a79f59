"""Claude Code: ``claude -p --output-format stream-json --verbose``.

The format, as the Claude Agent SDK parses it (claude-agent-sdk-python 0.2.143,
``_internal/message_parser.py`` and ``types.py``; the CLI's CHANGELOG up to 2.1.240): one JSON
object per line, each with a ``type``:

- ``system`` with ``subtype: "init"`` first (``session_id``, ``model``, ``cwd``, ``tools``…);
  other subtypes (hooks, tasks, compaction) are not progress and are passed over;
- ``assistant``: ``message.content`` is a list of blocks — ``text``, ``thinking``,
  ``redacted_thinking``, ``tool_use`` (``id``, ``name``, ``input``), ``server_tool_use`` — with
  ``message.usage`` per API call, repeated on each line of one call (its ``message.id``): the
  largest figures of each call are counted as they come, so a budget sees the turn's tokens
  before it ends; a top-level ``error`` names an API failure;
- ``user``: the tool results, ``message.content`` blocks of ``tool_result`` (``tool_use_id``,
  ``content``, ``is_error``);
- ``result`` last: ``subtype`` (``success``, ``error_max_turns``, ``error_during_execution``,
  ``error_max_budget_usd``…), ``is_error``, ``result`` (the final answer), ``errors`` (a list of
  strings on error subtypes), ``session_id``, ``num_turns``, ``duration_ms``,
  ``total_cost_usd`` and ``usage`` (``input_tokens``, ``output_tokens``,
  ``cache_read_input_tokens``, ``cache_creation_input_tokens``), taken as running totals for
  the process: what they add to the calls already counted is added then (calls the stream did
  not show, such as a title's);
- ``stream_event``, ``rate_limit_event``, ``control_*`` and types this version does not know
  are passed over, as the SDK does.

The CLI may also print lines that are not JSON (the SDK skips them); they are reported as not
understood, like any other unreadable line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from core.agents.base import (
    MAX_OPEN_TOOLS,
    JsonLinesAdapter,
    OpenTools,
    Shape,
    need_dict,
    opt_dict,
    opt_list,
    opt_str,
)
from core.agents.events import AgentEvent, count, dollars, first_line
from core.agents.tool_calls import describe_tool, phase_of_tool

_TOOL_ERROR = re.compile(r"</?tool_use_error>")


def _result_text(content: object) -> str:
    """A tool result's text: a string, or the first ``text`` block of a list; the CLI's
    ``<tool_use_error>`` wrapping dropped."""
    if isinstance(content, list):
        content = next(
            (
                block["text"]
                for block in content[:16]
                if isinstance(block, dict) and isinstance(block.get("text"), str)
            ),
            "",
        )
    if isinstance(content, str):
        return _TOOL_ERROR.sub("", content[:4096])
    return ""


class ClaudeCodeAdapter(JsonLinesAdapter):
    """Claude Code's ``stream-json`` output (see the module docstring for the format)."""

    name: ClassVar[str] = "claude-code"

    def __init__(self, *, cwd: str | None = None, extra_args: Sequence[str] = ()) -> None:
        super().__init__(cwd=cwd, extra_args=extra_args)
        self._tools = OpenTools()
        self._calls: dict[str, tuple[int, int]] = {}
        """The figures counted so far of each recent API call, by message id (bounded)."""
        self._streamed = (0, 0)
        """Tokens counted from the calls' own usage since the last ``result``."""

    def argv(
        self,
        executable: Sequence[str],
        prompt: str,
        *,
        model: str | None = None,
        session_id: str | None = None,
    ) -> list[str]:
        """``claude -p --output-format stream-json --verbose [--model=M] [--resume=S] -- PROMPT``.

        ``--verbose`` is required with ``stream-json`` in print mode. The prompt follows ``--``
        so a prompt starting with ``-`` is never read as an option. A prompt is always a message
        for the model: one starting with ``/`` (a steer such as ``/docs first``) would be taken
        for one of the CLI's own commands (``Unknown command: /docs``, or a built-in one run in
        its place) and never reach the model, so it is given after a space, which the CLI does
        not read as a command.
        """
        return [
            *self._head(executable, model=model, session_id=session_id),
            "--",
            f" {prompt}" if prompt.startswith("/") else prompt,
        ]

    def _head(
        self, executable: Sequence[str], *, model: str | None, session_id: str | None
    ) -> list[str]:
        argv = [*executable, "-p", "--output-format", "stream-json", "--verbose"]
        if model:
            argv.append(f"--model={model}")
        if session_id:
            argv.append(f"--resume={session_id}")
        argv.extend(self.extra_args)
        return argv

    # --- reading -------------------------------------------------------------------------------

    def _event(self, kind: str, doc: dict[str, Any]) -> list[AgentEvent]:
        self._set_session(doc.get("session_id"))
        if kind == "assistant":
            return self._assistant(doc)
        if kind == "user":
            return self._user(doc)
        if kind == "result":
            return self._result(doc)
        if kind == "system" and doc.get("subtype") == "init":
            model = opt_str(doc, "model", "system")
            tools = opt_list(doc, "tools", "system")
            summary = "session started"
            if model:
                summary += f": model {model}"
            if tools is not None:
                summary += f", {len(tools)} tools"
            return [self._emit("message", summary)]
        return []

    def _call_usage(self, message: dict[str, Any]) -> None:
        """Count an API call's tokens as its lines report them: once per call (its id), at the
        largest figures any of its lines gave."""
        usage = opt_dict(message, "usage", "assistant.message")
        if not usage:
            return
        keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        now = (sum(count(usage.get(k)) or 0 for k in keys), count(usage.get("output_tokens")) or 0)
        call = message.get("id")
        before = (0, 0)
        if isinstance(call, str):
            call = call[:200]
            before = self._calls.pop(call, (0, 0))
            if len(self._calls) >= MAX_OPEN_TOOLS:
                del self._calls[next(iter(self._calls))]
            self._calls[call] = (max(before[0], now[0]), max(before[1], now[1]))
            now = self._calls[call]
        more_in, more_out = now[0] - before[0], now[1] - before[1]
        self._streamed = (self._streamed[0] + more_in, self._streamed[1] + more_out)
        self._add(more_in, more_out)

    def _assistant(self, doc: dict[str, Any]) -> list[AgentEvent]:
        message = need_dict(doc, "message", "assistant")
        content = opt_list(message, "content", "assistant.message") or []
        self._call_usage(message)
        events: list[AgentEvent] = []
        error = doc.get("error")
        if isinstance(error, str) and error:
            events.append(self._emit("error", f"API error: {error}", error=error))
        for block in content:
            if not isinstance(block, dict):
                raise Shape("assistant.message.content")
            kind = block.get("type")
            if kind == "text":
                text = first_line(opt_str(block, "text", "assistant.message.content") or "")
                if text:
                    events.append(self._emit("message", text))
            elif kind == "thinking":
                text = first_line(opt_str(block, "thinking", "assistant.message.content") or "")
                events.append(self._emit("thinking", f"thinking: {text}" if text else "thinking"))
            elif kind == "redacted_thinking":
                events.append(self._emit("thinking", "thinking"))
            elif kind in ("tool_use", "server_tool_use"):
                name = opt_str(block, "name", "assistant.message.content") or "tool"
                tool_input = block.get("input")
                phase = phase_of_tool(name, tool_input)
                self._tools.add(block.get("id"), name, phase)
                events.append(self._emit(phase, describe_tool(name, tool_input, self.cwd), name))
        return events

    def _user(self, doc: dict[str, Any]) -> list[AgentEvent]:
        message = opt_dict(doc, "message", "user")
        content = message.get("content") if message else None
        if not isinstance(content, list):
            return []  # a plain user message: the prompt, or a steer echoed back
        events: list[AgentEvent] = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            opened = self._tools.pop(block.get("tool_use_id"))
            if block.get("is_error") is not True:
                continue
            name, phase = opened or ("tool", "tool")
            why = first_line(_result_text(block.get("content"))) or "failed"
            events.append(self._emit(phase, f"{name} failed: {why}", name, error=why))
        return events

    def _result(self, doc: dict[str, Any]) -> list[AgentEvent]:
        self._mark_ended()
        usage = opt_dict(doc, "usage", "result") or {}
        inputs = [
            count(usage.get(key))
            for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        ]
        tokens_in = None if inputs == [None] * 3 else sum(n or 0 for n in inputs)
        cost = dollars(doc.get("total_cost_usd"))
        # The result's totals, less what the calls' own lines already counted since the last.
        streamed, self._streamed = self._streamed, (0, 0)
        self._add(
            max(0, self._tokens_since("in", tokens_in) - streamed[0]),
            max(0, self._tokens_since("out", count(usage.get("output_tokens"))) - streamed[1]),
            None if cost is None else self._since("cost", cost),
        )
        subtype = opt_str(doc, "subtype", "result") or "unknown"
        answer = opt_str(doc, "result", "result")
        turns = count(doc.get("num_turns"))
        if doc.get("is_error") is True or subtype != "success":
            errors = [e for e in (opt_list(doc, "errors", "result") or []) if isinstance(e, str)]
            why = "; ".join(errors) or (answer if subtype == "success" else "") or ""
            summary = f"stopped ({subtype})" + (f": {first_line(why)}" if why.strip() else "")
            return [self._emit("error", summary, final_text=answer, error=why or subtype)]
        summary = f"finished after {turns} turns" if turns is not None else "finished"
        return [self._emit("done", summary, final_text=answer)]
