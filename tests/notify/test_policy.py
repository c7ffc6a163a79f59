"""The notification policy: one notice per run that starts needing a human, bursts collapsed,
floods held to a handful. Pure: the tests give the time."""

from __future__ import annotations

from typing import Any

from core.lifecycle import MergeState, RunState, VerificationState
from core.notify.policy import MOST, SETTLE_S, WINDOW_S, Entered, NotifyPolicy, entered
from core.notify.text import safe_line

FAILED = RunState.FAILED
REVIEW = RunState.REVIEW_REQUESTED


def _transition(run_id: str, frm: str, to: str, **more: Any) -> dict[str, Any]:
    return {"run_id": run_id, "kind": "transition", "payload": {"from": frm, "to": to, **more}}


def test_only_moves_into_a_stage_needing_a_human_are_noted() -> None:
    entries = [
        _transition("a", "queued", "running"),
        _transition("b", "running", "failed", reason="worker exited 3"),
        {"run_id": "c", "kind": "progress", "payload": {"summary": "failed"}},
        _transition("d", "running", "running", verification_to="awaiting_approval"),
        _transition("e", "review_requested", "review_requested", merge_from="merging"),
        _transition("f", "review_requested", "review_requested", merge_to="merging"),
        _transition("g", "running", "nonsense"),
        {"run_id": "h", "kind": "transition", "payload": "not a mapping"},
        _transition("i", "failed", "queued"),
    ]
    assert entered(entries) == [
        Entered("b", FAILED, "worker exited 3"),
        Entered("d", VerificationState.AWAITING_APPROVAL),
        Entered("e", REVIEW),  # a merge refused: back to the operator
    ]
    assert MergeState.MERGING.value == "merging"  # `f` moved into a stage a host works on


def test_one_run_is_one_notice_after_the_settle_naming_it_and_why() -> None:
    policy = NotifyPolicy()
    policy.note([Entered("r-1", FAILED, "gates failed: tests")], now=100.0)
    assert policy.due(100.0 + SETTLE_S / 2) is None
    notice = policy.due(100.0 + SETTLE_S)
    assert notice is not None
    assert notice.body == "Run r-1: failed: gates failed: tests"
    assert policy.due(100.0 + 10 * SETTLE_S) is None  # told once


def test_a_burst_is_one_summary_counting_each_stage() -> None:
    policy = NotifyPolicy()
    runs = [Entered(f"f{n}", FAILED) for n in range(9)] + [
        Entered(f"r{n}", REVIEW) for n in range(3)
    ]
    for n, run in enumerate(runs):
        policy.note([run], now=n * 0.1)
    notice = policy.due(SETTLE_S)
    assert notice is not None
    assert notice.body == "12 runs need you: 9 failed, 3 review requested (f0, f1, f2 and 9 more)."
    assert policy.due(SETTLE_S + 1000) is None


def test_a_run_noted_twice_is_told_once_at_its_latest_stage() -> None:
    policy = NotifyPolicy()
    policy.note([Entered("r", FAILED), Entered("x", FAILED)], now=0)
    policy.note([Entered("r", REVIEW)], now=1)
    notice = policy.due(SETTLE_S)
    assert notice is not None and notice.counts == {"failed": 1, "review requested": 1}


def test_notices_are_a_gap_apart_and_what_waits_is_told_together() -> None:
    policy = NotifyPolicy(gap_s=30)
    policy.note([Entered("a", FAILED)], now=0)
    assert policy.due(SETTLE_S) is not None
    policy.note([Entered("b", FAILED)], now=5)
    policy.note([Entered("c", REVIEW)], now=20)
    assert policy.due(29) is None
    assert policy.next_at() == SETTLE_S + 30
    later = policy.due(SETTLE_S + 30)
    assert later is not None and [run.run_id for run in later.runs] == ["b", "c"]


def test_a_run_dealt_with_before_its_notice_is_left_out() -> None:
    policy = NotifyPolicy()
    policy.note([Entered("done-meanwhile", FAILED), Entered("waits", FAILED)], now=0)
    notice = policy.due(SETTLE_S, still_waiting=lambda run_id: run_id == "waits")
    assert notice is not None and notice.body == "Run waits: failed."
    policy.note([Entered("gone", FAILED)], now=100)
    assert policy.due(200, still_waiting=lambda _: False) is None
    assert len(policy.sent) == 1  # nothing told, nothing counted against the limit


def test_a_flood_of_an_hour_gives_a_handful_and_tells_every_run_once() -> None:
    policy = NotifyPolicy(gap_s=0)  # even with no gap between notices
    told: list[str] = []
    times: list[float] = []
    for second in range(3600):
        policy.note([Entered(f"run-{second}-{n}", FAILED) for n in range(5)], now=second)
        notice = policy.due(second)
        if notice is not None:
            told += [run.run_id for run in notice.runs]
            times.append(second)
    notice = policy.due(3600 + WINDOW_S)
    assert notice is not None
    told += [run.run_id for run in notice.runs]
    assert len(told) == len(set(told)) == 3600 * 5
    assert len(times) <= MOST * (3600 / WINDOW_S + 1)
    for at in times:
        assert sum(1 for t in times if at <= t < at + WINDOW_S) <= MOST


def test_two_hundred_failures_within_a_second_are_one_summary() -> None:
    policy = NotifyPolicy()
    notices = []
    for n in range(200):
        policy.note([Entered(f"run-{n:03d}", FAILED, "worker exited 1")], now=n / 200)
        if (found := policy.due(n / 200)) is not None:
            notices.append(found)
    for step in range(100):
        if (found := policy.due(1 + step)) is not None:
            notices.append(found)
    assert len(notices) == 1
    assert notices[0].body.startswith("200 runs need you: 200 failed (run-000, run-001, run-002")


def test_a_notice_line_is_inert_and_masks_secrets() -> None:
    token = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
    line = safe_line(f"failed\n\x1b]0;pwned\x07 GITHUB_TOKEN={token}\r\x07;done", 500)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and "\x07" not in line
    assert token not in line
    assert line.startswith("failed \\x1b]0;pwned\\x07")
    assert len(safe_line("x" * 1000, 50)) == 50
