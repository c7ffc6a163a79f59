"""A scripted model server on 127.0.0.1 speaking the Anthropic Messages API, for running a real
agent program (Claude Code) end to end with no network.

It answers ``POST /v1/messages`` (streamed as Server-Sent Events, or as one JSON document) from
a script, not a model. The agent's own conversation decides the step: the number of
``tool_result`` blocks in the request's messages says how many tools have run, so

1. no tool has run yet: ``Write`` a file in the agent's working directory;
2. the file was written: ``Bash`` ``git add -A && git commit -m ... && git rev-parse HEAD``;
3. the commit ran: a final text ending with the ``<completion>`` block the prompt shows, its
   placeholders filled in: ``commit_sha`` is the sha the Bash tool printed, read back from the
   tool's result (a prompt that shows no block gets a final text without one).

A conversation whose last message holds the user's own words after the agent has already
answered is a resumed session given a steer: it gets `STEER_REPLY` and the completion block
again, so the run's last answer is the resumed turn's.

A request that is not the main conversation (a title, a topic check, a summary: anything sent
without tools) gets a short text answer. Every response reports fixed token counts, so a test
can check what the agent recorded. Every request is kept in ``requests`` (path and body) for a
test to look at; anything else the program asks for is answered with an empty JSON object.
A test can `Script.hold` a main request: the server keeps it unanswered, the agent mid-turn,
until the test releases it.
Given as the agent's proxy as well, the server also keeps (and refuses) every tunnel the agent
asks for, so a test can check that nothing tried to leave the machine.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.agents.scripted_http import JsonHandler, serving
from tests.processes import HANG_GUARD_S

#: What every scripted main-conversation response says it used.
INPUT_TOKENS = 1200
OUTPUT_TOKENS = 80
#: What an answer to a side request (no tools offered) says it used.
SIDE_INPUT_TOKENS = 30
SIDE_OUTPUT_TOKENS = 5

FILE_NAME = "src/retry.py"
FILE_TEXT = "def retry(attempts: int = 2) -> int:\n    return attempts\n"
COMMIT_MESSAGE = "Retry twice"
#: The first words of the answer to a steer.
STEER_REPLY = "Took the steer into account"

_SHA = re.compile(r"\b[0-9a-f]{40}\b")


@dataclass
class Request:
    path: str
    body: dict[str, Any]


@dataclass
class Hold:
    """A main request the server keeps unanswered until the test releases it."""

    arrived: threading.Event = field(default_factory=threading.Event)
    """Set once the request is in and waiting: the agent is mid-turn."""
    released: threading.Event = field(default_factory=threading.Event)
    """Set by the test: the request is answered."""


@dataclass
class Script:
    """The canned conversation; ``cwd`` comes from the agent's system prompt when it says one."""

    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    holds: dict[int, Hold] = field(default_factory=dict)

    def record(self, path: str, body: dict[str, Any]) -> Hold | None:
        """Keep the request; the hold it is under, if the test asked for one."""
        with self.lock:
            self.requests.append(Request(path, body))
            if path.split("?", 1)[0] != "/v1/messages" or not _tools(body):
                return None
            return self.holds.get(len(self.main_requests) - 1)

    def hold(self, index: int) -> Hold:
        """Keep main request number ``index`` (0 for the first) unanswered until released."""
        with self.lock:
            return self.holds.setdefault(index, Hold())

    def release_all(self) -> None:
        with self.lock:
            for held in self.holds.values():
                held.released.set()

    @property
    def tunnels(self) -> list[str]:
        """The hosts the agent tried to reach through the proxy (``CONNECT host:port``)."""
        return [r.path for r in self.requests if r.path.startswith("CONNECT ")]

    @property
    def tokens(self) -> tuple[int, int]:
        """The input and output tokens of every message answered so far."""
        total_in = total_out = 0
        for r in self.requests:
            if r.path.split("?", 1)[0] == "/v1/messages":
                tools = bool(_tools(r.body))
                total_in += INPUT_TOKENS if tools else SIDE_INPUT_TOKENS
                total_out += OUTPUT_TOKENS if tools else SIDE_OUTPUT_TOKENS
        return total_in, total_out

    @property
    def main_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.startswith("/v1/messages") and _tools(r.body)]

    def answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str, dict[str, int]]:
        """The content blocks, the stop reason and the usage for one request."""
        if not _tools(body):
            usage = {"input_tokens": SIDE_INPUT_TOKENS, "output_tokens": SIDE_OUTPUT_TOKENS}
            return [{"type": "text", "text": "Retry change"}], "end_turn", usage
        usage = {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS}
        results = _tool_results(body)
        if steered(body):
            found = _SHA.findall(results[-1]) if results else []
            text = f"{STEER_REPLY}."
            completion = _completion(body, found[-1] if found else "")
            if completion is not None:
                text += f"\n<completion>\n{json.dumps(completion, indent=2)}\n</completion>"
            return [{"type": "text", "text": text}], "end_turn", usage
        step = len(results)
        if step == 0:
            path = f"{_cwd(body)}/{FILE_NAME}" if _cwd(body) else FILE_NAME
            tool = {"file_path": path, "content": FILE_TEXT}
            return [_tool_use("toolu_write_1", "Write", tool)], "tool_use", usage
        if step == 1:
            command = f"git add -A && git commit -q -m '{COMMIT_MESSAGE}' && git rev-parse HEAD"
            tool = {"command": command, "description": "Commit the change"}
            return [_tool_use("toolu_bash_1", "Bash", tool)], "tool_use", usage
        found = _SHA.findall(results[-1])
        text = "Committed the change."
        completion = _completion(body, found[-1] if found else "")
        if completion is not None:
            text += f"\n<completion>\n{json.dumps(completion, indent=2)}\n</completion>"
        return [{"type": "text", "text": text}], "end_turn", usage


