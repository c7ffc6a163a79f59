"""Gates git could not check read as unverified — never as passed — in the run table and the
gate panel, and the `jarvis show` text says so before anything else."""

from __future__ import annotations

from rich.text import Text

from jarvis_tui.widgets.gate_panel import _gates
from jarvis_tui.widgets.run_table import gates_text


def test_the_run_table_marks_unchecked_gates_apart_from_passed_and_failed() -> None:
    assert gates_text({"passed": 12, "total": 12, "not_checked": 0}).plain == "✓12/12"
    unverified = gates_text({"passed": 9, "total": 12, "not_checked": 3})
    assert unverified.plain == "?9/12" and str(unverified.style) == "yellow"
    # A failure among them still reads as a failure.
    assert gates_text({"passed": 8, "total": 12, "not_checked": 3}).plain == "✗8/12"


def test_the_gate_panel_shows_unchecked_gates_and_why() -> None:
    gate = {"attempt": 1, "evaluated_at": "2026-11-25T00:00:00.000Z"}
    detail = {
        "unverified": "no repository in the run's checkout",
        "gates": [
            {**gate, "name": "parseable", "passed": True, "status": "passed", "detail": "ok"},
            {
                **gate,
                "name": "commit_exists",
                "passed": False,
                "status": "not_checked",
                "detail": "not checked: no repository in the run's checkout",
            },
        ],  # fmt: skip
    }
    text = Text()
    _gates(text, detail)
    lines = text.plain.splitlines()
    assert "  ? unverified: no repository in the run's checkout" in lines
    assert any(line.startswith("  ✓ parseable") for line in lines)
    assert any(line.startswith("  ? commit_exists") for line in lines)
    assert not any(line.startswith("  ✓ commit_exists") for line in lines)
