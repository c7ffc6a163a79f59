"""OpenCode: ``opencode run --format json``.

The format is what ``packages/opencode/src/cli/cmd/run.ts`` emits (sst/opencode, now
anomalyco/opencode, 2026): one JSON object per line, ``{"type", "timestamp" (ms),
"sessionID", …}``, with the message part types of ``src/session/message-v2.ts``:

- ``step_start`` (``part``: a ``step-start`` part) when the model starts a step;
- ``tool_use`` (``part``: a ``tool`` part — ``tool``, ``callID``, ``state`` with ``status``
  completed or error, ``input``, ``output``/``error``, ``title``, ``metadata``) once per
  finished tool call. A ``bash`` call is ``completed`` whatever its command's exit code, which
  is ``state.metadata.exit``: non-zero, the call failed;
- ``text`` (``part.text``) and, with ``--thinking``, ``reasoning``, once a part is complete;
- ``step_finish`` (``part``: ``reason`` — ``tool-calls`` while the step goes on, ``stop`` or
  another reason when it ends — ``cost`` in dollars and ``tokens``: ``input``, ``output``,
  ``reasoning``, ``cache.read``, ``cache.write``), each for its own step. A model whose price
  the configuration does not give costs 0: that is no cost reported (None);
- ``error`` (``error``: a named error, ``{name, data: {message}}``): the run exits 1;
- ``done`` (``reason: "idle"``, ``rejected``: permissions refused) when the session is idle.

Releases before ``done`` existed, and 1.18.33 (checked live), end with a ``step_finish``
whose reason is not ``tool-calls``; that is taken as the end too. Tool names are opencode's
own, lower case (``read``, ``edit``, ``write``, ``bash``, ``grep``, ``glob``, ``list``,
``todowrite``, ``apply_patch``…), with camel-case inputs (``filePath``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from core.agents.base import (
    MAX_FINAL_CHARS,
    JsonLinesAdapter,
    opt_dict,
    opt_list,
    opt_str,
)
from core.agents.events import AgentEvent, count, dollars, first_line
from core.agents.tool_calls import describe_tool, phase_of_tool


class OpenCodeAdapter(JsonLinesAdapter):
    """OpenCode's ``run --format json`` output (see the module docstring for the format)."""

    name: ClassVar[str] = "opencode"
    prompt_on_stdin: ClassVar[bool] = True

    def __init__(self, *, cwd: str | None = None, extra_args: Sequence[str] = ()) -> None:
        super().__init__(cwd=cwd, extra_args=extra_args)
        self._step_text: list[str] = []
        self._step_chars = 0
        self._answer: str | None = None
        self._last_reason: str | None = None
        self._last_error: str | None = None

    def argv(
        self,
        executable: Sequence[str],
        prompt: str,
        *,
        model: str | None = None,
        session_id: str | None = None,
    ) -> list[str]:
        """``opencode run --format json --title= [--model=P/M] [--session=S] …``; the prompt
        goes on stdin (`prompt_on_stdin`).

        ``run`` joins its message words with spaces and wraps each word holding one in double
        quotes, escaping the quotes inside (``{\"run_id\": …}``), and yargs turns a word such
        as ``2`` into a number, which stops it; a message read from stdin is taken as it is.
        ``--title=`` names the session after the prompt's start: without it OpenCode asks the
        model for a title, a call whose tokens it reports nowhere. The model is
        ``provider/model``.
        """
        argv = [*executable, "run", "--format", "json", "--title="]
        if model:
            argv.append(f"--model={model}")
        if session_id:
            argv.append(f"--session={session_id}")
        argv.extend(self.extra_args)
        return argv

    # --- reading -------------------------------------------------------------------------------

    def _event(self, kind: str, doc: dict[str, Any]) -> list[AgentEvent]:
        self._set_session(doc.get("sessionID"))
        if kind == "tool_use":
            return self._tool(opt_dict(doc, "part", kind) or {})
        if kind == "text":
            text = opt_str(opt_dict(doc, "part", kind) or {}, "text", "text.part") or ""
            self._keep(text)
            line = first_line(text)
            return [self._emit("message", line)] if line else []
        if kind == "reasoning":
            part = opt_dict(doc, "part", kind) or {}
            text = first_line(opt_str(part, "text", "reasoning.part") or "")
            return [self._emit("thinking", f"thinking: {text}" if text else "thinking")]
        if kind == "step_start":
            self._step_text, self._step_chars = [], 0
            return []
        if kind == "step_finish":
            return self._step_finish(opt_dict(doc, "part", kind) or {})
        if kind == "error":
            why = self._error_message(doc.get("error"))
            self._last_error = why
            return [self._emit("error", f"error: {first_line(why)}", error=why)]
        if kind == "done":
            self._mark_ended()
            rejected = [r for r in (opt_list(doc, "rejected", kind) or []) if isinstance(r, str)]
            return [self._end_event(rejected)]
        return []

    def _keep(self, text: str) -> None:
        """Keep the step's text (the answer, when it is the last step), bounded."""
        room = MAX_FINAL_CHARS - self._step_chars
        if room > 0:
            self._step_text.append(text[:room])
            self._step_chars += min(len(text), room)

    def _tool(self, part: dict[str, Any]) -> list[AgentEvent]:
        name = opt_str(part, "tool", "tool_use.part") or "tool"
        state = opt_dict(part, "state", "tool_use.part") or {}
        tool_input = state.get("input")
        phase = phase_of_tool(name, tool_input)
        summary = describe_tool(name, tool_input, self.cwd)
        if state.get("status") == "error":
            why = opt_str(state, "error", "tool_use.part.state") or "failed"
            return [self._emit(phase, f"failed: {summary}: {first_line(why)}", name, error=why)]
        metadata = opt_dict(state, "metadata", "tool_use.part.state") or {}
        exit_code = metadata.get("exit")
        if type(exit_code) is int and exit_code != 0:
            output = opt_str(state, "output", "tool_use.part.state") or ""
            why = f"exit code {exit_code}" + (f": {first_line(output)}" if output.strip() else "")
            return [self._emit(phase, f"failed: {summary}: {why}", name, error=why)]
        return [self._emit(phase, summary, name)]

    def _step_finish(self, part: dict[str, Any]) -> list[AgentEvent]:
        tokens = opt_dict(part, "tokens", "step_finish.part") or {}
        cache = tokens.get("cache")
        cached = cache if isinstance(cache, dict) else {}
        tokens_in = sum(
            count(figure) or 0
            for figure in (tokens.get("input"), cached.get("read"), cached.get("write"))
        )
        tokens_out = (count(tokens.get("output")) or 0) + (count(tokens.get("reasoning")) or 0)
        cost = dollars(part.get("cost"))
        self._add(tokens_in, tokens_out, cost or None)
        reason = opt_str(part, "reason", "step_finish.part")
        self._last_reason = reason
        if reason != "tool-calls":
            self._answer = "\n".join(self._step_text) or self._answer
        return []

    @staticmethod
    def _error_message(error: object) -> str:
        if isinstance(error, dict):
            data = error.get("data")
            if isinstance(data, dict) and isinstance(data.get("message"), str):
                return str(data["message"])
            if isinstance(error.get("name"), str):
                return str(error["name"])
        if isinstance(error, str):
            return error
        return "error"

    def _end_event(self, rejected: list[str]) -> AgentEvent:
        if self._last_error is not None:
            why = self._last_error
            summary = f"finished with an error: {first_line(why)}"
            return self._emit("error", summary, final_text=self._answer, error=why)
        summary = "finished"
        if rejected:
            summary += f"; permissions refused: {', '.join(rejected[:10])}"
        return self._emit("done", summary, final_text=self._answer)

    def _end(self) -> list[AgentEvent]:
        # Releases without a ``done`` event end on a step that stopped for a reason of its own.
        if not self._ended and self._last_reason not in (None, "tool-calls"):
            self._mark_ended()
            return [self._end_event([])]
        return []
