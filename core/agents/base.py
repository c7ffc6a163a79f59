"""The protocol every agent adapter follows, and the line handling they share.

An adapter is fed the agent's stdout one line at a time (`parse_line`, the bytes without their
line ending or with it) and told when the stream ends (`finish`). It never raises: a line it
cannot read (not UTF-8, not JSON, cut short, JSON of a shape the format does not give it, over
`MAX_LINE_BYTES`) becomes at most one ``error`` event saying so, and after
`MAX_REPORTED_PROBLEMS` such events the rest are only counted, and reported once by `finish`. It
keeps no line it was given: only its running totals, the session id, a bounded map of the
agent's open tool calls and, where the format needs it, at most `MAX_FINAL_CHARS` of answer text.

One adapter instance reads one agent process; make a new one per run (`registry.adapter_for`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar, Final, Protocol

from core.agents.events import (
    MAX_ERROR_CHARS,
    AgentEvent,
    Phase,
    Usage,
    one_line,
    writable,
)

#: The longest line an adapter reads. Longer lines are skipped unread (and reported once).
MAX_LINE_BYTES: Final = 1024 * 1024
#: The most answer text an adapter keeps for ``final_text``.
MAX_FINAL_CHARS: Final = MAX_LINE_BYTES
#: How many unreadable lines are reported one by one before the rest are only counted.
MAX_REPORTED_PROBLEMS: Final = 20
#: How many open tool calls an adapter remembers (to name the tool when its result comes back).
MAX_OPEN_TOOLS: Final = 512
#: How many bytes of an unreadable line its ``error`` event quotes.
_PREVIEW_BYTES: Final = 120


class AgentAdapter(Protocol):
    """Turns one coding agent's machine-readable output into `AgentEvent`s."""

    @property
    def name(self) -> str:
        """The agent's name in `registry.ADAPTERS` (``claude-code``, ``codex``…)."""
        ...

    @property
    def usage(self) -> Usage:
        """Totals of tokens and cost the agent reported so far (equal to the events' sum)."""
        ...

    @property
    def session_id(self) -> str | None:
        """The agent's session id, once it reported one: what ``argv(session_id=…)`` resumes."""
        ...

    def argv(
        self,
        executable: Sequence[str],
        prompt: str,
        *,
        model: str | None = None,
        session_id: str | None = None,
    ) -> list[str]:
        """The non-interactive command line running ``prompt``, resuming ``session_id`` if given.

        Args:
            executable: how to start the agent (``["claude"]``, ``["npx", "codex"]``).
            prompt: the task; always one argument, after any option, so it is never an option.
            model: the agent's model name, or None for its default.
            session_id: a session to continue, or None for a new one.
        """
        ...

    def parse_line(self, line: bytes) -> list[AgentEvent]:
        """The events one line of the agent's stdout means; never raises."""
        ...

    def finish(self) -> list[AgentEvent]:
        """The events the end of the stream means (an ``error`` if no result came); never raises."""
        ...


class Shape(Exception):
    """JSON whose shape is not what the agent's format gives it; the message says where."""


def opt_str(doc: dict[str, Any], key: str, where: str) -> str | None:
    """``doc[key]`` as a string, None when absent or null; `Shape` when it is something else."""
    value = doc.get(key)
    if value is None or isinstance(value, str):
        return value
    raise Shape(f"{where}.{key}")


