"""A scripted model server on 127.0.0.1 speaking OpenAI's chat completions, for running real
agent programs that call it (OpenCode, aider) end to end with no network.

It answers ``POST …/chat/completions`` (streamed as Server-Sent Events, or as one JSON
document) from a script, not a model. What kind of call a request is decides the answer:

- **tools offered** (OpenCode's agent): the number of ``tool`` messages in the conversation says
  how many tools have run, so the answer is, in turn, a ``write`` of `FILE_NAME` in the working
  directory the system prompt names; a ``bash`` call that fails (`FAILING_COMMAND`, which git
  ends with code 128); a ``bash`` commit ending in ``git rev-parse HEAD``; and a final text
  ending with the ``<completion>`` block the prompt shows, ``commit_sha`` read back from the
  commit's tool result;
- **aider's edit request** (no tools; its system prompt asks for an edit format): a reply in that
  format (``whole``: the file's path, then its whole text fenced; ``diff``: a SEARCH/REPLACE
  block) that writes `FILE_NAME`. Aider applies it and commits by itself, so the reply holds no
  completion block: it cannot know the sha;
- **a side call**: OpenCode's session title, aider's commit message (`COMMIT_MESSAGE`), or any
  other request without tools: a short text.

A conversation whose last user words come after the agent has already answered is a resumed
session given a steer: it gets `STEER_REPLY` (aider's rewrites the file with `STEERED_TEXT`).

Every answer reports fixed token counts in its ``usage`` (streamed: in a last chunk, when the
request asks for it with ``stream_options.include_usage``), and the server keeps every call, with
what it reported, so a test can compare what the agent recorded with what it was served. A test
can `Script.hold` a main call: the server keeps it unanswered, the agent mid-turn, until
released. Given as the agent's proxy too, it keeps (and refuses) every tunnel asked for.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.agents.scripted_http import JsonHandler, serving
from tests.processes import HANG_GUARD_S

#: What every main-conversation answer says it used.
INPUT_TOKENS = 1200
OUTPUT_TOKENS = 80
#: What an answer to a side call (a title, a commit message) says it used.
SIDE_INPUT_TOKENS = 300
SIDE_OUTPUT_TOKENS = 12

FILE_NAME = "src/retry.py"
FILE_TEXT = "def retry(attempts: int = 2) -> int:\n    return attempts\n"
STEERED_TEXT = '"""retry: how many times a run is tried."""\n\n' + FILE_TEXT
COMMIT_MESSAGE = "Retry twice"
#: A command that fails: git ends it with code 128.
FAILING_COMMAND = "git show-ref --verify refs/heads/no-such-branch"
#: The first words of the answer to a steer.
STEER_REPLY = "Took the steer into account"

Kind = Literal["agent", "edit", "side"]
_SHA = re.compile(r"\b[0-9a-f]{40}\b")
_CWD = re.compile(r"[Ww]orking directory: (\S+)")
_TEMPLATE = re.compile(r"<completion>\s*(\{.*?\})\s*</completion>", re.DOTALL)
_FILLED = {
    "files_changed": [FILE_NAME],
    "test_result": "not run: a scripted model",
    "risk": "low: one new function",
    "pr_url": "https://example.test/pulls/1",
    "pr_skipped_reason": "a local test run: nothing to open a pull request on",
}


@dataclass
class Call:
    """One request, and the usage its answer reported (0 when it reported none)."""

    path: str
    body: dict[str, Any]
    kind: Kind | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    reported: bool = False
    authorization: str | None = None


@dataclass
class Hold:
    """A main call the server keeps unanswered until the test releases it."""

    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)


@dataclass
class Script:
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    holds: dict[int, Hold] = field(default_factory=dict)

    def record(self, call: Call) -> Hold | None:
        with self.lock:
            self.calls.append(call)
            if call.kind not in ("agent", "edit"):
                return None
            return self.holds.get(len(self.main_calls) - 1)

    def hold(self, index: int) -> Hold:
        """Keep main call number ``index`` (0 for the first) unanswered until released."""
        with self.lock:
            return self.holds.setdefault(index, Hold())

    def release_all(self) -> None:
        with self.lock:
            for held in self.holds.values():
                held.released.set()

    @property
    def completions(self) -> list[Call]:
        """Every chat completion asked for, main and side."""
        with self.lock:
            return [c for c in self.calls if c.kind is not None]

    @property
    def main_calls(self) -> list[Call]:
        return [c for c in self.calls if c.kind in ("agent", "edit")]

    @property
    def side_calls(self) -> list[Call]:
        return [c for c in self.calls if c.kind == "side"]

    @property
    def tunnels(self) -> list[str]:
        """The hosts the agent tried to reach through the proxy (``CONNECT host:port``)."""
        return [c.path for c in self.calls if c.path.startswith("CONNECT ")]

    @property
    def tokens(self) -> tuple[int, int]:
        """The input and output tokens every answer so far reported."""
        calls = self.completions
        return sum(c.tokens_in for c in calls), sum(c.tokens_out for c in calls)

    @property
    def unreported(self) -> list[Call]:
        """Calls answered without usage (a stream that did not ask for it)."""
        return [c for c in self.completions if not c.reported]


def kind_of(body: dict[str, Any]) -> Kind:
    if _tools(body):
        return "agent"
    system = _system(body)
    if "commit message" in system.lower() or "Generate a title" in _all_text(body):
        return "side"
    if "*file listing*" in system or "SEARCH/REPLACE" in system:
        return "edit"
    return "side"


def answer(body: dict[str, Any], kind: Kind) -> tuple[str, list[dict[str, Any]], str]:
    """The text, the tool calls and the finish reason of one call's answer."""
    if kind == "side":
        system = _system(body).lower()
        return (COMMIT_MESSAGE if "commit message" in system else "Retry change"), [], "stop"
    if kind == "edit":
        return _edit_answer(body), [], "stop"
    results = _tool_results(body)
    if steered(body):
        return _final(body, f"{STEER_REPLY}.", results), [], "stop"
    step = len(results)
    cwd = _cwd(body)
    if step == 0:
        path = f"{cwd}/{FILE_NAME}" if cwd else FILE_NAME
        write = {"filePath": path, "content": FILE_TEXT}
        return "", [_tool_call("call_write_1", "write", write)], "tool_calls"
    if step == 1:
        command = {"command": FAILING_COMMAND, "description": "Check for an old branch"}
        return "", [_tool_call("call_bash_1", "bash", command)], "tool_calls"
    if step == 2:
        commit = f"git add -A && git commit -q -m '{COMMIT_MESSAGE}' && git rev-parse HEAD"
        command = {"command": commit, "description": "Commit the change"}
        return "", [_tool_call("call_bash_2", "bash", command)], "tool_calls"
    return _final(body, "Committed the change.", results), [], "stop"


