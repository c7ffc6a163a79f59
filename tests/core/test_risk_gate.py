"""Scope and risk gate: one test per rule (each fails if its rule breaks), plus properties."""

from __future__ import annotations

import json
import os
import pathlib
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.contracts import risk_gate
from core.contracts.risk_gate import FINDINGS, LEVELS, Level, RiskReport, gate_results
from tests.strategies import json_values

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
TEST_FILE = "tests/test_app.py"
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def request(**scope: Any) -> dict[str, Any]:
    base_scope: dict[str, Any] = {
        "allowed_globs": ["src/**", "tests/**", "docs/**"],
        "deny_globs": [".github/workflows/**", "**/auth/**", "**/security/**"],
        "max_files_changed": 20,
        "max_additions": 500,
        "max_deletions": 500,
    }
    base_scope.update(scope)
    return {
        "task_id": "t-1",
        "role": "worker",
        "canonical_language": "en",
        "repo": {"path": "/workspace/repo", "base_ref": "main", "target_branch": "worker/t-1"},
        "scope": base_scope,
        "goal": {
            "title": "Fix it",
            "description": "Fix the thing.",
            "acceptance_criteria": [],
            "test_plan": ["pytest -q"],
        },
        "stop_conditions": [
            "security-sensitive",
            "architecture-change",
            "secrets-required",
            "cannot-run-tests",
        ],
    }


def modify(path: str, added: list[str] | None = None, removed: list[str] | None = None) -> str:
    added = ["new line"] if added is None else added
    removed = [] if removed is None else removed
    body = "".join(f"-{x}\n" for x in removed) + "".join(f"+{x}\n" for x in added)
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n"
        f"+++ b/{path}\n@@ -1,{len(removed) + 1} +1,{len(added) + 1} @@\n context\n{body}"
    )


def lines(*items: str) -> str:
    return "".join(f"{item}\n" for item in items)


def with_test(*parts: str) -> str:
    return "".join(parts) + modify(TEST_FILE, ["def test_more(): pass"])


def write_results(
    root: pathlib.Path,
    patch: str = "",
    report: str = "# Report\n\nChanged one function. Tests: 3 passed.\n",
    status: dict[str, Any] | str | None = None,
    **extra: str,
) -> pathlib.Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "report.md").write_text(report, encoding="utf-8")
    (root / "patch.diff").write_text(patch, encoding="utf-8")
    if status is None:
        status = {"task_id": "t-1", "status": "ok", "reason": ""}
    if status != "absent":
        text = status if isinstance(status, str) else json.dumps(status)
        (root / "status.json").write_text(text, encoding="utf-8")
    for name, text in extra.items():
        (root / name.replace("_", ".")).write_text(text, encoding="utf-8")
    return root


def gate(root: pathlib.Path, req: dict[str, Any] | None = None) -> RiskReport:
    return gate_results(request() if req is None else req, root)


def codes(report: RiskReport) -> set[str]:
    return {f.code for f in report.findings}


# --- levels ------------------------------------------------------------------------------


def test_levels_table_defines_merge_modes() -> None:
    assert {lvl: info.merge_mode for lvl, info in LEVELS.items()} == {
        Level.L0: "auto-merge",
        Level.L1: "recommend-only",
        Level.L2: "recommend-only",
        Level.L3: "blocked",
    }


def test_every_finding_code_is_documented() -> None:
    doc = REPO_ROOT / "docs" / "contracts.md"
    text = doc.read_text(encoding="utf-8")
    for code, (level, _) in FINDINGS.items():
        assert re.search(rf"`{code}`\s*\|\s*{level.name}", text), code


def test_clean_change_is_l0_auto_merge(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, with_test(modify("src/app.py"))))
    assert report.findings == ()
    assert report.to_json() == {
        "risk": "L0",
        "merge_mode": "auto-merge",
        "files_changed": 2,
        "additions": 2,
        "deletions": 0,
        "findings": [],
        "errors": [],
    }


def test_risk_is_max_and_findings_sorted_by_level(tmp_path: pathlib.Path) -> None:
    patch = modify("src/app.py") + modify("scripts/x.sh") + modify(".github/workflows/ci.yml")
    report = gate(write_results(tmp_path, patch))
    levels = [f.level for f in report.findings]
    assert levels == sorted(levels, reverse=True)
    assert report.risk == max(levels) == Level.L3
    for f in report.to_json()["findings"]:
        assert f["level"] in ("L0", "L1", "L2", "L3") and f["code"] in FINDINGS


# --- request and folder ------------------------------------------------------------------