def opt_dict(doc: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    """``doc[key]`` as an object, None when absent or null; `Shape` when it is something else."""
    value = doc.get(key)
    if value is None or isinstance(value, dict):
        return value
    raise Shape(f"{where}.{key}")


def need_dict(doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``doc[key]`` as an object; `Shape` when it is absent or something else."""
    value = doc.get(key)
    if isinstance(value, dict):
        return value
    raise Shape(f"{where}.{key}")


def opt_list(doc: dict[str, Any], key: str, where: str) -> list[Any] | None:
    """``doc[key]`` as an array, None when absent or null; `Shape` when it is something else."""
    value = doc.get(key)
    if value is None or isinstance(value, list):
        return value
    raise Shape(f"{where}.{key}")


def clean_text(text: str | None) -> str | None:
    """Agent text kept as it is (for the completion gate), but writable: at most
    `MAX_FINAL_CHARS`, lone surrogates replaced. It is never shown without escaping."""
    if text is None:
        return None
    return writable(text[:MAX_FINAL_CHARS])


class LineAdapter(ABC):
    """What every adapter shares: the never-raising line guard, usage, the end of the stream."""

    name: ClassVar[str] = "agent"
    #: Whether the prompt goes on the agent's stdin (then `argv` leaves it out): for an agent
    #: whose command line cannot carry it byte for byte.
    prompt_on_stdin: ClassVar[bool] = False
    #: Files and folders the agent makes in its checkout for itself (caches), which the runner
    #: removes after each turn unless they were there before.
    own_files: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, cwd: str | None = None, extra_args: Sequence[str] = ()) -> None:
        """Args:
        cwd: the agent's working directory; paths inside it are shown relative to it.
        extra_args: options placed before the prompt in `argv` (the host's policy, such as
            permission or sandbox flags; none are chosen here).
        """
        self.cwd = cwd
        self.extra_args = tuple(extra_args)
        self.state_dir: str | None = None
        """A folder outside the checkout, private to the attempt, where the agent may keep its
        own files across turns (aider's chat history); set by `registry.adapter_for`."""
        self._usage = Usage()
        self._reported = Usage()
        self._totals: dict[str, float] = {}
        self._session: str | None = None
        self._ended = False
        self._finished = False
        self._problems = 0
        self._skipped = 0
        self._overlong = False

    # --- the protocol ---------------------------------------------------------------------

    @property
    def usage(self) -> Usage:
        return self._usage

    @property
    def session_id(self) -> str | None:
        return self._session

    @abstractmethod
    def argv(
        self,
        executable: Sequence[str],
        prompt: str,
        *,
        model: str | None = None,
        session_id: str | None = None,
    ) -> list[str]: ...

    def parse_line(self, line: bytes) -> list[AgentEvent]:
        try:
            if len(line) > MAX_LINE_BYTES:
                events = self._too_long()
            else:
                events = self._parse(bytes(line))
        except Shape as exc:
            events = self._not_understood(f"unexpected shape at {exc}", line)
        except RecursionError:
            events = self._not_understood("nested too deep", line)
        except Exception:  # a safety net: whatever the line, the caller gets events
            events = self._not_understood("the adapter could not read it", line)
        return self._settle(events)

    def finish(self) -> list[AgentEvent]:
        if self._finished:
            return []
        self._finished = True
        try:
            events = self._end()
        except Exception:
            why = "the adapter failed at the end of the output"
            events = [self._emit("error", f"{self.name}: {why}", error=why)]
        if not self._ended:
            events.append(
                self._emit(
                    "error",
                    f"{self.name}: the output ended before the agent reported a result",
                    error="no result",
                )
            )
        if self._skipped:
            events.append(
                self._emit(
                    "error",
                    f"{self.name}: {self._skipped:,} more lines were skipped "
                    "(not understood, or over the size cap)",
                    error="lines skipped",
                )
            )
        if not events and self._usage != self._reported:
            events.append(self._emit("message", f"{self.name}: usage reported after the result"))
        return self._settle(events)

    # --- for adapters -----------------------------------------------------------------------

    @abstractmethod
    def _parse(self, line: bytes) -> list[AgentEvent]:
        """The events of one line of at most `MAX_LINE_BYTES`; may raise `Shape`."""

    def _end(self) -> list[AgentEvent]:
        """Events the end of the stream adds (before the checks every adapter makes)."""
        return []

    def _emit(
        self,
        phase: Phase,
        summary: str,
        tool: str | None = None,
        *,
        final_text: str | None = None,
        error: str | None = None,
    ) -> AgentEvent:
        why = one_line(error, MAX_ERROR_CHARS) if error else None
        if phase == "error" and not why:
            why = "unspecified error"  # an agent may report an empty message
        return AgentEvent(
            phase=phase,
            summary=one_line(summary),
            tool=one_line(tool, 64) if tool else None,
            session_id=self._session,
            final_text=clean_text(final_text),
            error=why,
        )

    def resuming(self, earlier: LineAdapter) -> None:
        """This adapter reads a resumed session whose earlier turns ``earlier`` read.

        An agent whose figures are the session's running totals (Codex's ``turn.completed``)
        reports the earlier turns' tokens again; overridden there to go on from ``earlier``'s
        totals, so they count once."""
        return None

    def session_totals(self, tokens_in: int, tokens_out: int, *, before: bool = False) -> None:
        """The session's running totals as a source beside the output reports them (Codex's
        session file, `core.agents.codex_usage`): counted now, so a budget sees a turn's
        tokens before it ends; with ``before``, what earlier turns used, not counted again.
        Only agents whose output figures are such totals take them."""
        return None

    def _set_session(self, session_id: object) -> None:
        if isinstance(session_id, str) and session_id.strip():
            self._session = one_line(session_id, 200)

    def _add(self, tokens_in: int = 0, tokens_out: int = 0, cost: float | None = None) -> None:
        """Add increments to the running totals."""
        self._usage = self._usage.plus(Usage(tokens_in, tokens_out, cost))

    def _since(self, key: str, total: float) -> float:
        """The increment a running total ``total`` (reported under ``key``) makes.

        A total smaller than the last one is taken as a count that started again (a new
        session or turn), so all of it is new.
        """
        last = self._totals.get(key, 0)
        self._totals[key] = total
        return total - last if total >= last else total

    def _tokens_since(self, key: str, total: int | None) -> int:
        """`_since` for a token count; a count the agent left out is no count (not a zero,
        which would look like a restart)."""
        return 0 if total is None else int(self._since(key, total))

    def _mark_ended(self) -> None:
        self._ended = True

    def _too_long(self) -> list[AgentEvent]:
        if self._overlong:
            self._skipped += 1
            return []
        self._overlong = True
        return [
            self._emit(
                "error",
                f"{self.name}: a line over the {MAX_LINE_BYTES:,}-byte cap was skipped unread",
                error="line too long",
            )
        ]

    def _not_understood(self, reason: str, line: object) -> list[AgentEvent]:
        if self._problems >= MAX_REPORTED_PROBLEMS:
            self._skipped += 1
            return []
        self._problems += 1
        try:
            preview = bytes(line[:_PREVIEW_BYTES]).decode("utf-8", "replace")  # type: ignore[index]
        except Exception:
            preview = ""
        summary = f"{self.name}: a line was not understood ({reason})"
        if preview.strip():
            summary += f": {preview}"
        return [self._emit("error", summary, error=reason)]

    def _settle(self, events: list[AgentEvent]) -> list[AgentEvent]:
        """Put the usage reported since the last event that carried some on the last event."""
        if events and self._usage != self._reported:
            now, before = self._usage, self._reported
            cost = None
            if now.cost_usd is not None and now.cost_usd != before.cost_usd:
                cost = now.cost_usd - (before.cost_usd or 0.0)
            events[-1] = replace(
                events[-1],
                tokens_in=(now.tokens_in - before.tokens_in) or None,
                tokens_out=(now.tokens_out - before.tokens_out) or None,
                cost_usd=cost,
            )
            self._reported = now
        return events


class JsonLinesAdapter(LineAdapter):
    """An agent whose stdout is one JSON object per line, each with a string ``type``."""

    def _parse(self, line: bytes) -> list[AgentEvent]:
        stripped = line.strip()
        if not stripped:
            return []
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError:
            return self._not_understood("not UTF-8", line)
        if text[0] != "{":
            return self._not_understood("not a JSON object", line)
        try:
            doc = json.loads(text)
        except ValueError:
            return self._not_understood("not JSON, or cut short", line)
        if not isinstance(doc, dict):
            return self._not_understood("not a JSON object", line)
        kind = doc.get("type")
        if not isinstance(kind, str):
            return self._not_understood("no type", line)
        return self._event(kind, doc)

    @abstractmethod
    def _event(self, kind: str, doc: dict[str, Any]) -> list[AgentEvent]:
        """The events of one JSON object whose ``type`` is ``kind``; may raise `Shape`."""


class OpenTools:
    """The agent's tool calls waiting for their result, by call id; at most `MAX_OPEN_TOOLS`."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[str, Phase]] = {}

    def add(self, call_id: object, name: str, phase: Phase) -> None:
        if not isinstance(call_id, str):
            return
        if len(self._open) >= MAX_OPEN_TOOLS:
            del self._open[next(iter(self._open))]
        self._open[call_id[:200]] = (name, phase)

    def pop(self, call_id: object) -> tuple[str, Phase] | None:
        if not isinstance(call_id, str):
            return None
        return self._open.pop(call_id[:200], None)

    def __len__(self) -> int:
        return len(self._open)
