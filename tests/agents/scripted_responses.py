"""A scripted model server on 127.0.0.1 speaking OpenAI's Responses API, for running Codex end
to end with no network.

It answers ``POST /v1/responses`` streamed as Server-Sent Events (``response.created``,
``response.output_item.added``, ``response.output_text.delta``, ``response.output_item.done``,
``response.completed`` with ``usage``), as codex-rs ``codex-api/src/sse/responses.rs`` reads
them, from a script, not a model. The agent's own conversation decides the step: the number of
``function_call_output`` items in the request's ``input`` says how many tools have run, so

1. no tool has run yet: ``exec_command`` running ``apply_patch`` to add a file in the agent's
   working directory (Codex applies such a patch itself and reports a ``file_change``);
2. the patch was applied: ``exec_command`` running a command that fails (`FAILING_COMMAND`,
   exit 1), as an agent's look at something that is not there does;
3. then ``exec_command`` running ``git add -A && git commit ... && git rev-parse HEAD``;
4. the commit ran: a final message ending with the ``<completion>`` block the prompt shows, its
   placeholders filled in: ``commit_sha`` is the sha the command printed, read back from the
   tool's output (a prompt that shows no block gets a final message without one).

A conversation whose last item is the user's own words after the agent has already answered is
a resumed thread given a steer: it gets `STEER_REPLY` and the completion block again.

An `endless <Script.endless>` script never finishes: each call asks for one more command.

A request offering no tools (a title, a summary, a compaction) gets a short text. Every response
reports fixed token counts, and `Script.tokens` totals what was served. A test can
`Script.hold` a main request (the agent is then mid-turn) until it releases it. Given as the
agent's proxy as well, the server keeps (and refuses) every tunnel the agent asks for.
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
from tests.agents.scripted_model import COMMIT_MESSAGE, FILE_NAME, FILE_TEXT, STEER_REPLY, Hold
from tests.processes import HANG_GUARD_S

#: What every scripted main response says it used.
INPUT_TOKENS = 1500
OUTPUT_TOKENS = 90
#: What an answer to a side request (no tools offered) says it used.
SIDE_INPUT_TOKENS = 40
SIDE_OUTPUT_TOKENS = 6

#: The command of step 2, which exits 1: no such branch.
FAILING_COMMAND = "git rev-parse --verify --quiet refs/heads/no-such-branch"

_SHA = re.compile(r"\b[0-9a-f]{40}\b")
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")
_TEMPLATE = re.compile(r"<completion>\s*(\{.*?\})\s*</completion>", re.DOTALL)
_FILLED = {
    "files_changed": [FILE_NAME],
    "test_result": "not run: a scripted model",
    "risk": "low: one new function",
    "pr_url": "https://example.test/pulls/1",
    "pr_skipped_reason": "a local test run: nothing to open a pull request on",
}


@dataclass
class Request:
    path: str
    body: dict[str, Any]


@dataclass
class Script:
    """The canned conversation; every request is kept for the test to look at."""

    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    holds: dict[int, Hold] = field(default_factory=dict)
    endless: bool = False
    """Never end: every main request gets one more command to run, so the agent's turn goes
    on until it is stopped."""

    def record(self, path: str, body: dict[str, Any]) -> Hold | None:
        """Keep the request; the hold it is under, if the test asked for one."""
        with self.lock:
            self.requests.append(Request(path, body))
            if not _is_responses(path) or not _tools(body):
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
    def main_requests(self) -> list[Request]:
        return [r for r in self.requests if _is_responses(r.path) and _tools(r.body)]

    @property
    def tokens(self) -> tuple[int, int]:
        """The input and output tokens of every response served so far."""
        total_in = total_out = 0
        for r in self.requests:
            if _is_responses(r.path):
                tools = bool(_tools(r.body))
                total_in += INPUT_TOKENS if tools else SIDE_INPUT_TOKENS
                total_out += OUTPUT_TOKENS if tools else SIDE_OUTPUT_TOKENS
        return total_in, total_out

    def answer(self, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The one output item of a response, and its usage."""
        if not _tools(body):
            usage = _usage(SIDE_INPUT_TOKENS, SIDE_OUTPUT_TOKENS)
            return _message("Retry change"), usage
        usage = _usage(INPUT_TOKENS, OUTPUT_TOKENS)
        outputs = function_outputs(body)
        if steered(body):
            found = _SHA.findall(outputs[-1]) if outputs else []
            return _message(_final(body, f"{STEER_REPLY}.", found)), usage
        cwd = _cwd(body)
        workdir = {"workdir": cwd} if cwd else {}
        step = len(outputs)
        if self.endless:
            return _call(f"call_step_{step}", {"cmd": f"echo step {step}", **workdir}), usage
        if step == 0:
            added = "".join(f"+{line}\n" for line in FILE_TEXT.splitlines())
            patch = f"*** Begin Patch\n*** Add File: {FILE_NAME}\n{added}*** End Patch"
            command = f"apply_patch <<'PATCH'\n{patch}\nPATCH"
            return _call("call_patch_1", {"cmd": command, **workdir}), usage
        if step == 1:
            return _call("call_look_1", {"cmd": FAILING_COMMAND, **workdir}), usage
        if step == 2:
            command = f"git add -A && git commit -q -m '{COMMIT_MESSAGE}' && git rev-parse HEAD"
            return _call("call_commit_1", {"cmd": command, **workdir}), usage
        found = _SHA.findall(outputs[-1])
        return _message(_final(body, "Committed the change.", found)), usage


