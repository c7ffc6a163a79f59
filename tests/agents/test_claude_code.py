"""Claude Code's stream-json, from recorded-shaped fixtures (see fixtures/claude_code/*.md)."""

from __future__ import annotations

import json

import pytest

from core.agents.claude_code import ClaudeCodeAdapter
from core.agents.events import AgentEvent, total_usage
from tests.agents.helpers import CWD, FIXTURES, lines_of, run, triples

HERE = FIXTURES / "claude_code"
COMMIT = (
    'run: git add src/cli/runs.py tests/cli/test_runs_json.py && git commit -m "runs: --json '
    'prints the runs as JSON"'
)
MODEL = "claude-sonnet-4-5-20250929"


def test_a_successful_run_reads_searches_edits_tests_commits_and_finishes() -> None:
    adapter = ClaudeCodeAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "success.jsonl"))
    assert triples(events) == [
        ("message", f"session started: model {MODEL}, 14 tools", None),
        ("message", "I'll start by reading the runs command and its tests.", None),
        ("planning", "plan: 0/3 done; now: Read the runs command", "TodoWrite"),
        ("reading", "read src/cli/runs.py", "Read"),
        ("searching", "search for 'def format_runs' in src", "Grep"),
        (
            "thinking",
            "thinking: The table formatter is separate from the query, so a JSON branch can go "
            "before it.",
            None,
        ),
        ("editing", "edit src/cli/runs.py", "Edit"),
        ("editing", "write tests/cli/test_runs_json.py", "Write"),
        ("testing", "run: python -m pytest -q tests/cli", "Bash"),
        ("testing", "Bash failed: Exit code 1", "Bash"),
        ("editing", "edit src/cli/runs.py", "Edit"),
        ("testing", "run: python -m pytest -q tests/cli", "Bash"),
        ("committing", COMMIT, "Bash"),
        (
            "message",
            "Done. `jarvis runs --json` prints the runs as a JSON list (an empty list when there "
            "are none), and tests/cli/test_runs_json.py covers it.",
            None,
        ),
        ("done", "finished after 12 turns", None),
    ]
    assert events[9].error == "Exit code 1"
    session = "8f2c1d3e-5b7a-4c9e-a1f0-3d2b6e8c4a71"
    assert adapter.session_id == session
    assert {e.session_id for e in events} == {session}
    # The result's usage, cached input included: 38 + 14,523 written + 201,774 read.
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (216_335, 2_841)
    assert adapter.usage.cost_usd == pytest.approx(0.18734)
    assert total_usage(events) == adapter.usage
    # The calls' tokens came with the calls; the result added what they did not show.
    streamed = [e for e in events[:-1] if e.tokens_in]
    assert streamed and streamed[0].tokens_in == 3 + 3_340 + 11_200
    done = events[-1]
    assert done.cost_usd == pytest.approx(0.18734)
    assert sum(e.tokens_in or 0 for e in streamed) + (done.tokens_in or 0) == 216_335
    assert done.final_text is not None and done.final_text.startswith("Done. `jarvis runs")
    block = done.final_text.split("<completion>")[1].split("</completion>")[0]
    assert json.loads(block)["commit_sha"].startswith("9b1e2f4")
    assert all(e.final_text is None for e in events[:-1])


def test_an_error_run_reports_failed_tools_and_ends_as_an_error() -> None:
    adapter = ClaudeCodeAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "error.jsonl"))
    assert triples(events) == [
        ("message", f"session started: model {MODEL}, 14 tools", None),
        ("message", "Running the test suite first to see what fails.", None),
        ("testing", "run: npm test", "Bash"),
        ("testing", "Bash failed: Exit code 127", "Bash"),
        ("reading", "read jest.config.js", "Read"),
        ("reading", "Read failed: File does not exist.", "Read"),
        ("error", "API error: rate_limit", None),
        ("message", "API Error: Rate limit reached for requests", None),
        ("error", "stopped (error_max_turns)", None),
    ]
    last = events[-1]
    assert (last.error, last.final_text) == ("error_max_turns", None)
    assert adapter.session_id == "c41d9e0a-7f3b-4e2d-8c6a-5b9f1e0d2c34"
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (12 + 3_110 + 22_580, 78)
    assert adapter.usage.cost_usd == pytest.approx(0.0412)
    assert total_usage(events) == adapter.usage


def test_a_malformed_run_reports_each_unreadable_line_once_and_no_result() -> None:
    adapter = ClaudeCodeAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "malformed.jsonl"))
    assert [e.phase for e in events[:2]] == ["message", "reading"]
    problems = [e.error for e in events[2:]]
    assert problems == [
        "not a JSON object",
        "not JSON, or cut short",
        "not UTF-8",
        "unexpected shape at assistant.message",
        "unexpected shape at assistant.message.content",
        "not a JSON object",
        "no type",
        "not a JSON object",
        "not JSON, or cut short",
        "no result",
    ]
    escapes = events[9].summary
    assert "WARNING" in escapes and "owned" not in escapes and "\\x07" in escapes
    assert adapter.usage == total_usage(events)
    # No result came, but the call its stream showed was made: its tokens count (no cost).
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (3 + 2_900 + 9_800, 40)
    assert adapter.usage.cost_usd is None


