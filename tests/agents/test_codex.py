"""Codex's exec --json events, from recorded-shaped fixtures (see fixtures/codex/*.md)."""

from __future__ import annotations

import json

from core.agents.codex import CodexAdapter
from core.agents.events import total_usage
from tests.agents.helpers import CWD, FIXTURES, lines_of, run, triples

HERE = FIXTURES / "codex"
COMMIT = (
    'git add src/cli/runs.py tests/cli/test_runs_json.py && git commit -m "runs: --json prints '
    'the runs as JSON"'
)
TOOL = "command_execution"


def test_a_successful_run_reads_searches_edits_tests_commits_and_finishes() -> None:
    adapter = CodexAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "success.jsonl"))
    assert triples(events) == [
        ("message", "session started", None),
        ("thinking", "thinking: Looking at the runs command", None),
        ("planning", "plan: 0/3 done; next: Read the runs command", "todo_list"),
        ("reading", "run: sed -n 1,120p src/cli/runs.py", TOOL),
        ("reading", "ran (exit 0): sed -n 1,120p src/cli/runs.py", TOOL),
        ("searching", 'run: rg -n "def format_runs" src', TOOL),
        ("searching", 'ran (exit 0): rg -n "def format_runs" src', TOOL),
        ("editing", "edit src/cli/runs.py, add tests/cli/test_runs_json.py", "file_change"),
        ("planning", "plan: 2/3 done; next: Test and commit", "todo_list"),
        ("testing", "run: python -m pytest -q tests/cli", TOOL),
        ("testing", "failed (exit 1): python -m pytest -q tests/cli", TOOL),
        ("editing", "edit src/cli/runs.py", "file_change"),
        ("testing", "run: python -m pytest -q tests/cli", TOOL),
        ("testing", "ran (exit 0): python -m pytest -q tests/cli", TOOL),
        ("committing", f"run: {COMMIT}", TOOL),
        ("committing", f"ran (exit 0): {COMMIT}", TOOL),
        (
            "message",
            "Done. `jarvis runs --json` prints the runs as a JSON list (an empty list when there "
            "are none), and tests/cli/test_runs_json.py covers it.",
            None,
        ),
        ("done", "turn completed", None),
    ]
    assert events[10].error == "exit 1"
    thread = "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert adapter.session_id == thread
    assert {e.session_id for e in events} == {thread}
    # input_tokens already counts the cached ones; codex reports no cost.
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (84_213, 3_120)
    assert adapter.usage.cost_usd is None
    assert total_usage(events) == adapter.usage
    done = events[-1]
    assert (done.tokens_in, done.tokens_out, done.cost_usd) == (84_213, 3_120, None)
    assert done.final_text is not None and "<completion>" in done.final_text


def test_an_error_run_ends_with_the_failed_turn() -> None:
    adapter = CodexAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "error.jsonl"))
    reconnect = (
        "Reconnecting... 1/5 (stream disconnected before completion: error sending request for "
        "url (https://api.openai.com/v1/responses))"
    )
    failed = (
        "stream disconnected before completion: error sending request for url "
        "(https://api.openai.com/v1/responses)"
    )
    assert triples(events) == [
        ("message", "session started", None),
        ("thinking", "thinking: Checking the failing test", None),
        ("testing", "run: python -m pytest -q tests/cli", TOOL),
        ("testing", "declined: python -m pytest -q tests/cli", TOOL),
        ("tool", "github: search_issues", "github/search_issues"),
        (
            "tool",
            "github/search_issues failed: tool call timed out after 60s",
            "github/search_issues",
        ),
        ("error", f"error: {reconnect}", None),
        ("message", "warning: model rerouted: gpt-5-codex -> gpt-5 (HighRiskCyberActivity)", None),
        ("error", f"turn failed: {failed}", None),
    ]
    assert events[-1].error == failed
    assert adapter.usage == total_usage(events) and adapter.usage.tokens_in == 0


def test_a_malformed_run_reports_each_unreadable_line() -> None:
    adapter = CodexAdapter(cwd=CWD)
    events = run(adapter, lines_of(HERE / "malformed.jsonl"))
    assert triples(events[:2]) == [
        ("message", "session started", None),
        ("reading", "run: ls", TOOL),
    ]
    assert [(e.phase, e.error) for e in events[2:]] == [
        ("error", "not a JSON object"),
        ("error", "not JSON, or cut short"),
        ("error", "unexpected shape at item.completed.item"),
        ("error", "unexpected shape at item.completed.item.text"),
        ("done", None),  # figures it cannot use are no figures; the turn still ended
        ("error", "not UTF-8"),
        ("error", "no type"),
        ("error", "not a JSON object"),
    ]
    assert adapter.usage == total_usage(events) and adapter.usage.tokens_in == 0


def test_the_first_format_spelled_item_type_and_assistant_message() -> None:
    # codex 0.4x: the format as first released (openai/codex pull request 4525's sample).
    adapter = CodexAdapter()
    item = {"id": "item_3", "item_type": "assistant_message", "text": "**Assigned Issues**"}
    line = {"type": "item.completed", "item": item}
    assert triples(adapter.parse_line(json.dumps(line).encode())) == [
        ("message", "**Assigned Issues**", None)
    ]


