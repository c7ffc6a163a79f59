"""How tool calls and shell commands are classed, and how agent text becomes one safe line."""

from __future__ import annotations

import pytest

from core.agents.events import MAX_SUMMARY_CHARS, AgentEvent, Usage, one_line, total_usage
from core.agents.tool_calls import describe_tool, phase_of_command, phase_of_tool, unwrap_shell


@pytest.mark.parametrize(
    ("name", "tool_input", "phase"),
    [
        ("Read", {"file_path": "a.py"}, "reading"),
        ("LS", {"path": "."}, "reading"),
        ("read", {"filePath": "a.py"}, "reading"),
        ("Grep", {"pattern": "x"}, "searching"),
        ("Glob", {"pattern": "**/*.py"}, "searching"),
        ("WebSearch", {"query": "x"}, "searching"),
        ("Edit", {}, "editing"),
        ("MultiEdit", {}, "editing"),
        ("Write", {}, "editing"),
        ("apply_patch", {}, "editing"),
        ("file_change", None, "editing"),
        ("TodoWrite", {"todos": []}, "planning"),
        ("Bash", {"command": "pytest -q"}, "testing"),
        ("Bash", {"command": "git commit -m 'x'"}, "committing"),
        ("Bash", {"command": "echo hi"}, "tool"),
        ("bash", {"command": ["npm", "test"]}, "testing"),
        ("Bash", {"command": 42}, "tool"),
        ("Bash", "not a mapping", "tool"),
        ("Task", {"description": "x"}, "tool"),
        ("mcp__github__create_issue", {}, "tool"),
    ],
)
def test_phase_of_tool(name: str, tool_input: object, phase: str) -> None:
    assert phase_of_tool(name, tool_input) == phase


@pytest.mark.parametrize(
    ("command", "phase"),
    [
        ("pytest -q", "testing"),
        ("python -m pytest tests", "testing"),
        ("python3 -m unittest discover", "testing"),
        ("uv run pytest -x", "testing"),
        ("FOO=1 timeout 60 pytest", "testing"),
        ("npm test", "testing"),
        ("npm run test:unit", "testing"),
        ("yarn test --watch=false", "testing"),
        ("pnpm vitest run", "tool"),  # pnpm's own subcommand is not "test"
        ("npx vitest run", "testing"),
        ("go test ./...", "testing"),
        ("cargo test --all", "testing"),
        ("cargo nextest run", "testing"),
        ("make check", "testing"),
        ("bundle exec rspec", "testing"),
        ("cd app && npm test", "testing"),
        ("git commit -am 'fix'", "committing"),
        ("git -C repo -c user.name=x commit -m 'a && b'", "committing"),
        ("pytest -q && git add -A && git commit -m done", "committing"),
        ("bash -lc 'pytest -q'", "testing"),
        ('/bin/bash -lc "git commit -m x"', "committing"),
        ("git status", "reading"),
        ("git diff HEAD~1", "reading"),
        ("git push origin main", "tool"),
        ("git grep -n foo", "searching"),
        ("rg -n foo src", "searching"),
        ("cat a.py | grep x", "searching"),
        ("sed -n 1,20p a.py", "reading"),
        ("sed -i s/a/b/ a.py", "editing"),
        ("ls -la", "reading"),
        ("echo 'unbalanced", "tool"),
        ("", "tool"),
        ("pytest" + " -k x" * 5000, "testing"),  # only the first 4,096 characters are read
    ],
)
def test_phase_of_command(command: str, phase: str) -> None:
    assert phase_of_command(command) == phase


def test_unwrap_shell_shows_the_script_codex_wraps() -> None:
    assert unwrap_shell("bash -lc 'sed -n 1,20p a.py'") == "sed -n 1,20p a.py"
    assert unwrap_shell("/usr/bin/zsh -c ls") == "ls"
    assert unwrap_shell("pytest -q") == "pytest -q"
    assert unwrap_shell("bash --login x") == "bash --login x"


