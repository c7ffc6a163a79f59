"""A run's whole verification has a bound; a check the bound (or the host's stop) interrupts
is not judged, and everything not checked is reported not verified, naming the bound."""

from __future__ import annotations

import threading
from pathlib import Path

from core.criteria.run_bound import RunBound, past_the_bound, reason
from core.criteria.verify import Supervision, verify_all
from tests.criteria.helpers import POLICY, command, wait_for_file
from tests.processes import HANG_GUARD_S

EXISTS = {"type": "file_exists", "path": "a.txt", "description": "a.txt must exist"}
#: Says it started, then runs far past any bound here.
SLOW = command(
    "command_success", "open('slow.started', 'w').write('y'); import time; time.sleep(600)"
)


def test_the_bound_stops_the_check_in_progress_and_reports_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    criteria = [EXISTS, SLOW, EXISTS | {"description": "again"}]
    bound = RunBound(threading.Event(), bound_s=3)
    stopped = verify_all(criteria, tmp_path, POLICY, supervision=Supervision(cancel=bound))
    assert stopped.cancelled and bound.reached() and (tmp_path / "slow.started").exists()
    assert [o.status for o in stopped.outcomes] == ["passed"]

    verdict = past_the_bound(criteria, stopped, 3, unchecked_may_pass=True)
    assert not verdict.cancelled and not verdict.passed
    assert [(o.status, o.output) for o in verdict.outcomes[1:]] == [
        ("timed_out", reason(3)),
        ("timed_out", reason(3)),
    ]
    assert [o.criterion["description"] for o in verdict.outcomes] == [
        "a.txt must exist", "check", "again"
    ]  # fmt: skip
    assert reason(3) == (
        "not verified: the run's verification reached its bound of 3 s ([criteria] run_verify_s)"
    )


def test_a_check_a_cancel_interrupts_is_not_judged(tmp_path: Path) -> None:
    """Cancelled during the first of two criteria: no outcome, not an "error" for it."""
    cancel = threading.Event()

    def cancel_once_started() -> None:
        wait_for_file(tmp_path / "slow.started")
        cancel.set()

    helper = threading.Thread(target=cancel_once_started, daemon=True)
    helper.start()
    try:
        stopped = verify_all([SLOW, EXISTS], tmp_path, POLICY,
                             supervision=Supervision(cancel=cancel))  # fmt: skip
    finally:
        cancel.set()
        helper.join(HANG_GUARD_S)
    assert stopped.cancelled and stopped.outcomes == []


def test_the_host_s_stop_is_not_the_bound() -> None:
    stopping = threading.Event()
    bound = RunBound(stopping, bound_s=HANG_GUARD_S * 10)
    assert not bound.is_set()
    stopping.set()
    assert bound.is_set() and not bound.reached()
