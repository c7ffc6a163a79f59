"""A run's whole verification has a bound: what is not checked by then is not verified.

Each criterion has a time limit of its own, but a run may have 50 of them, each allowed up to an
hour: without a bound of its own, one run could hold a host's verifier for days. The bound
reaches the check in progress through the verification's cancel flag, the one the host's stop
sets (`RunBound`): that check is stopped at once, and it and every criterion after it are
reported ``timed_out`` with a reason that names the bound (`past_the_bound`), so the run fails as
any run whose criteria fail does. Reaching the bound is never taken for the host's stop, which
leaves the run ``verifying`` for the next host instead.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from core.criteria.verify import CriterionOutcome, Verification

SETTING = "[criteria] run_verify_s"


class RunBound(threading.Event):
    """A cancel flag that is set when the host stops, or once ``bound_s`` has passed.

    Read with ``is_set()``, as every holder of a verification's cancel flag reads it (commands
    and pattern searches poll it); ``wait()`` would see only an explicit ``set()``.
    """

    def __init__(self, stopping: threading.Event, bound_s: float) -> None:
        super().__init__()
        self.stopping = stopping
        self.bound_s = bound_s
        self._deadline = time.monotonic() + bound_s

    def reached(self) -> bool:
        """Whether the bound has passed (whether or not the host is stopping too)."""
        return time.monotonic() >= self._deadline

    def is_set(self) -> bool:
        return super().is_set() or self.stopping.is_set() or self.reached()


def reason(bound_s: float) -> str:
    return f"not verified: the run's verification reached its bound of {bound_s:g} s ({SETTING})"


def past_the_bound(
    criteria: Sequence[Mapping[str, Any]],
    stopped: Verification,
    bound_s: float,
    *,
    unchecked_may_pass: bool,
) -> Verification:
    """The verdict on a verification the bound stopped: the outcomes it reached, then every
    other criterion not verified (``timed_out``, naming the bound).

    ``unchecked_may_pass`` is the policy's, which a stopped verification does not carry.
    """
    done = list(stopped.outcomes)
    not_verified = [
        CriterionOutcome(copy.deepcopy(dict(c)), "timed_out", False, reason(bound_s), 0)
        for c in criteria[len(done) :]
    ]
    pending: list[str] = []
    for outcome in done:
        key = outcome.command_key
        if outcome.status == "needs_approval" and key is not None and key not in pending:
            pending.append(key)
    return Verification(
        outcomes=done + not_verified,
        pending_approval=pending,
        verified_at=stopped.verified_at,
        unchecked_may_pass=unchecked_may_pass,
    )