def test_invalid_request_blocks_with_errors(tmp_path: pathlib.Path) -> None:
    bad = request()
    bad["role"] = "boss"
    report = gate_results(json.dumps(bad).encode(), write_results(tmp_path, with_test()))
    assert report.risk == Level.L3 and report.merge_mode == "blocked"
    assert "request_invalid" in codes(report)
    assert [(e.field, e.code) for e in report.errors] == [("role", "not_allowed")]


def test_garbage_request_blocks(tmp_path: pathlib.Path) -> None:
    report = gate_results(b"\x00\xff", write_results(tmp_path, with_test()))
    assert "request_invalid" in codes(report) and report.risk == Level.L3


def test_missing_results_folder(tmp_path: pathlib.Path) -> None:
    report = gate(tmp_path / "nope")
    assert codes(report) == {"results_missing"} and report.risk == Level.L3
    assert report.errors


def test_results_path_is_a_file(tmp_path: pathlib.Path) -> None:
    (tmp_path / "f").write_text("x")
    assert codes(gate(tmp_path / "f")) == {"results_missing"}


@pytest.mark.parametrize(
    ("name", "code"), [("report.md", "report_missing"), ("patch.diff", "patch_missing")]
)
def test_required_artifacts(tmp_path: pathlib.Path, name: str, code: str) -> None:
    root = write_results(tmp_path, with_test())
    (root / name).unlink()
    report = gate(root)
    assert code in codes(report) and report.risk == Level.L3
    assert (name, "required") in {(e.field, e.code) for e in report.errors}


@pytest.mark.parametrize("name", ["report.md", "patch.diff", "status.json", "tests.log"])
def test_symlinked_artifact_is_not_followed(tmp_path: pathlib.Path, name: str) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(f"key = {AWS_ID}\n")
    root = write_results(tmp_path / "r", with_test())
    target = root / name
    if target.exists():
        target.unlink()
    target.symlink_to(outside)
    report = gate(root)
    assert "artifact_symlink" in codes(report) and report.risk == Level.L3
    assert "secret_aws_key" not in codes(report)  # the target was not read


def test_artifact_that_is_a_folder(tmp_path: pathlib.Path) -> None:
    root = write_results(tmp_path, with_test())
    (root / "report.md").unlink()
    (root / "report.md").mkdir()
    assert "artifact_not_file" in codes(gate(root))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_artifact_does_not_hang(tmp_path: pathlib.Path) -> None:
    root = write_results(tmp_path, with_test())
    (root / "patch.diff").unlink()
    os.mkfifo(root / "patch.diff")
    report = gate(root)
    assert "artifact_not_file" in codes(report) and report.risk == Level.L3


def test_oversized_patch_is_not_read(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(risk_gate, "PATCH_CAP", 100)
    report = gate(write_results(tmp_path, with_test(modify("src/a.py", ["x" * 200]))))
    assert "artifact_too_large" in codes(report) and report.risk == Level.L3
    assert report.files_changed == 0


def test_oversized_report_is_not_read(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(risk_gate, "REPORT_CAP", 10)
    report = gate(write_results(tmp_path, with_test(), report="x" * 11))
    assert "artifact_too_large" in codes(report) and report.risk == Level.L3


def test_oversized_log_is_l2(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(risk_gate, "LOG_CAP", 10)
    report = gate(write_results(tmp_path, with_test(), commands_log="x" * 11))
    assert codes(report) == {"log_too_large"} and report.risk == Level.L2


def test_report_not_utf8_is_l2(tmp_path: pathlib.Path) -> None:
    root = write_results(tmp_path, with_test())
    (root / "report.md").write_bytes(b"caf\xe9 report")
    report = gate(root)
    assert codes(report) == {"report_not_utf8"} and report.risk == Level.L2


def test_blank_report_is_l1(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, with_test(), report="  \n"))
    assert codes(report) == {"report_empty"} and report.risk == Level.L1


# --- status.json -------------------------------------------------------------------------


def test_missing_status_is_l2(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, with_test(), status="absent"))
    assert codes(report) == {"status_missing"} and report.risk == Level.L2


@pytest.mark.parametrize(
    ("status", "field"),
    [
        ("{not json", "status.json"),
        ('{"task_id": "t-1", "status": "done", "reason": ""}', "status.json.status"),
        ('{"task_id": "t-1", "status": "ok"}', "status.json.reason"),
        ('{"task_id": 1, "status": "ok", "reason": ""}', "status.json.task_id"),
        ('{"task_id": "t-1", "status": "ok", "reason": "", "x": 1}', "status.json.x"),
        ("[]", "status.json"),
    ],
)
def test_invalid_status_is_l3(tmp_path: pathlib.Path, status: str, field: str) -> None:
    report = gate(write_results(tmp_path, with_test(), status=status))
    assert "status_invalid" in codes(report) and report.risk == Level.L3
    assert field in {e.field for e in report.errors}


def test_status_task_id_must_match(tmp_path: pathlib.Path) -> None:
    status = {"task_id": "other", "status": "ok", "reason": ""}
    report = gate(write_results(tmp_path, with_test(), status=status))
    assert codes(report) == {"status_task_mismatch"} and report.risk == Level.L3


def test_blocked_with_patch_is_l3(tmp_path: pathlib.Path) -> None:
    status = {"task_id": "t-1", "status": "blocked", "reason": "needs secrets"}
    report = gate(write_results(tmp_path, with_test(), status=status))
    assert "blocked_with_patch" in codes(report) and report.risk == Level.L3


def test_blocked_with_empty_patch_is_l1_with_reason(tmp_path: pathlib.Path) -> None:
    status = {"task_id": "t-1", "status": "blocked", "reason": "cannot-run-tests: no database"}
    report = gate(write_results(tmp_path, "", status=status))
    assert codes(report) == {"worker_blocked"}
    assert report.risk == Level.L1 and report.merge_mode == "recommend-only"
    assert "no database" in report.findings[0].message


def test_ok_with_empty_patch_is_l1(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, ""))
    assert codes(report) == {"patch_empty"} and report.risk == Level.L1