def _final(body: dict[str, Any], text: str, results: list[str]) -> str:
    shas = [sha for result in results for sha in _SHA.findall(result)]
    completion = _completion(body, shas[-1] if shas else "")
    if completion is not None:
        text += f"\n<completion>\n{json.dumps(completion, indent=2)}\n</completion>"
    return text


def _edit_answer(body: dict[str, Any]) -> str:
    """Aider's reply: the file written in the edit format its system prompt asks for."""
    again = steered(body)
    new = STEERED_TEXT if again else FILE_TEXT
    words = f"{STEER_REPLY}: the module says what it holds." if again else "I'll add the helper."
    if "SEARCH/REPLACE" in _system(body):
        old = FILE_TEXT if again else ""
        block = f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"
        return f"{words}\n\n{FILE_NAME}\n```python\n{block}```\n"
    return f"{words}\n\n{FILE_NAME}\n```python\n{new}```\n"


def _completion(body: dict[str, Any], sha: str) -> dict[str, Any] | None:
    """The completion block the prompt asked for, its placeholders filled in."""
    match = _TEMPLATE.search(_user_text(body))
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


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _system(body: dict[str, Any]) -> str:
    return "\n".join(_text(m.get("content")) for m in _messages(body) if m.get("role") == "system")


def _user_text(body: dict[str, Any]) -> str:
    return "\n".join(_text(m.get("content")) for m in _messages(body) if m.get("role") == "user")


