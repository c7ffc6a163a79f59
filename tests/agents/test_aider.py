"""Aider's plain output, from recorded-shaped fixtures (see fixtures/aider/*.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.agents.aider import UNATTENDED, AiderAdapter
from core.agents.events import total_usage
from tests.agents.helpers import FIXTURES, lines_of, run, triples

HERE = FIXTURES / "aider"


def test_a_successful_run_edits_commits_tests_and_finishes() -> None:
    adapter = AiderAdapter()
    events = run(adapter, lines_of(HERE / "success.txt"))
    assert triples(events) == [
        ("message", "aider v0.86.1 started", None),
        ("reading", "added src/cli/runs.py to the chat", None),
        ("reading", "added tests/cli/test_runs.py to the chat (read-only)", None),
        ("message", "replied: I'll add a `--json` flag to `jarvis runs` and a test for it.", None),
        ("editing", "applied edit to src/cli/runs.py", "edit"),
        ("editing", "applied edit to tests/cli/test_runs_json.py", "edit"),
        ("committing", "commit 3f9c0a1: feat: Add --json flag to runs command", "git"),
        ("testing", "tests: 1 failed, 11 passed in 0.52s", None),
        (
            "message",
            "replied: The test fails because an empty store prints nothing. I'll print an empty "
            "list instead.",
            None,
        ),
        ("editing", "applied edit to src/cli/runs.py", "edit"),
        (
            "committing",
            "commit 9b1e2f4: fix: Print an empty JSON list when there are no runs",
            "git",
        ),
        ("testing", "tests: 12 passed in 0.47s", None),
        ("done", "finished: 3 edits, 2 commits", None),
    ]
    # Per reply: sent plus cache hits in, received out; the Cost line on its own rides on
    # the next event. The session cost is a running total.
    assert [
        (e.tokens_in, e.tokens_out, e.cost_usd) for e in events if e.tokens_in or e.cost_usd
    ] == [
        (12_000 + 8_400, 612, None),
        (None, None, 0.05),
        (14_000 + 10_000, 388, pytest.approx(0.01)),
    ]
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (44_400, 1_000)
    assert adapter.usage.cost_usd == pytest.approx(0.06)
    assert total_usage(events).tokens_in == 44_400
    assert adapter.session_id is None
    answer = events[-1].final_text
    assert answer is not None
    assert answer.startswith("The test fails because an empty store prints nothing.")
    assert answer.endswith("</completion>")
    block = answer.split("<completion>")[1].split("</completion>")[0]
    assert json.loads(block)["run_id"] == "task-42"
    assert "test session starts" not in answer and "Aider v" not in answer


def test_an_error_run_stops_on_the_last_error() -> None:
    adapter = AiderAdapter()
    events = run(adapter, lines_of(HERE / "error.txt"))
    auth = (
        'litellm.AuthenticationError: AnthropicException - {"type":"error","error":{"type":'
        '"authentication_error","message":"invalid x-api-key"}}'
    )
    friendly = "The API provider is not able to authenticate you. Check your API key."
    assert triples(events) == [
        ("message", "aider v0.86.1 started", None),
        ("reading", "added src/cli/runs.py to the chat", None),
        (
            "error",
            "litellm.InternalServerError: AnthropicException - Overloaded. Handle with "
            "`litellm.InternalServerError`.",
            None,
        ),
        ("error", "The API provider's servers are down or overloaded.", None),
        ("message", "retrying in 0.2 seconds", None),
        ("error", auth, None),
        ("error", friendly, None),
        ("error", f"stopped: {friendly}", None),
    ]
    assert events[-1].error == friendly and events[-1].final_text is None
    assert adapter.usage == total_usage(events) and adapter.usage.cost_usd is None


def test_a_malformed_run_recognises_what_it_can_and_has_no_complete_reply() -> None:
    adapter = AiderAdapter()
    events = run(adapter, lines_of(HERE / "malformed.txt"))
    assert triples(events) == [
        ("message", "aider v0.86.1 started", None),
        ("reading", "added src/cli/runs.py to the chat", None),
        ("editing", "applied edit to src/cli/runs.py", "edit"),  # colour codes dropped
        ("error", "aider printed no complete reply", None),
    ]
    partial = events[-1].final_text
    assert partial is not None and "a link in the reply" in partial and "\x1b" not in partial
    assert "Tokens: 12k sent, 1.1k cac" in partial  # the cut report is no report
    assert adapter.usage.tokens_in == 0


def test_an_error_before_a_later_reply_does_not_end_the_run() -> None:
    lines = [b"litellm.RateLimitError: slow down", b"Retrying in 0.5 seconds...", b"Fixed it."]
    lines.append(b"Tokens: 1.2k sent, 300 received. Cost: $0.0042 message, $0.0042 session.")
    events = run(AiderAdapter(), lines)
    assert triples(events)[-2:] == [
        ("message", "replied: Fixed it.", None),
        ("done", "finished: 0 edits, 0 commits", None),
    ]
    assert (events[-2].tokens_in, events[-2].tokens_out) == (1_200, 300)
    assert events[-2].cost_usd == pytest.approx(0.0042)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"Running pytest -q", ("testing", "run: pytest -q", "shell")),
        (b"Running git commit -am wip", ("committing", "run: git commit -am wip", "shell")),
        (
            b"Attempt to fix test errors? (Y)es/(N)o [Yes]: y",
            ("testing", "Attempt to fix test errors? yes", None),
        ),
        (
            b"Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: n",
            ("tool", "Run shell command? no", None),
        ),
        (
            b"Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a",
            ("reading", "Add file to the chat? all", None),
        ),
        (b"Creating empty file tests/new.py", ("editing", "created tests/new.py", "edit")),
        (
            b"Did not apply edit to src/a.py (--dry-run)",
            ("editing", "would edit src/a.py (dry run)", "edit"),
        ),
        (
            b"# 2 SEARCH/REPLACE blocks failed to match!",
            ("error", "# 2 SEARCH/REPLACE blocks failed to match!", None),
        ),
        (
            b"Unable to commit: nothing to commit",
            ("error", "Unable to commit: nothing to commit", None),
        ),
        (b"Ran 12 tests in 0.031s", ("testing", "tests: Ran 12 tests in 0.031s", None)),
    ],
)
def test_lines_aider_prints(line: bytes, expected: tuple[str, str, str | None]) -> None:
    assert triples(AiderAdapter().parse_line(line + b"\n")) == [expected]


def test_banner_lines_are_neither_events_nor_part_of_the_reply() -> None:
    adapter = AiderAdapter()
    banner = [
        b"Model: gpt-4o with whole edit format",
        b"Git repo: none",
        b"Warning: it's best to only add files that need changes to the chat.",
        b"https://aider.chat/docs/troubleshooting/edit-errors.html",
        b"Only reply.",
        b"Tokens: 10 sent, 2 received.",
    ]
    events = run(adapter, banner)
    assert triples(events) == [
        ("message", "replied: Only reply.", None),
        ("done", "finished: 0 edits, 0 commits", None),
    ]
    assert events[-1].final_text == "Only reply."


def test_long_lines_are_reply_text_whatever_they_start_with() -> None:
    # No pattern is tried on them: aider's own lines are short, and a long line of repeated
    # words is where a pattern could take its time.
    adapter = AiderAdapter()
    assert adapter.parse_line(b"Applied edit to " + b"x" * 10_000) == []
    assert adapter.parse_line(b"= " + b"passed " * 20_000) == []
    assert adapter.parse_line(b"Tokens: 1 sent, 1 received.")[0].summary.startswith("replied: Ap")


def test_argv_without_a_folder_of_its_own() -> None:
    adapter = AiderAdapter(extra_args=["--auto-test", "--test-cmd", "pytest -q"])
    assert adapter.argv(["aider"], "-v please", model="sonnet", session_id="any") == [
        "aider",
        "--message=-v please",
        *UNATTENDED,
        "--model=sonnet",
        "--auto-test",
        "--test-cmd",
        "pytest -q",
    ]
    assert adapter.session_id is None  # nothing to restore a chat from


def test_a_session_keeps_its_chat_and_prompt_outside_the_checkout(tmp_path: Path) -> None:
    first = AiderAdapter(extra_args=["--auto-test"])
    first.state_dir = str(tmp_path)
    argv = first.argv(["aider"], "Line one.\nLine two.", model="openai/m", session_id=None)
    session = first.session_id
    assert session is not None and session.startswith("aider-")
    files = {word.split("=", 1)[0]: word.split("=", 1)[1] for word in argv if "-file=" in word}
    assert files == {
        "--message-file": f"{tmp_path}/{session}.message.md",
        "--chat-history-file": f"{tmp_path}/{session}.chat.history.md",
        "--input-history-file": f"{tmp_path}/{session}.input.history",
    }
    assert Path(files["--message-file"]).read_text() == "Line one.\nLine two."
    assert "--restore-chat-history" not in argv and argv[-2:] == ["--model=openai/m", "--auto-test"]
    assert set(UNATTENDED) <= set(argv)
    # Every event names the session, so the runner can resume it with a steer.
    assert first.parse_line(b"Aider v0.86.2")[0].session_id == session

    steered = AiderAdapter()
    steered.state_dir = str(tmp_path)
    argv = steered.argv(["aider"], "/docs first", model=None, session_id=session)
    assert steered.session_id == session and "--restore-chat-history" in argv
    assert f"--chat-history-file={tmp_path}/{session}.chat.history.md" in argv
    # A leading / would be one of aider's commands (! a shell): it is sent as words.
    assert Path(tmp_path / f"{session}.message.md").read_text() == " /docs first"


@pytest.mark.parametrize("foreign", ["../../etc/passwd", "aider-../x", "ses_123", ""])
def test_a_session_it_did_not_name_starts_a_new_chat(tmp_path: Path, foreign: str) -> None:
    adapter = AiderAdapter()
    adapter.state_dir = str(tmp_path)
    argv = adapter.argv(["aider"], "go", session_id=foreign)
    assert adapter.session_id != foreign and "--restore-chat-history" not in argv
    assert sorted(p.parent for p in tmp_path.iterdir()) == [tmp_path]