def fill_completion(prompts: list[str], sha: str) -> dict[str, Any] | None:
    """The completion block the prompt asked for, its placeholders filled in; None when the
    prompt shows none (then the agent ends without one and Jarvis composes it from git)."""
    match = _TEMPLATE.search("\n".join(prompts))
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


def _final(body: dict[str, Any], words: str, shas: list[str]) -> str:
    completion = fill_completion(user_texts(body), shas[-1] if shas else "")
    if completion is None:
        return words
    return f"{words}\n<completion>\n{json.dumps(completion, indent=2)}\n</completion>"


def _is_responses(path: str) -> bool:
    return path.split("?", 1)[0].endswith("/responses")


def _tools(body: dict[str, Any]) -> list[Any]:
    tools = body.get("tools")
    return tools if isinstance(tools, list) else []


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = body.get("input")
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def function_outputs(body: dict[str, Any]) -> list[str]:
    """The text of every ``function_call_output`` in the request's input, oldest first."""
    return [_text(i.get("output")) for i in _items(body) if i.get("type") == "function_call_output"]


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text of every user message in the request's input, oldest first."""
    return [
        _text(i.get("content"))
        for i in _items(body)
        if i.get("type") == "message" and i.get("role") == "user"
    ]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the input's last item when it is a user message, else ``""``."""
    items = _items(body)
    last = items[-1] if items else None
    if last is None or last.get("type") != "message" or last.get("role") != "user":
        return ""
    return _text(last.get("content"))


def steered(body: dict[str, Any]) -> bool:
    """Whether the request is a resumed thread's: the agent had answered, then the user wrote."""
    items = _items(body)
    answered = any(i.get("type") == "message" and i.get("role") == "assistant" for i in items[:-1])
    return answered and bool(last_user_text(body))


def _cwd(body: dict[str, Any]) -> str | None:
    """The working directory Codex's environment context names, if it names one."""
    for text in user_texts(body):
        match = _CWD.search(text)
        if match:
            return match.group(1).strip()
    return None


def _usage(tokens_in: int, tokens_out: int) -> dict[str, Any]:
    return {
        "input_tokens": tokens_in,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens_in + tokens_out,
    }


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_scripted",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": "exec_command",
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def _events(item: dict[str, Any], usage: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The Server-Sent Events of one streamed response holding ``item``."""
    response = {"id": "resp_scripted", "object": "response", "status": "in_progress"}
    yield {"type": "response.created", "response": response}
    opened = {**item, "status": "in_progress"}
    if item["type"] == "message":
        opened["content"] = []
    elif item["type"] == "function_call":
        opened["arguments"] = ""
    yield {"type": "response.output_item.added", "output_index": 0, "item": opened}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        yield {
            "type": "response.output_text.delta",
            "item_id": item["id"],
            "output_index": 0,
            "content_index": 0,
            "delta": text,
        }
    yield {"type": "response.output_item.done", "output_index": 0, "item": item}
    yield {
        "type": "response.completed",
        "response": {**response, "status": "completed", "usage": usage},
    }


class _Handler(JsonHandler):
    def do_GET(self) -> None:
        self.server.script.record(self.path, {})
        # Codex asks ``GET /v1/models`` for the provider's model list: none beyond its own.
        self._json(200, {"models": [], "data": []})

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
        if not _is_responses(self.path):
            self._json(200, {})
            return
        item, usage = script.answer(body)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for data in _events(item, usage):
            self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


@contextmanager
def scripted_responses() -> Iterator[tuple[str, Script]]:
    """A running server: its base URL (``http://127.0.0.1:PORT/v1``) and its script."""
    script = Script()
    with serving(_Handler, script) as port:
        yield f"http://127.0.0.1:{port}/v1", script