def _all_text(body: dict[str, Any]) -> str:
    return "\n".join(_text(m.get("content")) for m in _messages(body))


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the conversation's last message when it is the user's, else ``""``."""
    messages = _messages(body)
    last = messages[-1] if messages else None
    return _text(last.get("content")) if last and last.get("role") == "user" else ""


def steered(body: dict[str, Any]) -> bool:
    """Whether the call is a resumed session's: the user's last words come after the task's
    prompt (the one showing a ``<completion>`` block) and are not that prompt."""
    users = [_text(m.get("content")) for m in _messages(body) if m.get("role") == "user"]
    last = last_user_text(body)
    if not last.strip() or _TEMPLATE.search(last):
        return False
    return any(_TEMPLATE.search(text) for text in users[:-1])


def _tools(body: dict[str, Any]) -> list[Any]:
    tools = body.get("tools")
    return tools if isinstance(tools, list) else []


def _tool_results(body: dict[str, Any]) -> list[str]:
    return [_text(m.get("content")) for m in _messages(body) if m.get("role") == "tool"]


def _cwd(body: dict[str, Any]) -> str | None:
    match = _CWD.search(_system(body))
    return match.group(1) if match else None


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def _usage(kind: Kind) -> dict[str, int]:
    tokens_in, tokens_out = (
        (SIDE_INPUT_TOKENS, SIDE_OUTPUT_TOKENS) if kind == "side" else (INPUT_TOKENS, OUTPUT_TOKENS)
    )
    return {
        "prompt_tokens": tokens_in,
        "completion_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
    }


def _chunks(
    model: str, text: str, tools: list[dict[str, Any]], finish: str, usage: dict[str, int] | None
) -> Iterator[dict[str, Any]]:
    """The chunks of one streamed answer."""
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}  # fmt: skip

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    yield chunk({"role": "assistant", "content": ""})
    if text:
        yield chunk({"content": text})
    for index, call in enumerate(tools):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, finish)
    if usage is not None:
        yield {**base, "choices": [], "usage": usage}


class _Handler(JsonHandler):
    def do_GET(self) -> None:
        self.server.script.record(Call(self.path, {}))
        if self.path.split("?", 1)[0].endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted-model",
                                                         "object": "model"}]})  # fmt: skip
            return
        self._json(200, {})

    def do_CONNECT(self) -> None:
        # Given as the agent's proxy too: a tunnel asked for is traffic that would have left
        # the machine. It is kept, and refused.
        self.server.script.record(Call(f"CONNECT {self.path}", {}))
        self._json(403, {})
        self.close_connection = True

    def do_POST(self) -> None:
        body = self._body()
        script = self.server.script
        if not self.path.split("?", 1)[0].endswith("/chat/completions"):
            script.record(Call(self.path, body))
            self._json(404, {"error": {"message": f"no such endpoint: {self.path}"}})
            return
        kind = kind_of(body)
        stream = bool(body.get("stream"))
        options = body.get("stream_options")
        reports = not stream or (isinstance(options, dict) and bool(options.get("include_usage")))
        usage = _usage(kind)
        call = Call(self.path, body, kind, reported=reports,
                    authorization=self.headers.get("Authorization"))  # fmt: skip
        if reports:
            call.tokens_in, call.tokens_out = usage["prompt_tokens"], usage["completion_tokens"]
        held = script.record(call)
        if held is not None:
            held.arrived.set()
            held.released.wait(HANG_GUARD_S)  # bounded only so a forgotten hold cannot hang
        text, tools, finish = answer(body, kind)
        model = str(body.get("model") or "scripted-model")
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if tools:
                message["tool_calls"] = tools
            self._json(200, {
                "id": "chatcmpl-scripted", "object": "chat.completion",
                "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            })  # fmt: skip
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in _chunks(model, text, tools, finish, usage if reports else None):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


@contextmanager
def scripted_chat() -> Iterator[tuple[str, Script]]:
    """A running server: its base URL (``http://127.0.0.1:PORT/v1``) and its script."""
    script = Script()
    with serving(_Handler, script) as port:
        yield f"http://127.0.0.1:{port}/v1", script
