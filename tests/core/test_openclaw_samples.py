"""The OpenClaw samples validate and gate exactly as their names say."""

from __future__ import annotations

import pathlib
import re

import pytest

from core.contracts.diffparse import parse_diff
from core.contracts.openclaw_request import validate_request
from core.contracts.risk_gate import Level, gate_results

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "sample_runs" / "openclaw"
INVALID = sorted(SAMPLES.glob("request-invalid-*.json"))
RESULTS = sorted(p for p in SAMPLES.glob("results-*") if p.is_dir())


def test_sample_set_is_complete() -> None:
    assert (SAMPLES / "request-valid.json").is_file()
    assert len(INVALID) >= 3
    assert sorted(re.sub(r"-.*", "", p.name[len("results-") :]) for p in RESULTS) == [
        "L0",
        "L2",
        "L3",
    ]


def test_valid_request_sample() -> None:
    report = validate_request((SAMPLES / "request-valid.json").read_bytes())
    assert report.valid, report.to_json()
    assert report.warnings == []


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_request_samples(path: pathlib.Path) -> None:
    report = validate_request(path.read_bytes())
    assert not report.valid
    assert report.document is not None  # broken in content, not in JSON syntax


@pytest.mark.parametrize("folder", RESULTS, ids=lambda p: p.name)
def test_result_samples_gate_to_their_level(folder: pathlib.Path) -> None:
    for name in ("report.md", "patch.diff", "status.json", "request.json"):
        assert (folder / name).is_file(), name
    request = (folder / "request.json").read_bytes()
    assert validate_request(request).valid
    patch = parse_diff((folder / "patch.diff").read_bytes())
    assert patch.ok and patch.files_changed > 0
    expected = Level[folder.name.split("-")[1]]
    report = gate_results(request, folder)
    assert report.risk == expected, report.to_json()
    assert report.errors == ()


def test_l3_sample_is_blocked_for_a_secret_or_a_denied_path() -> None:
    (folder,) = [p for p in RESULTS if p.name.startswith("results-L3-")]
    report = gate_results((folder / "request.json").read_bytes(), folder)
    assert report.merge_mode == "blocked"
    assert any(f.code.startswith("secret_") or f.code == "path_denied" for f in report.findings)