@pytest.mark.parametrize(
    ("name", "tool_input", "line"),
    [
        ("Read", {"file_path": "/w/src/a.py"}, "read src/a.py"),
        ("Read", {"file_path": "/elsewhere/a.py"}, "read /elsewhere/a.py"),
        ("Read", {}, "read a file"),
        ("LS", {}, "list ."),
        ("Grep", {"pattern": "def x", "path": "/w/src"}, "search for 'def x' in src"),
        ("Glob", {"pattern": "**/*.py"}, "find files **/*.py"),
        ("MultiEdit", {"file_path": "/w/a.py", "edits": [{}, {}]}, "edit a.py (2 changes)"),
        ("Write", {"file_path": "/w/b.py"}, "write b.py"),
        (
            "apply_patch",
            {"patchText": "*** Begin Patch\n*** Update File: a.py\n*** Add File: b.py\n"},
            "patch a.py, b.py",
        ),
        ("Bash", {"command": "bash -lc 'pytest -q'"}, "run: pytest -q"),
        ("Task", {"description": "Find the flaky test"}, "delegate: Find the flaky test"),
        ("Task", {}, "delegate"),
        ("WebFetch", {"url": "https://example.com/x"}, "fetch https://example.com/x"),
        ("mcp__github__create_issue", {"title": "x"}, "mcp__github__create_issue"),
        (
            "TodoWrite",
            {"todos": [{"content": "a", "status": "completed"}, {"content": "b"}, "junk"]},
            "plan: 1/2 done; next: b",
        ),
    ],
)
def test_describe_tool(name: str, tool_input: object, line: str) -> None:
    assert describe_tool(name, tool_input, "/w") == line


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("plain text", "plain text"),
        ("  spaced   out \n\n next\tline  ", "spaced out next line"),
        ("\x1b[31mred\x1b[0m and \x1b]0;title\x07 gone", "red and gone"),
        ("bell\x07 nul\x00 del\x7f", "bell\\x07 nul\\x00 del\\x7f"),
        ("right\u202eto left", "right\\u202eto left"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("one-byte CSI \x9b2J here", "one-byte CSI here"),
        ("\x1b[", ""),
        ("line\u2028separator", "line separator"),
    ],
)
def test_one_line(text: str, line: str) -> None:
    assert one_line(text) == line


@pytest.mark.parametrize(
    "split",
    ["AKIAIOSF\x07ODNN7EXAMPLE", "AKIAIOSF\u200bODNN7EXAMPLE", "AKIAIOSF\x1b[0mODNN7EXAMPLE"],
)
def test_one_line_masks_a_key_before_escaping_what_splits_it(split: str) -> None:
    # Escaped first, the bell would be four characters of text inside the key, which no scan
    # after it reads as a key.
    assert one_line(f"export {split}") == "export AKIA****"


def test_one_line_masks_a_key_before_cutting_it() -> None:
    line = one_line("x" * 190 + " AKIAIOSFODNN7EXAMPLE", 200)
    assert "IOSF" not in line and line.endswith("AKIA****")


def test_one_line_is_cut_and_reads_only_a_bounded_prefix() -> None:
    long = "word " * 1_000_000
    cut = one_line(long)
    assert len(cut) == MAX_SUMMARY_CHARS and cut.endswith("…")
    assert one_line("é" * 1000, 10) == "é" * 9 + "…"


def test_usage_adds_events_and_totals() -> None:
    events = [
        AgentEvent("message", "a", tokens_in=10, tokens_out=2),
        AgentEvent("message", "b"),
        AgentEvent("done", "c", tokens_in=5, cost_usd=0.25),
    ]
    assert total_usage(events) == Usage(15, 2, 0.25)
    assert total_usage(events[:2]) == Usage(15 - 5, 2, None)
    assert Usage(1, 1, None).plus(Usage(1, 1, 0.5)) == Usage(2, 2, 0.5)
    assert total_usage([]) == Usage()