def test_an_api_failure_arrives_as_a_success_subtype_with_is_error() -> None:
    # The SDK's _error_result_text: such a result carries its prose in `result`.
    line = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "API Error: 529 Overloaded",
        "errors": [],
        "num_turns": 1,
        "session_id": "s-1",
    }
    adapter = ClaudeCodeAdapter()
    events = adapter.parse_line(json.dumps(line).encode())
    assert triples(events) == [("error", "stopped (success): API Error: 529 Overloaded", None)]
    assert events[0].error == "API Error: 529 Overloaded"
    assert adapter.finish() == []


def test_errors_listed_by_the_result_are_its_reason() -> None:
    line = {"type": "result", "subtype": "error_during_execution", "is_error": True}
    line["errors"] = ["Tool execution failed: permission denied", "Unable to write"]
    events = ClaudeCodeAdapter().parse_line(json.dumps(line).encode())
    assert events[0].summary == (
        "stopped (error_during_execution): Tool execution failed: permission denied; "
        "Unable to write"
    )


def test_running_totals_become_increments_across_results() -> None:
    # With a stdin stream, each turn ends with a result; their figures are running totals.
    adapter = ClaudeCodeAdapter()
    events = []
    for tokens, cost in ((100, 0.01), (250, 0.025)):
        line = {"type": "result", "subtype": "success", "is_error": False, "result": "ok"}
        line |= {"usage": {"input_tokens": tokens, "output_tokens": 10}, "total_cost_usd": cost}
        events += adapter.parse_line(json.dumps(line).encode())
    assert [e.tokens_in for e in events] == [100, 150]
    assert [e.tokens_out for e in events] == [10, None]
    assert [e.cost_usd for e in events] == [0.01, pytest.approx(0.015)]
    assert adapter.usage.tokens_in == 250


def test_a_result_without_usage_does_not_restart_the_totals() -> None:
    adapter = ClaudeCodeAdapter()
    for usage in ({"input_tokens": 100}, None, {"input_tokens": 160}):
        line = {"type": "result", "subtype": "success", "is_error": False, "usage": usage}
        adapter.parse_line(json.dumps(line).encode())
    assert adapter.usage.tokens_in == 160


def test_argv_is_print_mode_with_the_prompt_after_the_options() -> None:
    adapter = ClaudeCodeAdapter(extra_args=["--permission-mode", "acceptEdits"])
    assert adapter.argv(["claude"], "--fix it", model="opus", session_id="s-1") == [
        "claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model=opus",
        "--resume=s-1",
        "--permission-mode",
        "acceptEdits",
        "--",
        "--fix it",
    ]
    assert ClaudeCodeAdapter().argv(["npx", "claude"], "go")[-3:] == ["--verbose", "--", "go"]


def test_a_prompt_starting_with_a_slash_is_not_given_as_a_command() -> None:
    # `claude -p "/docs first"` answers "Unknown command: /docs" without asking the model; a
    # leading space makes it a message (tests/host/test_real_agent.py runs the real CLI).
    prompt = ClaudeCodeAdapter().argv(["claude"], "/docs first: name the helper")[-1]
    assert prompt == " /docs first: name the helper"
    assert ClaudeCodeAdapter().argv(["claude"], "docs/ first")[-1] == "docs/ first"


def test_a_call_s_usage_counts_once_as_its_lines_report_it_and_the_result_tops_it_up() -> None:
    adapter = ClaudeCodeAdapter()

    def assistant(call: str, tokens_in: int, tokens_out: int, text: str) -> list[AgentEvent]:
        message = {"id": call, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                   "content": [{"type": "text", "text": text}]}  # fmt: skip
        return adapter.parse_line(json.dumps({"type": "assistant", "message": message}).encode())

    events = assistant("msg_1", 1000, 1, "Reading.")  # streamed: output so far
    events += assistant("msg_1", 1000, 80, "Reading more.")  # the same call, its final count
    events += assistant("msg_2", 1200, 50, "Done.")
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (2200, 130)
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Done.",
        "total_cost_usd": 0.02,
        "usage": {"input_tokens": 2230, "output_tokens": 135},
    }
    events += adapter.parse_line(json.dumps(result).encode())  # fmt: skip
    # The result's totals stand (a title call the stream never showed is in them), once.
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (2230, 135)
    assert [e.tokens_in for e in events] == [1000, None, 1200, 30]
    assert total_usage(events) == adapter.usage
