"""OpenCode's run --format json events, from recorded-shaped fixtures (fixtures/opencode/*.md)."""

from __future__ import annotations

import json

import pytest

from core.agents.events import total_usage
from core.agents.opencode import OpenCodeAdapter
from tests.agents.helpers import CWD, FIXTURES, lines_of, run, triples

HERE = FIXTURES / "opencode"
COMMIT = (
    'run: git add src/cli/runs.py tests/cli/test_runs_json.py && git commit -m "runs: --json '
    'prints the runs as JSON"'
)


def test_a_successful_run_reads_searches_edits_tests_commits_and_finishes() -> None:
    adapter = OpenCodeAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "success.jsonl"))
    assert triples(events) == [
        ("message", "I'll read the runs command first.", None),
        ("planning", "plan: 0/3 done; now: Read the runs command", "todowrite"),
        ("reading", "read src/cli/runs.py", "read"),
        ("searching", "search for 'def format_runs' in src", "grep"),
        ("editing", "failed: edit src/cli/runs.py: Error: oldString not found in content", "edit"),
        ("editing", "edit src/cli/runs.py", "edit"),
        ("editing", "write tests/cli/test_runs_json.py", "write"),
        ("testing", "run: python -m pytest -q tests/cli", "bash"),
        ("committing", COMMIT, "bash"),
        (
            "message",
            "Done. `jarvis runs --json` prints the runs as a JSON list (an empty list when there "
            "are none), and tests/cli/test_runs_json.py covers it.",
            None,
        ),
        ("done", "finished", None),
    ]
    session = "ses_6a1f0c2e3ffeQ1r8bXo2dKp4Lm"
    assert adapter.session_id == session and {e.session_id for e in events} == {session}
    # Each step's own figures, cache reads and writes counted as input, reasoning as output.
    steps = [(1520 + 10240, 210), (2310 + 11800, 640 + 120), (980 + 12950, 95), (1210 + 13400, 388)]
    assert adapter.usage.tokens_in == sum(i for i, _ in steps) == 54_410
    assert adapter.usage.tokens_out == sum(o for _, o in steps) == 1_453
    assert adapter.usage.cost_usd == pytest.approx(0.0123 + 0.0201 + 0.0087 + 0.0154)
    assert total_usage(events).tokens_in == adapter.usage.tokens_in
    assert total_usage(events).cost_usd == pytest.approx(adapter.usage.cost_usd)
    # A step's usage rides on the first event after it; the last step's on the end.
    assert [(e.tokens_in, e.tokens_out) for e in events if e.tokens_in] == steps
    done = events[-1]
    assert done.final_text is not None and done.final_text.startswith("Done.")
    assert "<completion>" in done.final_text
    assert events[4].error == "Error: oldString not found in content"


def test_an_error_run_ends_as_an_error_even_after_done() -> None:
    adapter = OpenCodeAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "error.jsonl"))
    assert triples(events) == [
        ("message", "Let me run the tests.", None),
        (
            "testing",
            "failed: run: npm test: Error: The user rejected permission to use this specific "
            "tool call.",
            "bash",
        ),
        ("error", "error: Overloaded", None),
        ("error", "finished with an error: Overloaded", None),
    ]
    assert events[-1].error == "Overloaded"
    assert adapter.session_id == "ses_7b2e1d0c9ffaR2s9cYp3eLq5Mn"
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (6_000, 60)
    assert adapter.usage.cost_usd == pytest.approx(0.0042)


def test_a_malformed_run_reports_each_unreadable_line_and_no_result() -> None:
    adapter = OpenCodeAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "malformed.jsonl"))
    assert triples(events[:1]) == [("reading", "read README.md", "read")]
    assert [e.error for e in events[1:]] == [
        "not JSON, or cut short",
        "not a JSON object",
        "unexpected shape at tool_use.part.state",
        "unexpected shape at tool_use.part",
        "not UTF-8",
        "not JSON, or cut short",
        "no result",
    ]
    assert "\x1b" not in events[2].summary and "Thinking..." in events[2].summary
    assert adapter.usage.tokens_in == 0 and adapter.usage.cost_usd is None