_TEMPLATE = re.compile(r"<completion>\s*(\{.*?\})\s*</completion>", re.DOTALL)
_FILLED = {
    "files_changed": [FILE_NAME],
    "test_result": "not run: a scripted model",
    "risk": "low: one new function",
    "pr_url": "https://example.test/pulls/1",
    "pr_skipped_reason": "a local test run: nothing to open a pull request on",
}


def _completion(body: dict[str, Any], sha: str) -> dict[str, Any] | None:
    """The completion block the prompt asked for, its placeholders filled in; None when the
    prompt shows none (then the agent ends without one and Jarvis composes it from git)."""
    prompt = "\n".join(
        _text(m.get("content")) for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") == "user"
    )  # fmt: skip
    match = _TEMPLATE.search(prompt)
    if match is None:
        return None
    try:
        template = json.loads(match.group(1))
    except ValueError:
        return None
    if not isinstance(template, dict):
        return None
    filled: dict[str, Any] = {}
    for name, value in template.items():
        placeholder = isinstance(value, str) and value.startswith("<")
        placeholder = placeholder or value == ["<every file your commits changed>"]
        if not placeholder:
            filled[name] = value
        elif name == "commit_sha":
            filled[name] = sha
        else:
            filled[name] = _FILLED.get(name, "n/a")
    return filled


def last_user_text(body: dict[str, Any]) -> str:
    """The text the conversation's last message gives, when it is the user's (tool results and
    ``<system-reminder>`` blocks left out), else ``""``."""
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    if not isinstance(last, dict) or last.get("role") != "user":
        return ""
    content = last.get("content")
    blocks = [content] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return ""
    texts = [_text([b]) if isinstance(b, dict) else _text(b) for b in blocks]
    return "\n".join(t for t in texts if t and not t.lstrip().startswith("<system-reminder>"))


def steered(body: dict[str, Any]) -> bool:
    """Whether the request is a resumed session's: the agent had answered, and the user then
    wrote. (Claude Code puts the new message in the same user message as the last tool
    results when it resumes a session.)"""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    answered = any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages[:-1])
    return answered and bool(last_user_text(body))


def _tools(body: dict[str, Any]) -> list[Any]:
    tools = body.get("tools")
    return tools if isinstance(tools, list) else []


def _tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in the conversation, oldest first."""
    found: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(_text(block.get("content")))
    return found


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


_CWD = re.compile(r"(?:Primary )?[Ww]orking directory: (\S+)")


def _cwd(body: dict[str, Any]) -> str | None:
    """The working directory the agent's system prompt names, if it names one."""
    system = body.get("system")
    match = _CWD.search(_text(system) if not isinstance(system, str) else system)
    return match.group(1) if match else None


def _tool_use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _events(
    model: str, blocks: list[dict[str, Any]], stop: str, usage: dict[str, int]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The Server-Sent Events of one streamed message."""
    message: dict[str, Any] = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
    }
    yield "message_start", {"type": "message_start", "message": message}
    for index, block in enumerate(blocks):
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class _Handler(JsonHandler):
    def do_GET(self) -> None:
        self.server.script.record(self.path, {})
        self._json(200, {})

    def do_HEAD(self) -> None:
        self.server.script.record(self.path, {})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_CONNECT(self) -> None:
        # The agent is given this server as its proxy too: a tunnel asked for is traffic that
        # would have left the machine. It is kept, and refused.
        self.server.script.record(f"CONNECT {self.path}", {})
        self._json(403, {})
        self.close_connection = True

    def do_POST(self) -> None:
        body = self._body()
        script = self.server.script
        held = script.record(self.path, body)
        if held is not None:
            held.arrived.set()
            # Bounded only so a test that never releases cannot hang the server thread.
            held.released.wait(HANG_GUARD_S)
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self._json(200, {"input_tokens": INPUT_TOKENS})
            return
        if path != "/v1/messages":
            self._json(200, {})
            return
        blocks, stop, usage = script.answer(body)
        model = str(body.get("model") or "scripted")
        if not body.get("stream"):
            self._json(
                200,
                {
                    "id": "msg_scripted",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in _events(model, blocks, stop, usage):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


@contextmanager
def scripted_model() -> Iterator[tuple[str, Script]]:
    """A running server: its base URL (``http://127.0.0.1:PORT``) and its script."""
    script = Script()
    with serving(_Handler, script) as port:
        yield f"http://127.0.0.1:{port}", script