# --- scope -------------------------------------------------------------------------------


def test_deny_glob_is_l3(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, with_test(modify("src/auth/login.py"))))
    assert "path_denied" in codes(report) and report.risk == Level.L3


def test_deny_glob_ignores_case(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, with_test(modify("src/Auth/login.py"))))
    assert "path_denied" in codes(report)


def test_deny_beats_allow(tmp_path: pathlib.Path) -> None:
    req = request(allowed_globs=["**"], deny_globs=["src/private/**"])
    report = gate(write_results(tmp_path, with_test(modify("src/private/x.py"))), req)
    assert "path_denied" in codes(report)


def test_outside_allowed_globs_is_l2(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, with_test(modify("scripts/run.py"))))
    assert codes(report) == {"path_out_of_scope"} and report.risk == Level.L2


def test_both_sides_of_a_rename_are_checked(tmp_path: pathlib.Path) -> None:
    patch = lines(
        "diff --git a/lib/x.py b/src/x.py",
        "similarity index 100%",
        "rename from lib/x.py",
        "rename to src/x.py",
    )
    report = gate(write_results(tmp_path, with_test(patch)))
    assert {"path_out_of_scope", "file_renamed"} <= codes(report)
    assert [f.path for f in report.findings if f.code == "path_out_of_scope"] == ["lib/x.py"]


@pytest.mark.parametrize(
    ("limit", "patch", "code"),
    [
        ("max_files_changed", modify("src/a.py") + modify("src/b.py"), "too_many_files"),
        ("max_additions", modify("src/a.py", ["1", "2", "3"]), "too_many_additions"),
        ("max_deletions", modify("src/a.py", [], ["1", "2", "3"]), "too_many_deletions"),
    ],
)
def test_limits_are_l2(tmp_path: pathlib.Path, limit: str, patch: str, code: str) -> None:
    report = gate(write_results(tmp_path, with_test(patch)), request(**{limit: 2}))
    assert code in codes(report) and report.risk == Level.L2


def test_limits_exactly_met_are_fine(tmp_path: pathlib.Path) -> None:
    req = request(max_files_changed=2, max_additions=2, max_deletions=0)
    assert gate(write_results(tmp_path, with_test(modify("src/a.py"))), req).risk == Level.L0


def test_binary_file_is_l2(tmp_path: pathlib.Path) -> None:
    patch = lines(
        "diff --git a/docs/a.png b/docs/a.png",
        "index 1..2 100644",
        "Binary files a/docs/a.png and b/docs/a.png differ",
    )
    report = gate(write_results(tmp_path, with_test(patch)))
    assert codes(report) == {"binary_file"} and report.risk == Level.L2


def test_deleted_file_is_l1(tmp_path: pathlib.Path) -> None:
    patch = lines(
        "diff --git a/src/old.py b/src/old.py",
        "deleted file mode 100644",
        "--- a/src/old.py",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-x",
    )
    report = gate(write_results(tmp_path, with_test(patch)))
    assert codes(report) == {"file_deleted"} and report.risk == Level.L1


