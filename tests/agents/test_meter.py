"""The usage meter in front of a model service, and what an attempt keeps across its turns:
every answer passes through unchanged and its usage is counted exactly, streamed or not."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.agents.attempt import Attempt, service_base
from core.agents.events import Usage
from core.agents.meter import MAX_PARSED_BYTES, UsageMeter, _Reading
from tests.agents.scripted_chat import Script, scripted_chat


@pytest.fixture
def served() -> Iterator[tuple[str, Script]]:
    with scripted_chat() as pair:
        yield pair


def post(url: str, doc: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(
        url, data=json.dumps(doc).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": "Bearer test-key"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read(), dict(refused.headers)


SIDE = {"model": "m", "messages": [{"role": "system", "content": "Write a commit message."}]}


def test_every_answer_passes_through_and_its_usage_is_counted(
    served: tuple[str, Script],
) -> None:
    url, script = served
    meter = UsageMeter(url)
    try:
        plain = post(meter.url + "/chat/completions", SIDE)
        streamed_doc = {**SIDE, "stream": True, "stream_options": {"include_usage": True}}
        streamed = post(meter.url + "/chat/completions", streamed_doc)
        unasked = post(meter.url + "/chat/completions", {**SIDE, "stream": True})
        missing = post(meter.url + "/no-such-endpoint", SIDE)
        # Straight from the service, for comparison (ids and times aside).
        direct = post(url + "/chat/completions", SIDE)
    finally:
        meter.close()
    assert plain[0] == 200 and json.loads(plain[1])["choices"] == json.loads(direct[1])["choices"]
    assert streamed[0] == 200 and streamed[1].endswith(b"data: [DONE]\n\n")
    assert b'"usage"' in streamed[1] and b'"usage"' not in unasked[1]
    assert missing[0] == 404
    # Three answers served through the meter reported usage: two, and a stream that did not
    # ask for any. The meter counted exactly what they reported.
    assert meter.calls == 2
    served_in = sum(c.tokens_in for c in script.completions[:3])
    served_out = sum(c.tokens_out for c in script.completions[:3])
    assert meter.usage == Usage(served_in, served_out, None) and served_in > 0
    # The agent's own headers went through as they were.
    assert {c.authorization for c in script.completions} == {"Bearer test-key"}


def test_a_service_that_does_not_answer_is_a_clear_error() -> None:
    meter = UsageMeter("http://127.0.0.1:9/v1")  # the discard port: nothing listens
    try:
        status, body, _ = post(meter.url + "/chat/completions", SIDE)
    finally:
        meter.close()
    assert status == 502 and b"did not answer" in body and meter.calls == 0


def test_an_answer_too_large_to_read_is_passed_on_uncounted() -> None:
    reading = _Reading(streamed=False)
    reading.feed(b"{" + b" " * (MAX_PARSED_BYTES + 1))
    reading.feed(b'"usage": {"prompt_tokens": 5, "completion_tokens": 1}}')
    assert reading.end() is None
    stream = _Reading(streamed=True)
    stream.feed(b"data: " + b"x" * (MAX_PARSED_BYTES + 1))  # one overlong line…
    stream.feed(b'\ndata: {"usage": {"prompt_tokens": 7, "completion_tokens": 2}}\n\n')
    assert stream.end() == (7, 2)  # …and the lines after it are still read


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        ([], {"OPENAI_API_BASE": "http://127.0.0.1:1/v1"}, "http://127.0.0.1:1/v1"),
        (["--openai-api-base", "https://a.test/v1"], {"OPENAI_API_BASE": "http://b"}, "https://a.test/v1"),
        (["--openai-api-base=https://a.test", "--openai-api-base=https://c.test"], {}, "https://c.test"),
        ([], {"AIDER_OPENAI_API_BASE": "https://d.test", "OPENAI_BASE_URL": "https://e"}, "https://d.test"),
        ([], {"OPENAI_API_BASE": "file:///etc/passwd"}, None),
        ([], {}, None),
    ],
)  # fmt: skip
def test_the_service_base_is_the_one_the_profile_points_aider_at(
    args: list[str], env: dict[str, str], expected: str | None
) -> None:
    assert service_base("aider", args, env) == expected
    assert service_base("opencode", args, env) is None


def test_an_attempt_removes_only_what_the_agent_left_for_itself(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".aider.tags.cache.v3").mkdir()  # there before: the repository's own
    attempt = Attempt("aider", checkout, [], {"PWD": "/elsewhere"})
    try:
        state = Path(attempt.state_dir)
        assert state.is_dir() and checkout not in state.parents
        assert attempt.env()["PWD"] == str(checkout) and attempt.meter is None
        (checkout / ".aider.tags.cache.v4").mkdir()
        (checkout / ".aider.tags.cache.v4" / "cache.db").write_text("x")
        assert attempt.tidy() == [".aider.tags.cache.v4"]
        assert sorted(os.listdir(checkout)) == [".aider.tags.cache.v3"]
    finally:
        attempt.close()
    assert not state.exists()
