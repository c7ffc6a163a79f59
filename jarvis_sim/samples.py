"""The bundled sample runs, and what each one should do — taken from its name.

Samples are named for their verdict (``valid-…``, ``invalid-…``, ``review-…``,
``failed_contract-…``, ``results-L2-…``, ``ok-…``, ``repaired-…``), so a reader knows what a file
shows without opening it, and this module can check that every sample still does what its name
says. ``jarvis samples`` and the test suite both run this catalogue.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine is loaded only when a family of samples is run
    from core.contracts.errors import ValidationReport

_PACKAGE = Path(__file__).resolve().parent


def samples_dir() -> Path:
    """Where ``sample_runs/`` is: beside the packages in a checkout, inside this one in a wheel."""
    for candidate in (_PACKAGE.parent / "sample_runs", _PACKAGE / "sample_runs"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("sample_runs/ is not installed beside jarvis_sim")


@dataclass(frozen=True, slots=True)
class SampleCheck:
    """One sample, what its name promises, and what the engine says."""

    path: Path
    family: str
    """dispatch, completion, openclaw_request, openclaw_results, record or planner."""
    expected: str
    actual: str
    detail: str

    @property
    def as_named(self) -> bool:
        return self.expected == self.actual

    def to_json(self, root: Path) -> dict[str, object]:
        return {
            "sample": self.path.relative_to(root).as_posix(),
            "family": self.family,
            "expected": self.expected,
            "actual": self.actual,
            "as_named": self.as_named,
            "detail": self.detail,
        }


def _validity(valid: bool) -> str:
    return "valid" if valid else "invalid"


def _first_error(errors: list[dict[str, str]] | list[object]) -> str:
    for err in errors:
        if isinstance(err, dict):
            return f"{err.get('code')}: {err.get('message')}"
    return ""


def _named_valid(
    paths: Iterable[Path], family: str, validate: Callable[[bytes], ValidationReport]
) -> Iterator[SampleCheck]:
    """Samples named ``valid-…`` or ``invalid-…``, through a validator whose report names the
    document's kind and its errors."""
    for path in paths:
        expected = path.name.split("-", 1)[0]
        report = validate(path.read_bytes())
        detail = report.kind if report.valid else f"{report.kind} — {report.errors[0].code}"
        yield SampleCheck(path, family, expected, _validity(report.valid), detail)


def _dispatches(root: Path) -> Iterator[SampleCheck]:
    from core.contracts.dispatch_kinds import validate_any_dispatch

    paths = sorted((root / "dispatches").glob("*"))
    return _named_valid(paths, "dispatch", validate_any_dispatch)


def _completions(root: Path) -> Iterator[SampleCheck]:
    from core.contracts.completion import evaluate_completion

    for folder in sorted(p for p in (root / "outputs").glob("*") if p.is_dir()):
        dispatch = json.loads((folder / "dispatch.json").read_text("utf-8"))
        for path in sorted(folder.glob("*.txt")):
            verdict = evaluate_completion(dispatch, path.read_bytes())
            failed = [g.name for g in verdict.gates if not g.passed]
            expected = "review_requested" if path.name.startswith("review") else "failed_contract"
            detail = "all gates pass" if not failed else "failed: " + ", ".join(failed[:3])
            yield SampleCheck(path, "completion", expected, verdict.state, detail)


def _openclaw(root: Path) -> Iterator[SampleCheck]:
    from core.contracts.openclaw_request import validate_request
    from core.contracts.risk_gate import gate_results

    folder = root / "openclaw"
    for path in sorted(folder.glob("request-*.json")):
        expected = "valid" if path.name.startswith("request-valid") else "invalid"
        report = validate_request(path.read_bytes())
        detail = "" if report.valid else report.errors[0].code
        yield SampleCheck(path, "openclaw_request", expected, _validity(report.valid), detail)
    for path in sorted(p for p in folder.glob("results-*") if p.is_dir()):
        expected = path.name.split("-")[1]
        verdict = gate_results((path / "request.json").read_bytes(), path).to_json()
        codes = sorted({str(f["code"]) for f in verdict["findings"]})
        detail = f"{verdict['merge_mode']}; " + (", ".join(codes[:3]) or "no findings")
        yield SampleCheck(path, "openclaw_results", expected, str(verdict["risk"]), detail)


def _records(root: Path) -> Iterator[SampleCheck]:
    from core.contracts.records import validate_record

    return _named_valid(sorted((root / "borisbot").glob("*.json")), "record", validate_record)


def _planner(root: Path) -> Iterator[SampleCheck]:
    from core.contracts.planner import parse_planner_output

    for path in sorted((root / "planner").glob("*.txt")):
        expected = path.name.split("-", 1)[0]
        result = parse_planner_output(path.read_bytes()).to_json()
        actual = ("repaired" if result["repaired"] else "ok") if result["ok"] else "invalid"
        detail = str(result["error_code"] or "") or "planner.v1"
        yield SampleCheck(path, "planner", expected, actual, detail)


def check_samples(root: Path | None = None) -> list[SampleCheck]:
    """Run every sample through the engine and compare with what its name says."""
    base = root or samples_dir()
    checks: list[SampleCheck] = []
    for family in (_dispatches, _completions, _openclaw, _records, _planner):
        checks.extend(family(base))
    return checks