def test_renamed_file_is_l1(tmp_path: pathlib.Path) -> None:
    patch = lines(
        "diff --git a/src/a.py b/src/b.py",
        "similarity index 100%",
        "rename from src/a.py",
        "rename to src/b.py",
    )
    report = gate(write_results(tmp_path, with_test(patch)))
    assert codes(report) == {"file_renamed"} and report.risk == Level.L1


def test_mode_change_is_l1(tmp_path: pathlib.Path) -> None:
    patch = "diff --git a/src/run.sh b/src/run.sh\nold mode 100644\nnew mode 100755\n"
    report = gate(write_results(tmp_path, with_test(patch)))
    assert codes(report) == {"mode_changed"} and report.risk == Level.L1


def test_symlink_entry_is_l2(tmp_path: pathlib.Path) -> None:
    patch = lines(
        "diff --git a/src/link b/src/link",
        "new file mode 120000",
        "--- /dev/null",
        "+++ b/src/link",
        "@@ -0,0 +1 @@",
        "+/etc/passwd",
        "\\ No newline at end of file",
    )
    report = gate(write_results(tmp_path, with_test(patch)))
    assert codes(report) == {"special_file"} and report.risk == Level.L2


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "../outside.py",
        "src/../../x.py",
        ".git/hooks/pre-commit",
        "src/.GIT/config",
        "C:/x.py",
        "src\\..\\..\\x",
    ],
)
def test_escaping_paths_are_l3(tmp_path: pathlib.Path, path: str) -> None:
    patch = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    if path.startswith("/"):
        patch = f"--- {path}\n+++ {path}\n@@ -1 +1 @@\n-a\n+b\n"
    report = gate(write_results(tmp_path, with_test(patch)), request(allowed_globs=["**"]))
    assert "unsafe_path" in codes(report) and report.risk == Level.L3


# --- protected paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        "deploy/prod.yaml",
        "Dockerfile",
        "infra/main.tf",
        "src/auth/token.py",
        "CODEOWNERS",
    ],
)
def test_protected_paths_need_explicit_permission(tmp_path: pathlib.Path, path: str) -> None:
    req = request(allowed_globs=["**"], deny_globs=[])
    report = gate(write_results(tmp_path, with_test(modify(path))), req)
    assert "protected_path" in codes(report) and report.risk == Level.L3


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        (".github/workflows/ci.yml", ".github/workflows/**"),
        ("Dockerfile", "Dockerfile"),
        ("infra/main.tf", "infra/*.tf"),
        ("deploy/prod.yaml", "deploy/**"),
    ],
)
def test_explicitly_permitted_protected_paths(tmp_path: pathlib.Path, path: str, glob: str) -> None:
    req = request(allowed_globs=["src/**", "tests/**", glob], deny_globs=[])
    report = gate(write_results(tmp_path, with_test(modify(path))), req)
    assert report.risk == Level.L0, report.to_json()


def test_auth_path_with_security_sensitive_stop_is_l3_even_when_permitted(
    tmp_path: pathlib.Path,
) -> None:
    req = request(allowed_globs=["src/**", "tests/**", "src/auth/**"], deny_globs=[])
    report = gate(write_results(tmp_path, with_test(modify("src/auth/login.py"))), req)
    assert codes(report) == {"security_sensitive_change"} and report.risk == Level.L3


def test_auth_path_permitted_without_security_stop_is_fine(tmp_path: pathlib.Path) -> None:
    req = request(allowed_globs=["src/**", "tests/**", "src/auth/**"], deny_globs=[])
    req["stop_conditions"] = ["cannot-run-tests"]
    report = gate(write_results(tmp_path, with_test(modify("src/auth/login.py"))), req)
    assert report.risk == Level.L0


# --- secrets -----------------------------------------------------------------------------


def test_secret_in_added_line_is_l3_with_path_and_line(tmp_path: pathlib.Path) -> None:
    report = gate(
        write_results(tmp_path, with_test(modify("src/cfg.py", ["ok", f"KEY = '{AWS_ID}'"])))
    )
    (finding,) = [f for f in report.findings if f.code == "secret_aws_key"]
    assert (finding.path, finding.line, finding.level) == ("src/cfg.py", 3, Level.L3)
    assert AWS_ID not in json.dumps(report.to_json())


def test_secret_in_removed_line_is_not_a_finding(tmp_path: pathlib.Path) -> None:
    report = gate(
        write_results(
            tmp_path, with_test(modify("src/cfg.py", ["KEY = env()"], [f"KEY = '{AWS_ID}'"]))
        )
    )
    assert report.risk == Level.L0


def test_secret_in_report_is_l3(tmp_path: pathlib.Path) -> None:
    report = gate(
        write_results(tmp_path, with_test(), report='Used password = "s3cr3t-Value-9" to log in.\n')
    )
    assert codes(report) == {"secret_assignment"} and report.risk == Level.L3
    assert "s3cr3t" not in json.dumps(report.to_json())


