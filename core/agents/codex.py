"""Codex: ``codex exec --json``.

The format is ``ThreadEvent`` in codex-rs ``exec/src/exec_events.rs``, printed one per line by
``exec/src/event_processor_with_jsonl_output.rs`` (openai/codex, 2026):

- ``thread.started`` (``thread_id``: the session ``codex exec resume`` takes), ``turn.started``;
- ``item.started`` / ``item.updated`` / ``item.completed`` with an ``item`` (``id``, ``type``
  and the type's fields): ``agent_message`` (``text``), ``reasoning`` (``text``), ``plan``
  (``text``), ``command_execution`` (``command``, ``aggregated_output``, ``exit_code``,
  ``status``: in_progress/completed/failed/declined), ``file_change`` (``changes``: ``path``
  and ``kind`` add/delete/update; ``status``), ``mcp_tool_call`` (``server``, ``tool``,
  ``arguments``, ``error.message``, ``status``), ``collab_tool_call``, ``web_search``
  (``query``), ``todo_list`` (``items``: ``text``, ``completed``), ``error`` (``message``);
- ``turn.completed`` with ``usage`` (``input_tokens``, ``cached_input_tokens``,
  ``output_tokens``). The processor fills it from the thread's *total* token usage, so it is a
  running total: ``input_tokens`` already counts the cached ones, and no cost is reported. A
  resumed thread's total counts its earlier turns too (codex 0.171.0, run live), so an adapter
  reading a resumed thread goes on from the earlier one's totals (`CodexAdapter.resuming`);
- ``turn.failed`` (``error.message``) and ``error`` (``message``: a stream error; the turn may
  still go on);
- an ``error`` *item* is "a non-fatal error surfaced as an item": a warning (a configuration
  or deprecation notice, a rerouted model, ``Model metadata for `M` not found`` for a model
  outside codex's catalogue), shown as one and not stored as an error.

The first releases of this format (codex 0.4x) named the item kind ``item_type`` and the answer
``assistant_message``; both spellings are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from core.agents.base import (
    JsonLinesAdapter,
    LineAdapter,
    need_dict,
    opt_dict,
    opt_list,
    opt_str,
)
from core.agents.events import AgentEvent, count, first_line
from core.agents.tool_calls import (
    describe_files,
    describe_plan,
    describe_tool,
    phase_of_command,
    phase_of_tool,
    short_path,
    unwrap_shell,
)

_CHANGE_VERBS = {"add": "add", "delete": "delete", "update": "edit"}


class CodexAdapter(JsonLinesAdapter):
    """Codex's ``exec --json`` output (see the module docstring for the format)."""

    name: ClassVar[str] = "codex"

    def __init__(self, *, cwd: str | None = None, extra_args: Sequence[str] = ()) -> None:
        super().__init__(cwd=cwd, extra_args=extra_args)
        self._answer: str | None = None

    def argv(
        self,
        executable: Sequence[str],
        prompt: str,
        *,
        model: str | None = None,
        session_id: str | None = None,
    ) -> list[str]:
        """``codex exec --json --skip-git-repo-check [--model=M] -- PROMPT``, or ``… resume --
        SESSION PROMPT``.

        ``--json``, ``--skip-git-repo-check`` and ``--model`` are global options of ``exec``, so
        they precede the ``resume`` subcommand; ``--`` keeps a prompt (or id) starting with
        ``-`` an argument. ``--skip-git-repo-check``: a run on no configured repository works in
        an empty folder, where codex would otherwise refuse to start.
        """
        argv = [*executable, "exec", "--json", "--skip-git-repo-check"]
        if model:
            argv.append(f"--model={model}")
        argv.extend(self.extra_args)
        if session_id:
            return [*argv, "resume", "--", session_id, prompt]
        return [*argv, "--", prompt]

    def resuming(self, earlier: LineAdapter) -> None:
        # The resumed thread's totals start where the earlier process's ended.
        if isinstance(earlier, CodexAdapter):
            self._totals = dict(earlier._totals)

    def session_totals(self, tokens_in: int, tokens_out: int, *, before: bool = False) -> None:
        # The session file's totals are the thread's, as turn.completed's are: one count.
        if before:
            for key, total in (("in", tokens_in), ("out", tokens_out)):
                self._totals[key] = max(self._totals.get(key, 0), total)
        else:
            self._add(self._tokens_since("in", tokens_in), self._tokens_since("out", tokens_out))

    # --- reading -------------------------------------------------------------------------------

    def _event(self, kind: str, doc: dict[str, Any]) -> list[AgentEvent]:
        if kind in ("item.started", "item.updated", "item.completed"):
            return self._item(kind, need_dict(doc, "item", kind))
        if kind == "thread.started":
            self._set_session(opt_str(doc, "thread_id", kind))
            return [self._emit("message", "session started")]
        if kind == "turn.started":
            self._answer = None
            return []
        if kind == "turn.completed":
            return self._turn_completed(doc)
        if kind == "turn.failed":
            self._mark_ended()
            error = opt_dict(doc, "error", kind) or {}
            why = opt_str(error, "message", "turn.failed.error") or "turn failed"
            return [self._emit("error", f"turn failed: {first_line(why)}", error=why)]
        if kind == "error":
            why = opt_str(doc, "message", kind) or "error"
            return [self._emit("error", f"error: {first_line(why)}", error=why)]
        if kind == "request_user_input":
            questions = opt_list(doc, "questions", kind) or []
            return [self._emit("message", f"asked for input ({len(questions)} questions)")]
        return []

    def _turn_completed(self, doc: dict[str, Any]) -> list[AgentEvent]:
        self._mark_ended()
        usage = opt_dict(doc, "usage", "turn.completed") or {}
        self._add(
            self._tokens_since("in", count(usage.get("input_tokens"))),
            self._tokens_since("out", count(usage.get("output_tokens"))),
        )
        return [self._emit("done", "turn completed", final_text=self._answer)]

    def _item(self, stage: str, item: dict[str, Any]) -> list[AgentEvent]:
        where = f"{stage}.item"
        kind = item.get("type", item.get("item_type"))
        started = stage == "item.started"
        completed = stage == "item.completed"
        if kind in ("agent_message", "assistant_message"):
            if not completed:
                return []
            text = opt_str(item, "text", where) or ""
            self._answer = text
            line = first_line(text)
            return [self._emit("message", line)] if line else []
        if kind in ("reasoning", "plan"):
            text = first_line(opt_str(item, "text", where) or "")
            if not completed or not text:
                return []
            if kind == "plan":
                return [self._emit("planning", f"plan: {text}")]
            # Reasoning summaries open with a bold heading: ``**Planning the fix**``.
            return [self._emit("thinking", f"thinking: {text.strip('*').strip() or text}")]
        if kind == "command_execution":
            return self._command(stage, item, where)
        if kind == "file_change":
            return self._file_change(item, where) if completed else []
        if kind == "mcp_tool_call":
            return self._mcp(stage, item, where)
        if kind == "web_search" and started:
            query = opt_str(item, "query", where) or ""
            return [self._emit("searching", f"web search: {query}", "web_search")]
        if kind == "todo_list" and not completed:
            items = opt_list(item, "items", where) or []
            return [self._emit("planning", describe_plan(items), "todo_list")]
        if kind == "collab_tool_call" and started:
            tool = opt_str(item, "tool", where) or "collab"
            return [self._emit("tool", f"agents: {tool}", "collab_tool_call")]
        if kind == "error" and completed:
            why = opt_str(item, "message", where) or "error"
            return [self._emit("message", f"warning: {first_line(why)}")]
        return []

    def _command(self, stage: str, item: dict[str, Any], where: str) -> list[AgentEvent]:
        command = opt_str(item, "command", where) or ""
        shown = unwrap_shell(command)
        phase = phase_of_command(command)
        tool = "command_execution"
        if stage == "item.started":
            return [self._emit(phase, f"run: {shown}", tool)]
        if stage != "item.completed":
            return []
        status = item.get("status")
        exit_code = item.get("exit_code")
        if status == "declined":
            return [self._emit(phase, f"declined: {shown}", tool, error="declined")]
        if status == "failed" or (type(exit_code) is int and exit_code != 0):
            why = f"exit {exit_code}" if type(exit_code) is int else "failed"
            return [self._emit(phase, f"failed ({why}): {shown}", tool, error=why)]
        code = f" (exit {exit_code})" if type(exit_code) is int else ""
        return [self._emit(phase, f"ran{code}: {shown}", tool)]

    def _file_change(self, item: dict[str, Any], where: str) -> list[AgentEvent]:
        changes = opt_list(item, "changes", where) or []
        described = []
        for change in changes[:200]:
            if isinstance(change, dict) and isinstance(change.get("path"), str):
                verb = _CHANGE_VERBS.get(str(change.get("kind")), "edit")
                described.append(f"{verb} {short_path(change['path'], self.cwd)}")
        line = describe_files(described, "").strip() or "change files"
        if item.get("status") == "failed":
            return [self._emit("editing", f"failed: {line}", "file_change", error="patch failed")]
        return [self._emit("editing", line, "file_change")]

    def _mcp(self, stage: str, item: dict[str, Any], where: str) -> list[AgentEvent]:
        server = opt_str(item, "server", where) or "mcp"
        tool = opt_str(item, "tool", where) or "tool"
        name = f"{server}/{tool}"
        arguments = item.get("arguments")
        phase = phase_of_tool(tool, arguments)
        if stage == "item.started":
            described = describe_tool(tool, arguments, self.cwd)
            return [self._emit(phase, f"{server}: {described}", name)]
        if stage == "item.completed" and item.get("status") == "failed":
            error = opt_dict(item, "error", where) or {}
            why = opt_str(error, "message", f"{where}.error") or "failed"
            return [self._emit(phase, f"{name} failed: {first_line(why)}", name, error=why)]
        return []
