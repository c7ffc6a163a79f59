"""`jarvis validate …` as a script runs it: exit codes and JSON shapes are the interface.

Run in process (tests/jarvis_cli.py); test_entry_point.py holds the real process to the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import jarvis
from tests.conftest import SAMPLES

DISPATCHES = SAMPLES / "dispatches"
OUTPUTS = SAMPLES / "outputs"


def test_valid_dispatch_exits_0_with_the_documented_shape() -> None:
    result = jarvis("validate", "dispatch", DISPATCHES / "valid-ui-dashboard.json", "--json")
    assert result.code == 0
    data = result.json()
    assert {"valid", "kind", "errors"} <= set(data)
    assert data["valid"] is True and data["kind"] == "jarvis_dispatch" and data["errors"] == []


def test_invalid_dispatch_exits_1_with_structured_errors() -> None:
    result = jarvis("validate", "dispatch", DISPATCHES / "invalid-wrong-types.json", "--json")
    assert result.code == 1
    data = result.json()
    assert data["valid"] is False
    assert all(set(e) == {"field", "code", "message"} for e in data["errors"])
    assert {"task_type", "acceptance_tests", "ui_impacting", "repo"} <= {
        e["field"] for e in data["errors"]
    }


def test_stdin_is_read_with_a_dash() -> None:
    body = (DISPATCHES / "valid-backend-fix.json").read_bytes()
    assert jarvis("validate", "dispatch", "-", "--json", stdin=body).json()["valid"] is True
    assert jarvis("validate", "dispatch", "-", "--json", stdin=b"fix it please").code == 1


def test_kind_is_recognised_and_can_be_forced() -> None:
    record = DISPATCHES / "valid-dispatch-record.json"
    assert jarvis("validate", "dispatch", record, "--json").json()["kind"] == "dispatch_record"
    forced = jarvis("validate", "dispatch", record, "--json", "--as", "jarvis_dispatch")
    assert forced.code == 1 and forced.json()["kind"] == "jarvis_dispatch"


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "dispatch", "/nonexistent/d.json", "--json"),
        ("validate", "dispatch", "/", "--json"),
        ("validate", "completion", "--dispatch", "/nonexistent.json", "-", "--json"),
    ],
)
def test_io_errors_exit_2_with_one_json_error(args: tuple[str, ...]) -> None:
    result = jarvis(*args, stdin=b"")
    assert result.code == 2
    assert set(result.json()["error"]) == {"code", "message"}
    assert "Traceback" not in result.stderr


def test_usage_errors_exit_2() -> None:
    assert jarvis("validate", "dispatch").code == 2
    assert jarvis("validate", "nonsense", "x").code == 2
    bad_flag = jarvis("validate", "dispatch", "x.json", "--json", "--bogus")
    assert bad_flag.code == 2 and bad_flag.json()["error"]["code"] == "usage"


def test_completion_review_requested_exits_0() -> None:
    folder = OUTPUTS / "ui-dashboard"
    result = jarvis(
        "validate",
        "completion",
        "--dispatch",
        folder / "dispatch.json",
        folder / "review-with-browser-evidence.txt",
        "--json",
    )
    assert result.code == 0
    data = result.json()
    assert data["state"] == "review_requested"
    assert all(set(g) == {"name", "passed", "detail"} and g["passed"] for g in data["gates"])
    assert data["completion"]["run_id"] == "task-20260222-001"
    assert data["errors"] == []


def test_completion_failed_contract_exits_1_and_names_the_gate() -> None:
    folder = OUTPUTS / "backend-fix"
    result = jarvis(
        "validate",
        "completion",
        "--dispatch",
        folder / "dispatch.json",
        folder / "failed_contract-bad-commit-sha.txt",
        "--json",
    )
    assert result.code == 1
    data = result.json()
    assert data["state"] == "failed_contract"
    assert [g["name"] for g in data["gates"] if not g["passed"]] == ["commit_sha_format"]


def test_completion_from_stdin() -> None:
    folder = OUTPUTS / "backend-fix"
    output = (folder / "review-pr-url.txt").read_bytes()
    result = jarvis(
        "validate",
        "completion",
        "--dispatch",
        folder / "dispatch.json",
        "-",
        "--json",
        stdin=output,
    )
    assert result.code == 0


def test_completion_against_an_invalid_dispatch_is_a_usage_error() -> None:
    result = jarvis(
        "validate",
        "completion",
        "--dispatch",
        DISPATCHES / "invalid-branch-not-jarvis.json",
        "-",
        "--json",
        stdin=b"<completion>{}</completion>",
    )
    assert result.code == 2
    assert result.json()["error"]["code"] == "invalid_dispatch"


def test_hostile_text_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J\u009b31m[bold red]x[/]"
    doc = json.loads((DISPATCHES / "valid-backend-fix.json").read_text())
    doc["output_contract"]["required_fields"] += [hostile, hostile]
    doc["branch"] = hostile
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc))
    for args in (("--json",), ()):
        result = jarvis("validate", "dispatch", path, *args)
        assert result.code == 1
        for ch in ("\x1b", "\x07", "\u009b"):
            assert ch not in result.stdout and ch not in result.stderr
    # In the readable rendering, the markup is shown as text, not applied.
    assert "[bold red]" in jarvis("validate", "dispatch", path).stdout.replace("\n", "")


def test_readable_output_is_not_json_and_says_the_verdict() -> None:
    result = jarvis("validate", "dispatch", DISPATCHES / "invalid-run-id-whitespace.json")
    assert result.code == 1
    assert "invalid jarvis_dispatch" in result.stdout
    assert "run_id_whitespace" in result.stdout


def test_a_50_megabyte_input_is_refused_cleanly() -> None:
    big = b'{"input": "' + b"x" * (50 * 1024 * 1024) + b'"}'
    result = jarvis("validate", "dispatch", "-", "--json", stdin=big)
    assert result.code == 1
    assert [e["code"] for e in result.json()["errors"]] == ["too_large"]


OPENCLAW = SAMPLES / "openclaw"


def test_request_valid_and_invalid() -> None:
    ok = jarvis("validate", "request", OPENCLAW / "request-valid.json", "--json")
    assert ok.code == 0 and ok.json()["kind"] == "openclaw_request" and ok.json()["valid"]
    bad = jarvis("validate", "request", OPENCLAW / "request-invalid-unsafe-task-id.json", "--json")
    assert bad.code == 1 and "unsafe_name" in {e["code"] for e in bad.json()["errors"]}


@pytest.mark.parametrize(
    ("folder", "risk", "mode", "code"),
    [
        ("results-L0-rounding-fix", "L0", "auto-merge", 0),
        ("results-L2-out-of-scope-script", "L2", "recommend-only", 0),
        ("results-L3-hardcoded-aws-key", "L3", "blocked", 1),
    ],
)
def test_results_gate_shape_and_exit_code(folder: str, risk: str, mode: str, code: int) -> None:
    path = OPENCLAW / folder
    result = jarvis("validate", "results", "--request", path / "request.json", path, "--json")
    assert result.code == code
    data = result.json()
    assert {"risk", "merge_mode", "files_changed", "additions", "deletions", "findings"} <= set(
        data
    )
    assert (data["risk"], data["merge_mode"]) == (risk, mode)
    assert all({"code", "message"} <= set(f) for f in data["findings"])
    # The secret itself never appears in the output, only a masked excerpt.
    assert "AKIAIOSFODNN7EXAMPLE" not in result.stdout


def test_results_on_a_missing_folder_is_an_io_error(tmp_path: Path) -> None:
    request = OPENCLAW / "request-valid.json"
    result = jarvis("validate", "results", "--request", request, tmp_path / "nope", "--json")
    assert result.code == 2 and result.json()["error"]["code"] == "not_a_directory"


def test_samples_reports_every_sample_as_named() -> None:
    result = jarvis("samples", "--json")
    assert result.code == 0
    data = result.json()
    assert data["all_as_named"] is True
    families = {s["family"] for s in data["samples"]}
    assert families == {
        "dispatch", "completion", "openclaw_request", "openclaw_results", "record", "planner",
    }  # fmt: skip
    readable = jarvis("samples")
    assert readable.code == 0 and "samples behave as named" in readable.stdout


def test_a_misnamed_sample_is_caught(tmp_path: Path) -> None:
    import shutil

    from jarvis_sim.samples import check_samples

    root = tmp_path / "samples"
    shutil.copytree(SAMPLES, root)
    wrong = root / "dispatches" / "valid-but-not-really.json"
    (root / "dispatches" / "invalid-run-id-whitespace.json").rename(wrong)
    mismatched = [c for c in check_samples(root) if not c.as_named]
    assert [c.path.name for c in mismatched] == ["valid-but-not-really.json"]