def test_secret_in_logs_is_l3(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, with_test(), tests_log=f"env AWS={AWS_ID}\n"))
    assert codes(report) == {"secret_aws_key"}
    assert report.findings[0].path == "tests.log"


def test_secret_in_malformed_patch_is_still_found(tmp_path: pathlib.Path) -> None:
    patch = "--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n+" + f"k = '{AWS_ID}'\n"
    report = gate(write_results(tmp_path, with_test(patch)))
    assert {"patch_malformed", "secret_aws_key"} <= codes(report)


# --- stop conditions and change kinds ----------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "I could not run the tests because the database is unavailable.",
        "Tests were not run.",
        "No tests were run.",
        "Tests: not run",
        "Unable to execute integration tests in the sandbox.",
        "The tests have not been run yet.",
    ],
)
def test_tests_not_run_with_cannot_run_tests_is_l2(tmp_path: pathlib.Path, sentence: str) -> None:
    report = gate(
        write_results(tmp_path, with_test(modify("src/a.py")), report=f"# R\n{sentence}\n")
    )
    assert codes(report) == {"tests_not_run"} and report.risk == Level.L2


def test_tests_not_run_needs_the_stop_condition(tmp_path: pathlib.Path) -> None:
    req = request()
    req["stop_conditions"] = ["secrets-required"]
    report = gate(
        write_results(tmp_path, with_test(modify("src/a.py")), report="Tests were not run.\n"), req
    )
    assert report.risk == Level.L0


@pytest.mark.parametrize(
    "sentence", ["All tests were run and pass.", "pytest: 12 passed", "Ran the tests."]
)
def test_tests_that_ran_are_not_flagged(tmp_path: pathlib.Path, sentence: str) -> None:
    report = gate(write_results(tmp_path, with_test(modify("src/a.py")), report=sentence))
    assert report.risk == Level.L0


@pytest.mark.parametrize(
    "path",
    [
        "pyproject.toml",
        "requirements-dev.txt",
        "web/package.json",
        "Cargo.toml",
        "go.mod",
        "yarn.lock",
        "poetry.lock",
    ],
)
def test_dependency_changes_are_l1(tmp_path: pathlib.Path, path: str) -> None:
    req = request(allowed_globs=["**"])
    report = gate(write_results(tmp_path, with_test(modify(path))), req)
    assert codes(report) == {"dependency_change"} and report.risk == Level.L1


def test_no_tests_touched_is_l1(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, modify("src/a.py")))
    assert codes(report) == {"no_tests_touched"} and report.risk == Level.L1


@pytest.mark.parametrize(
    "path", ["src/app_test.go", "web/__tests__/x.js", "src/x.spec.ts", "tests/conftest.py"]
)
def test_test_files_are_recognised(tmp_path: pathlib.Path, path: str) -> None:
    report = gate(
        write_results(tmp_path, modify("src/a.py") + modify(path)), request(allowed_globs=["**"])
    )
    assert "no_tests_touched" not in codes(report)


def test_malformed_patch_is_l3(tmp_path: pathlib.Path) -> None:
    report = gate(write_results(tmp_path, "this is not a diff\n"))
    assert "patch_malformed" in codes(report) and report.risk == Level.L3


def test_findings_per_code_are_capped(tmp_path: pathlib.Path) -> None:
    patch = "".join(modify(f"lib/f{i}.py") for i in range(40))
    report = gate(write_results(tmp_path, with_test(patch)), request(max_files_changed=100))
    out = [f for f in report.findings if f.code == "path_out_of_scope"]
    assert len(out) == 26 and "15 more" in out[-1].message


# --- never raises ------------------------------------------------------------------------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(patch=st.text(max_size=300), report=st.text(max_size=200))
def test_arbitrary_patch_and_report_give_a_verdict(
    tmp_path: pathlib.Path, patch: str, report: str
) -> None:
    root = write_results(tmp_path / "r", patch, report=report)
    verdict = gate(root).to_json()
    assert verdict["risk"] in ("L0", "L1", "L2", "L3")


_JSON = json_values


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(req=_JSON, status=st.binary(max_size=80))
def test_arbitrary_request_and_status_give_a_verdict(
    tmp_path: pathlib.Path, req: Any, status: bytes
) -> None:
    root = write_results(tmp_path / "r", with_test())
    (root / "status.json").write_bytes(status)
    verdict = gate_results(json.dumps(req), root)
    assert verdict.risk == Level.L3  # an arbitrary value is never a valid request