def test_usage_is_a_running_total_over_turns() -> None:
    adapter = CodexAdapter()
    events = []
    for total in (1_000, 2_500):
        line = {"type": "turn.completed", "usage": {"input_tokens": total, "output_tokens": 7}}
        events += adapter.parse_line(json.dumps(line).encode())
    assert [e.tokens_in for e in events] == [1_000, 1_500]
    assert adapter.usage.tokens_in == 2_500 == total_usage(events).tokens_in


def test_a_turn_without_usage_does_not_restart_the_totals() -> None:
    adapter = CodexAdapter()
    for usage in ({"input_tokens": 100}, {}, {"input_tokens": 130, "output_tokens": 4}):
        adapter.parse_line(json.dumps({"type": "turn.completed", "usage": usage}).encode())
    assert (adapter.usage.tokens_in, adapter.usage.tokens_out) == (130, 4)


def test_argv_new_and_resumed() -> None:
    adapter = CodexAdapter(extra_args=["--sandbox", "workspace-write"])
    assert adapter.argv(["codex"], "-fix", model="gpt-5-codex") == [
        "codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--model=gpt-5-codex",
        "--sandbox",
        "workspace-write",
        "--",
        "-fix",
    ]
    assert CodexAdapter().argv(["codex"], "go on", session_id="0199a213") == [
        "codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "resume",
        "--",
        "0199a213",
        "go on",
    ]


#: What codex 0.171.0 prints when its model is not in its own catalogue (a local model service's
#: name): a warning, and the run goes on.
UNKNOWN_MODEL = (
    "Model metadata for `scripted-model` not found. Defaulting to fallback metadata; this can "
    "degrade performance and cause issues."
)


def test_a_warning_item_is_shown_as_a_warning_not_stored_as_an_error() -> None:
    adapter = CodexAdapter()
    item = {"id": "item_0", "type": "error", "message": UNKNOWN_MODEL}
    line = json.dumps({"type": "item.completed", "item": item}).encode()
    (event,) = adapter.parse_line(line)
    assert (event.phase, event.error) == ("message", None)
    assert event.summary == f"warning: {UNKNOWN_MODEL}"


def turn_completed(tokens_in: int, tokens_out: int) -> bytes:
    usage = {"input_tokens": tokens_in, "cached_input_tokens": 0, "output_tokens": tokens_out}
    return json.dumps({"type": "turn.completed", "usage": usage}).encode()


def test_a_resumed_thread_counts_only_the_tokens_of_its_new_turn() -> None:
    # codex 0.171.0, as run live: the first process's turn used 4,500 tokens in, and the
    # resumed process's turn.completed says 6,000: the thread's total, not the turn's.
    first = CodexAdapter()
    first.parse_line(json.dumps({"type": "thread.started", "thread_id": "t-1"}).encode())
    first.parse_line(turn_completed(4_500, 270))
    resumed = CodexAdapter()
    resumed.resuming(first)
    events = resumed.parse_line(turn_completed(6_000, 360))
    assert (resumed.usage.tokens_in, resumed.usage.tokens_out) == (1_500, 90)
    assert total_usage(events) == resumed.usage
    assert first.usage.plus(resumed.usage).tokens_in == 6_000


def test_argv_never_stops_outside_a_git_repository() -> None:
    # A run on no configured repository gets an empty checkout: codex refuses to work in a
    # folder that is not a repository unless told it may.
    argv = CodexAdapter().argv(["codex"], "go", session_id="t-1")
    assert argv.index("--skip-git-repo-check") < argv.index("resume")


def test_a_live_turn_and_its_resumed_thread_as_codex_0_171_printed_them() -> None:
    first = CodexAdapter(cwd=CWD)
    events = run(first, lines_of(HERE / "live-turn.jsonl"))
    look = "git rev-parse --verify --quiet refs/heads/no-such-branch"
    commit = "git add -A && git commit -q -m 'Retry twice' && git rev-parse HEAD"
    assert triples(events)[:9] == [
        ("message", "session started", None),
        ("message", f"warning: {UNKNOWN_MODEL}", None),
        ("editing", "add src/retry.py", "file_change"),
        ("tool", f"run: {look}", TOOL),
        ("tool", f"failed (exit 1): {look}", TOOL),
        ("committing", f"run: {commit}", TOOL),
        ("committing", f"ran (exit 0): {commit}", TOOL),
        ("message", "Committed the change.", None),
        ("done", "turn completed", None),
    ]
    assert not [e for e in events if e.phase == "error"]
    assert events[4].error == "exit 1"
    assert (first.usage.tokens_in, first.usage.tokens_out) == (6_000, 360)
    resumed = CodexAdapter(cwd=CWD)
    resumed.resuming(first)
    later = run(resumed, lines_of(HERE / "live-resumed.jsonl"))
    assert resumed.session_id == first.session_id
    assert (resumed.usage.tokens_in, resumed.usage.tokens_out) == (1_500, 90)
    assert later[-1].final_text is not None and "<completion>" in later[-1].final_text
