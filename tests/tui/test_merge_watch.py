"""The console that approved a merge hears its result once, whether the host's decision reaches
it before or after the answer to its own approval; other runs' merges are not its to tell."""

from __future__ import annotations

from typing import Any

from jarvis_tui.merge_watch import KEPT, MergeWatch


def move(run_id: str, action: str, reason: str) -> dict[str, Any]:
    return {"kind": "transition", "run_id": run_id,
            "payload": {"action": action, "reason": reason}}  # fmt: skip


def test_a_merge_asked_then_decided_is_told_once() -> None:
    watch = MergeWatch()
    assert watch.ask("r1") is None
    assert watch.decided([move("r1", "request_merge", "")]) == []
    (told,) = watch.decided([move("r1", "merge", "main fast-forwarded to abc.")])
    run_id, toast, merged = told
    assert (run_id, toast.title, toast.message, merged) == (
        "r1", "Run r1 merged", "main fast-forwarded to abc.", True)  # fmt: skip
    assert watch.decided([move("r1", "merge", "again")]) == []


def test_a_decision_read_before_the_approvals_answer_is_told_when_it_comes() -> None:
    watch = MergeWatch()
    assert watch.decided([move("r1", "refuse_merge", "a\x1b[2Jconflict")]) == []
    early = watch.ask("r1")
    assert early is not None
    run_id, toast, merged = early
    assert (run_id, toast.title, merged) == ("r1", "Run r1: merge refused", False)
    assert "\x1b" not in toast.message
    assert watch.ask("r1") is None  # told once: now it waits for a decision to come


def test_decisions_nobody_asked_about_are_kept_only_for_a_while() -> None:
    watch = MergeWatch()
    watch.decided([move(f"r{n}", "merge", "") for n in range(KEPT + 50)])
    assert watch.ask("r0") is None  # the oldest went
    assert watch.ask(f"r{KEPT + 49}") is not None
