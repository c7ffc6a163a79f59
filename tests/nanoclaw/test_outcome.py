"""How a NanoClaw runner's attempt ends: a completion in the results is gated whatever else the
frames said; without one, the runner's error (inert, masked, cut) or an overflowing frame is the
reason the run fails."""

from __future__ import annotations

from core.nanoclaw.frames import Decoded
from core.nanoclaw.outcome import ERROR_CHARS, has_completion, runner_failure


def decoded(text: str = "", error: str | None = None, overflowed: bool = False) -> Decoded:
    return Decoded(text, 1, 1 if text else 0, error, None, overflowed=overflowed)


def test_a_completion_is_gated_even_beside_an_error() -> None:
    assert runner_failure(decoded("<completion>{}</ Completion >\n", error="boom")) is None
    assert has_completion("x</completion>") and not has_completion("<completion>")


def test_an_error_without_a_completion_is_the_reason_made_inert_and_masked() -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    reason = runner_failure(decoded("working…\n", error=f"\x1b[31mfailed\nwith {key}"))
    assert reason is not None and reason.startswith("the runner reported an error: ")
    assert "\x1b" not in reason and "\n" not in reason and "\\x1b[31mfailed\\nwith" in reason
    assert key not in reason


def test_a_long_error_is_cut() -> None:
    reason = runner_failure(decoded(error="e" * 5000))
    assert reason is not None and reason.endswith("…")
    assert len(reason) == len("the runner reported an error: ") + ERROR_CHARS


def test_an_overflowing_frame_is_the_reason_when_nothing_else_is() -> None:
    reason = runner_failure(decoded(overflowed=True))
    assert reason is not None and "without its end marker" in reason
    assert runner_failure(decoded("no block here\n")) is None  # the parseable gate says why
