"""Every bundled sample, through the real command line, does what its name says."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_sim.samples import SampleCheck, check_samples
from tests.cli.conftest import jarvis
from tests.conftest import SAMPLES

CHECKS = check_samples(SAMPLES)


def command_for(check: SampleCheck) -> list[str | Path]:
    path = check.path
    if check.family == "dispatch":
        return ["validate", "dispatch", path]
    if check.family == "completion":
        return ["validate", "completion", "--dispatch", path.parent / "dispatch.json", path]
    if check.family == "openclaw_request":
        return ["validate", "request", path]
    if check.family == "openclaw_results":
        return ["validate", "results", "--request", path / "request.json", path]
    if check.family == "record":
        return ["validate", "record", path]
    return ["validate", "planner", path]


def verdict(check: SampleCheck, data: dict) -> str:  # type: ignore[type-arg]
    if check.family == "completion":
        return str(data["state"])
    if check.family == "openclaw_results":
        return str(data["risk"])
    if check.family == "planner":
        return ("repaired" if data["repaired"] else "ok") if data["ok"] else "invalid"
    return "valid" if data["valid"] else "invalid"


GOOD = {"valid", "review_requested", "ok", "repaired", "L0", "L1", "L2"}


def test_there_are_enough_samples() -> None:
    families = [c.family for c in CHECKS]
    assert families.count("dispatch") >= 10
    assert families.count("completion") >= 12
    assert sorted(c.expected for c in CHECKS if c.family == "openclaw_results") == [
        "L0",
        "L2",
        "L3",
    ]


@pytest.mark.parametrize(
    "check", CHECKS, ids=[c.path.relative_to(SAMPLES).as_posix() for c in CHECKS]
)
def test_sample_behaves_as_named_through_the_cli(check: SampleCheck) -> None:
    result = jarvis(*command_for(check), "--json")
    assert verdict(check, result.json()) == check.expected
    assert result.code == (0 if check.expected in GOOD else 1)
