"""Patterns from outside are matched in a child process with a time limit, never in-process.

``^(a+)+$`` against ``"a" * 34 + "b"`` backtracks for hours in Python's ``re`` (and holds the
interpreter lock while it does): these tests prove such a search ends, as ``timed_out`` with a
reason, that a cancel ends it at once, and that the verifier reports it on the criterion.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from core.contracts.criteria import ContentMatch
from core.contracts.patterns import MAX_PATTERN_CHARS, pattern_problem, search
from core.criteria.runner import Supervision
from core.criteria.verify import DEFAULT_POLICY, verify_all, verify_criterion
from tests.criteria.helpers import POLICY, command

RUNAWAY = r"^(a+)+$"
VICTIM = "a" * 34 + "b"
#: Short enough for the suite; the runaway search would need hours, so any limit proves it.
LIMIT_S = 1.0


def test_a_pattern_that_backtracks_without_end_times_out_with_a_reason() -> None:
    found = search(RUNAWAY, VICTIM, timeout_s=LIMIT_S)
    assert found.status == "timed_out"
    assert found.span is None
    assert RUNAWAY in found.detail and "simplify" in found.detail


def test_a_search_reports_where_the_first_match_is() -> None:
    text = "intro\n## Usage\nrun it\n## Usage again\n"
    found = search(r"^## Usage$", text)
    assert found.status == "found"
    assert found.span == (text.index("## Usage"), text.index("## Usage") + len("## Usage"))
    assert search(r"^## Usage$", text, multiline=False).status == "not_found"
    assert search(r"absent", text).status == "not_found"


def test_a_text_of_several_mib_is_handed_over_whole() -> None:
    text = "NEEDLE\n" + "x" * (4 * 1024 * 1024) + "\nLAST\n"
    assert search(r"^NEEDLE$", text).span == (0, 6)
    assert search(r"^LAST$", text).status == "found"


def test_text_and_patterns_outside_ascii_keep_their_character_offsets() -> None:
    text = "café ☕\nnaïve — ok\n"
    found = search(r"naïve", text)
    assert found.status == "found" and found.span is not None
    assert text[found.span[0] : found.span[1]] == "naïve"


def test_a_bad_or_oversized_pattern_is_an_error_not_a_crash() -> None:
    assert search("(unclosed", "x").status == "error"
    assert pattern_problem("(unclosed") is not None
    huge = "a" * (MAX_PATTERN_CHARS + 1)
    problem = pattern_problem(huge)
    assert problem is not None and str(MAX_PATTERN_CHARS) in problem
    assert pattern_problem(r"^(a+)+$") is None  # valid: only matching it is dangerous


def test_cancelling_stops_a_running_search_at_once() -> None:
    cancel = threading.Event()
    result: list[str] = []
    worker = threading.Thread(
        target=lambda: result.append(search(RUNAWAY, VICTIM, timeout_s=600, cancel=cancel).status)
    )
    worker.start()
    cancel.set()
    # The limit is ten minutes: only the cancel can end the search within the join below.
    worker.join(60)
    assert not worker.is_alive()
    assert result == ["cancelled"]


def test_the_verifier_fails_a_runaway_content_check_with_a_clear_reason(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(VICTIM + "\n")
    policy = replace(DEFAULT_POLICY, pattern_timeout_s=LIMIT_S)
    criterion = ContentMatch(type="content_match", path="notes.txt", pattern=RUNAWAY,
                             description="notes.txt must match the regex")  # fmt: skip
    outcome = verify_criterion(criterion, tmp_path, policy)
    assert outcome.status == "timed_out" and not outcome.passed
    assert "still searching after 1 s" in outcome.output


def test_a_cancelled_verification_is_marked_and_decides_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(VICTIM + "\n")
    cancel = threading.Event()
    cancel.set()
    criteria = [{"type": "content_match", "path": "notes.txt", "pattern": RUNAWAY,
                 "description": "runaway"}]  # fmt: skip
    verification = verify_all(criteria, tmp_path, supervision=Supervision(cancel=cancel))
    assert verification.cancelled
    assert verification.outcomes == []


@pytest.mark.parametrize("kind", ["content_match", "changelog_updated", "backlog_updated"])
def test_every_file_check_goes_through_the_limited_search(tmp_path: Path, kind: str) -> None:
    (tmp_path / "f.md").write_text(VICTIM + "\n")
    policy = replace(DEFAULT_POLICY, pattern_timeout_s=LIMIT_S)
    criterion = {"type": kind, "path": "f.md", "pattern": RUNAWAY, "description": "d"}
    assert verify_criterion(criterion, tmp_path, policy).status == "timed_out"


def test_a_test_pass_pattern_over_command_output_is_limited_too(tmp_path: Path) -> None:
    criterion = command("test_pass", f"print({VICTIM!r})", pattern=RUNAWAY)
    outcome = verify_criterion(criterion, tmp_path, replace(POLICY, pattern_timeout_s=LIMIT_S))
    assert outcome.status == "timed_out"
    assert "still searching" in outcome.output and VICTIM in outcome.output