def test_a_release_without_done_ends_on_a_stopped_step() -> None:
    adapter = OpenCodeAdapter()
    lines = [
        {"type": "text", "sessionID": "s", "part": {"type": "text", "text": "All done."}},
        {
            "type": "step_finish",
            "sessionID": "s",
            "part": {"reason": "stop", "cost": 0.001, "tokens": {"input": 5, "output": 2}},
        },
    ]
    events = run(adapter, [json.dumps(line).encode() for line in lines])
    assert triples(events) == [("message", "All done.", None), ("done", "finished", None)]
    assert events[-1].final_text == "All done."
    assert (events[-1].tokens_in, events[-1].tokens_out) == (5, 2)


def test_refused_permissions_are_named_when_the_run_ends() -> None:
    adapter = OpenCodeAdapter()
    line = {"type": "done", "sessionID": "s", "reason": "idle", "rejected": ["edit", "bash"]}
    events = adapter.parse_line(json.dumps(line).encode())
    assert triples(events) == [("done", "finished; permissions refused: edit, bash", None)]


def test_argv() -> None:
    adapter = OpenCodeAdapter(extra_args=["--agent", "build"])
    assert adapter.argv(
        ["opencode"], "-x", model="anthropic/claude-sonnet-4-5", session_id="ses_1"
    ) == [
        "opencode",
        "run",
        "--format",
        "json",
        "--title=",
        "--model=anthropic/claude-sonnet-4-5",
        "--session=ses_1",
        "--agent",
        "build",
    ]


def test_a_bash_call_that_exits_non_zero_is_a_failed_call() -> None:
    # Recorded from opencode 1.18.33: a command's exit code is in state.metadata.exit, and the
    # tool part itself is "completed" whatever the code.
    adapter = OpenCodeAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "live-bash-exit.jsonl"))
    failing = "run: git show-ref --verify refs/heads/no-such-branch"
    assert triples(events) == [
        ("editing", "write src/retry.py", "write"),
        (
            "tool",
            f"failed: {failing}: exit code 128: fatal: 'refs/heads/no-such-branch' - not a "
            "valid ref",
            "bash",
        ),  # fmt: skip
        (
            "committing",
            "run: git add -A && git commit -q -m 'Retry twice' && git rev-parse HEAD",
            "bash",
        ),  # fmt: skip
        ("message", "Committed the change.", None),
        ("done", "finished", None),
    ]
    assert events[1].error == "exit code 128: fatal: 'refs/heads/no-such-branch' - not a valid ref"
    assert events[2].error is None


def test_a_run_that_priced_nothing_reports_no_cost() -> None:
    # A model whose price OpenCode's configuration does not give costs 0 on every step: that
    # is no cost reported, which Jarvis then computes from its own price table.
    adapter = OpenCodeAdapter(cwd=CWD)
    run(adapter, lines_of(HERE / "live-bash-exit.jsonl"))
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (4 * 1200, 4 * 80)
    assert adapter.usage.cost_usd is None


def test_the_prompt_goes_on_stdin_and_the_title_is_not_asked_of_the_model() -> None:
    # `run` joins its message words with spaces and wraps any word holding one in quotes,
    # escaping its own quotes; a word yargs takes for a number stops it. On stdin the message
    # is taken as it is. `--title=` names the session after the prompt, so OpenCode makes no
    # model call of its own to title it (a call whose tokens it reports nowhere).
    adapter = OpenCodeAdapter()
    assert adapter.prompt_on_stdin
    argv = adapter.argv(["opencode"], 'Say "hi" 2', model="p/m", session_id=None)
    assert argv == ["opencode", "run", "--format", "json", "--title=", "--model=p/m"]
