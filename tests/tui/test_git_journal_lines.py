"""Worktree and merge entries read as sentences in the progress stream, their git text inert."""

from __future__ import annotations

from jarvis_tui.widgets.progress_stream import entry_text


def line(kind: str, payload: dict[str, object]) -> str:
    entry = {"kind": kind, "payload": payload, "at": "2026-11-25T19:52:16.000Z", "actor": "host"}
    return entry_text(entry).plain


def test_a_worktree_made_and_removed() -> None:
    made = line("worktree", {"attempt": 2, "branch": "jarvis-x", "base": "main",
                             "start_commit": "0123456789abcdef0123"})  # fmt: skip
    assert made == "19:52:16 ⑂ worktree on jarvis-x from main at 0123456789ab (attempt 2)"
    gone = line("worktree", {"attempt": 1, "removed": True, "stash": "fedcba9876543210fedc"})
    assert gone == (
        "19:52:16 ⑂ worktree removed (the branch stays); uncommitted changes stashed as "
        "fedcba987654"
    )


def test_a_merge_says_what_was_done_and_escapes_what_git_said() -> None:
    text = line("merge", {"done": "fast_forward", "note": "main fast-forwarded\x1b[2J to abc."})
    assert text.startswith("19:52:16 ⑂ fast forward — main fast-forwarded")
    assert "\x1b" not in text
    assert text.endswith("approved by host")


def test_a_merge_asked_of_a_host_then_refused_says_who_and_why() -> None:
    asked = line("merge_requested", {"base": "main", "branch": "x", "host": "build\x1b[2J-01"})
    assert asked == "19:52:16 ⑂ merge into main requested  by host of host build\\x1b[2J-01"
    note = "jarvis-x does not merge cleanly into main: 1 file(s)"
    refused = line("merge", {"done": None, "refused": "merge_conflict", "host": "build-01",
                             "note": note})  # fmt: skip
    assert refused == (
        "19:52:16 ⑂ merge conflict — jarvis-x does not merge cleanly into main: 1 file(s)  "
        "approved by host on host build-01"
    )
