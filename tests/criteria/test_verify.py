"""Mechanical verification of criteria: every type, and every refusal that keeps it safe."""

from __future__ import annotations

import errno
import json
import os
import shlex
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.contracts.criteria import ContentMatch, FileExists, TestPass, VerificationResults
from core.criteria import verify
from core.criteria.verify import (
    DEFAULT_POLICY,
    READ_LIMIT,
    command_key,
    verify_all,
    verify_criterion,
)
from tests.criteria.helpers import (
    HELPER_LIMIT_S,
    POLICY,
    PYTHON_NAME,
    SHORT,
    Marked,
    command,
    py,
    wait_for_file,
)

COMMAND_TYPES = ("test_pass", "command_success", "no_lint_errors")
CONTENT_TYPES = ("content_match", "changelog_updated", "backlog_updated")
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "Header.tsx").write_text("import x\nexport function Header() {}\n")
    (root / "CHANGELOG.md").write_text("# Changelog\n\n## 2026-02-15\n- header\n")
    (root / "BACKLOG.md").write_text("- [ ] later\n- [x] header component\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("root:x:0:0\n")
    return secret


def file_exists(path: str) -> dict[str, Any]:
    return {"type": "file_exists", "path": path, "description": "exists"}


def content(kind: str, path: str, pattern: str) -> dict[str, Any]:
    return {"type": kind, "path": path, "pattern": pattern, "description": "content"}


# --- file_exists -------------------------------------------------------------------------------


def test_file_exists_passes_for_a_file_and_a_directory(repo: Path) -> None:
    for path, kind in (("src/Header.tsx", "file"), ("src", "directory")):
        outcome = verify_criterion(file_exists(path), repo)
        assert (outcome.status, outcome.passed) == ("passed", True)
        assert outcome.output == f"{kind} exists: {path}"
        assert outcome.command_key is None


def test_file_exists_fails_for_a_missing_file(repo: Path) -> None:
    outcome = verify_criterion(file_exists("src/Footer.tsx"), repo)
    assert (outcome.status, outcome.passed) == ("failed", False)
    assert outcome.output == "missing: src/Footer.tsx"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/passwd", "src/../../x"])
def test_paths_that_leave_the_repository_are_refused(repo: Path, path: str) -> None:
    outcome = verify_criterion(file_exists(path), repo)
    assert outcome.status == "failed"
    assert outcome.output.startswith("refused:")


def test_a_symlink_out_of_the_repository_is_refused(repo: Path, outside: Path) -> None:
    (repo / "leak").symlink_to(outside / "secret.txt")
    (repo / "linkdir").symlink_to(outside)
    for path in ("leak", "linkdir/secret.txt"):
        outcome = verify_criterion(file_exists(path), repo)
        assert outcome.status == "failed"
        assert outcome.output == f"refused: {path!r} resolves outside the repository."
        read = verify_criterion(content("content_match", path, "root"), repo)
        assert read.status == "failed" and read.output.startswith("refused:")


def test_a_symlink_that_stays_inside_is_followed(repo: Path) -> None:
    (repo / "alias.tsx").symlink_to(repo / "src" / "Header.tsx")
    assert verify_criterion(file_exists("alias.tsx"), repo).passed
    assert verify_criterion(content("content_match", "alias.tsx", "Header"), repo).passed


def test_a_symlink_loop_is_refused_not_raised(repo: Path) -> None:
    (repo / "a").symlink_to(repo / "b")
    (repo / "b").symlink_to(repo / "a")
    outcome = verify_criterion(file_exists("a"), repo)
    assert outcome.status == "failed"
    assert outcome.output.startswith("refused:")


def test_a_validated_model_is_accepted_and_echoed_as_set(repo: Path) -> None:
    model = FileExists(type="file_exists", path="src/Header.tsx", description="exists")
    outcome = verify_criterion(model, repo)
    assert outcome.passed
    assert outcome.criterion == {
        "type": "file_exists",
        "path": "src/Header.tsx",
        "description": "exists",
    }


# --- content_match, changelog_updated, backlog_updated -----------------------------------------


@pytest.mark.parametrize(
    ("kind", "path", "pattern", "line"),
    [
        ("content_match", "src/Header.tsx", "^export.*Header", 2),
        ("changelog_updated", "CHANGELOG.md", r"^## \d{4}-\d{2}-\d{2}", 3),
        ("backlog_updated", "BACKLOG.md", r"\[x\]", 2),
    ],
)
def test_content_checks_pass_and_say_where(
    repo: Path, kind: str, path: str, pattern: str, line: int
) -> None:
    outcome = verify_criterion(content(kind, path, pattern), repo)
    assert outcome.status == "passed", outcome.output
    assert outcome.output.startswith(f"pattern found in {path} at line {line}: ")


@pytest.mark.parametrize("kind", CONTENT_TYPES)
def test_content_checks_fail_when_the_pattern_is_absent(repo: Path, kind: str) -> None:
    outcome = verify_criterion(content(kind, "BACKLOG.md", "^## 2099"), repo)
    assert outcome.status == "failed"
    assert outcome.output == "pattern '^## 2099' not found in BACKLOG.md"


@pytest.mark.parametrize("kind", CONTENT_TYPES)
def test_content_checks_fail_for_a_missing_file(repo: Path, kind: str) -> None:
    outcome = verify_criterion(content(kind, "changelogs/app.md", "x"), repo)
    assert (outcome.status, outcome.output) == ("failed", "missing: changelogs/app.md")


@pytest.mark.parametrize("kind", CONTENT_TYPES)
def test_a_bad_pattern_is_an_error_with_the_regex_message(repo: Path, kind: str) -> None:
    outcome = verify_criterion(content(kind, "BACKLOG.md", "(unclosed"), repo)
    assert outcome.status == "error"
    assert "missing ), unterminated subpattern" in outcome.output


def test_a_bad_pattern_that_slipped_past_validation_is_still_an_error(repo: Path) -> None:
    model = ContentMatch.model_construct(
        type="content_match", path="BACKLOG.md", pattern="[z-a]", description="bad"
    )
    outcome = verify_criterion(model, repo)
    assert outcome.status == "error"
    assert outcome.output.startswith("bad pattern '[z-a]': bad character range")


def test_a_fifo_is_refused_without_hanging(repo: Path) -> None:
    os.mkfifo(repo / "pipe")
    outcome = verify_criterion(content("content_match", "pipe", "x"), repo)
    assert (outcome.status, outcome.output) == ("failed", "not a regular file: pipe")


def test_a_directory_is_not_read_as_text(repo: Path) -> None:
    outcome = verify_criterion(content("content_match", "src", "x"), repo)
    assert (outcome.status, outcome.output) == ("failed", "not a regular file: src")


def test_only_the_first_read_limit_bytes_are_searched(repo: Path) -> None:
    (repo / "big.txt").write_bytes(b"a" * READ_LIMIT + b"\nNEEDLE\n")
    (repo / "early.txt").write_bytes(b"NEEDLE\n" + b"a" * READ_LIMIT)
    late = verify_criterion(content("content_match", "big.txt", "NEEDLE"), repo)
    assert late.status == "failed"
    assert late.output.endswith(f"(searched the first {READ_LIMIT} bytes only)")
    assert verify_criterion(content("content_match", "early.txt", "^NEEDLE$"), repo).passed


def test_invalid_utf8_is_read_with_replacement(repo: Path) -> None:
    (repo / "bin.dat").write_bytes(b"\xff\xfe header \x80 ok\n")
    assert verify_criterion(content("content_match", "bin.dat", "header .* ok"), repo).passed


def test_a_matched_line_is_masked_in_the_output(repo: Path) -> None:
    (repo / "config.py").write_text(f'GITHUB = "{TOKEN}"\n')
    outcome = verify_criterion(content("content_match", "config.py", "^GITHUB"), repo)
    assert outcome.passed
    assert TOKEN not in outcome.output
    assert "ghp_****" in outcome.output


# --- commands: pass, fail, time out -------------------------------------------------------------


@pytest.mark.parametrize("kind", COMMAND_TYPES)
def test_commands_pass_on_exit_zero_and_show_their_output(repo: Path, kind: str) -> None:
    outcome = verify_criterion(command(kind, "print('3 passed')"), repo, POLICY)
    assert (outcome.status, outcome.passed) == ("passed", True)
    assert outcome.output == "3 passed\n"
    assert outcome.command_key == command_key(py("print('3 passed')"))


@pytest.mark.parametrize("kind", COMMAND_TYPES)
def test_commands_fail_on_a_nonzero_exit(repo: Path, kind: str) -> None:
    code = "import sys; print('boom', file=sys.stderr); sys.exit(3)"
    outcome = verify_criterion(command(kind, code), repo, POLICY)
    assert outcome.status == "failed"
    assert outcome.output == "exit status 3\nboom\n"


def test_a_command_killed_by_a_signal_says_so(repo: Path) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    outcome = verify_criterion(command("command_success", code), repo, POLICY)
    assert outcome.status == "failed"
    assert outcome.output.startswith("killed by signal SIGTERM")


@pytest.mark.parametrize("kind", COMMAND_TYPES)
def test_commands_time_out(repo: Path, kind: str) -> None:
    code = "import time; print('started', flush=True); time.sleep(30)"
    outcome = verify_criterion(command(kind, code), repo, SHORT)
    assert (outcome.status, outcome.passed) == ("timed_out", False)
    assert outcome.output.startswith("timed out after 0.5 s; process group killed")
    assert outcome.output.endswith("started\n")
    assert outcome.duration_ms >= 400  # the limit, at least, passed (the sleep is 30 s)


def test_a_time_out_kills_grandchildren_too(repo: Path) -> None:
    marked = Marked()
    code = (
        "import subprocess, sys, time\n"
        "sleeper = [sys.executable, '-c', 'import time; time.sleep(600)']\n"
        f"child = subprocess.Popen([*sleeper, {marked.mark!r}])\n"
        "open('grandchild.started', 'w').write('yes')\n"
        "time.sleep(60)\n"
    )
    try:
        outcome = verify_criterion(
            command("test_pass", code), repo, replace(POLICY, timeout_s=HELPER_LIMIT_S)
        )
        wait_for_file(repo / "grandchild.started")
        assert outcome.status == "timed_out"
        assert marked.gone(), "the grandchild outlived the time-out"
    finally:
        marked.kill()


def test_a_criterion_timeout_wins_over_the_policy(repo: Path) -> None:
    code = "import time; time.sleep(0.8)"
    own = command("command_success", code, timeout_s=20)
    assert verify_criterion(own, repo, SHORT).status == "passed"
    assert verify_criterion(command("command_success", code), repo, SHORT).status == "timed_out"


def test_test_pass_with_a_pattern_needs_exit_zero_and_a_match(repo: Path) -> None:
    ok = command("test_pass", "print('15 tests passed')", pattern=r"\d+ tests passed")
    assert verify_criterion(ok, repo, POLICY).status == "passed"

    no_match = command("test_pass", "print('0 tests ran')", pattern=r"\d+ tests passed")
    outcome = verify_criterion(no_match, repo, POLICY)
    assert outcome.status == "failed"
    assert outcome.output.startswith(r"exit status 0, but output does not match '\\d+ tests")

    code = "import sys; print('15 tests passed'); sys.exit(1)"
    failing = command("test_pass", code, pattern="tests passed")
    assert verify_criterion(failing, repo, POLICY).output.startswith("exit status 1\n")


def test_test_pass_pattern_is_multiline(repo: Path) -> None:
    criterion = command("test_pass", "print('a'); print('OK'); print('z')", pattern="^OK$")
    assert verify_criterion(criterion, repo, POLICY).passed


def test_a_bad_test_pass_pattern_is_an_error_before_running(repo: Path) -> None:
    marker = repo / "ran"
    criterion = command("test_pass", f"open({str(marker)!r}, 'w')", pattern="(")
    outcome = verify_criterion(criterion, repo, POLICY)
    assert outcome.status == "error"
    assert "not a valid regular expression" in outcome.output
    assert not marker.exists()


def test_commands_run_in_their_cwd_inside_the_repository(repo: Path) -> None:
    criterion = command("command_success", "import os; print(os.getcwd())", cwd="src")
    outcome = verify_criterion(criterion, repo, POLICY)
    assert outcome.output.strip() == str((repo / "src").resolve())


def test_a_cwd_outside_the_repository_is_refused(repo: Path, outside: Path) -> None:
    (repo / "elsewhere").symlink_to(outside)
    marker = outside / "ran"
    for cwd in ("../outside", "elsewhere"):
        criterion = command("command_success", "open('ran', 'w')", cwd=cwd)
        outcome = verify_criterion(criterion, repo, POLICY)
        assert outcome.status == "failed"
        assert outcome.output.startswith("refused:")
    assert not marker.exists()


def test_a_cwd_that_is_not_a_directory_fails(repo: Path) -> None:
    criterion = command("command_success", "pass", cwd="src/Header.tsx")
    outcome = verify_criterion(criterion, repo, POLICY)
    assert (outcome.status, outcome.output) == ("failed", "cwd is not a directory: src/Header.tsx")


# --- output -------------------------------------------------------------------------------------


def test_output_keeps_the_tail_within_the_cap(repo: Path) -> None:
    code = "import sys\nfor i in range(20000): print(f'line {i:05d}')\nprint('THE END')"
    outcome = verify_criterion(command("command_success", code), repo, POLICY)
    assert outcome.passed
    header, _, kept = outcome.output.partition("\n")
    assert header.startswith("[output cut: the last ")
    assert header.endswith(" of 220008 bytes]")
    assert len(kept.encode()) <= POLICY.output_cap
    assert kept.endswith("line 19999\nTHE END\n")
    assert "line 00000" not in kept


def test_a_smaller_cap_is_honoured(repo: Path) -> None:
    code = "print('x' * 500 + 'TAIL')"
    outcome = verify_criterion(
        command("command_success", code), repo, replace(POLICY, output_cap=64)
    )
    kept = outcome.output.partition("\n")[2]
    assert len(kept.encode()) <= 64 and kept.endswith("xTAIL\n")


def test_secrets_in_output_are_masked(repo: Path) -> None:
    code = f"print('token: {TOKEN}'); print('AKIAABCDEFGHIJKLMNOP')"
    for kind, extra in (("command_success", ""), ("test_pass", "; raise SystemExit(1)")):
        outcome = verify_criterion(command(kind, code + extra), repo, POLICY)
        assert TOKEN not in outcome.output
        assert "AKIAABCDEFGHIJKLMNOP" not in outcome.output
        assert "ghp_****" in outcome.output and "AKIA****" in outcome.output


def test_a_secret_straddling_the_cut_is_still_masked(repo: Path) -> None:
    # The token begins before the last 40 bytes and ends inside them.
    code = f"print('x' * 200 + ' {TOKEN} ' + 'y' * 10)"
    outcome = verify_criterion(
        command("command_success", code), repo, replace(POLICY, output_cap=40)
    )
    assert TOKEN[-20:] not in outcome.output
    assert outcome.output.endswith("ghp_**** yyyyyyyyyy\n")


def test_secret_environment_variables_do_not_reach_the_command(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "GITHUB_TOKEN": "t1",
        "MY_API_KEY": "t2",
        "AWS_ACCESS_KEY_ID": "t3",
        "DB_PASSWORD": "t4",
        "CLIENT_SECRET": "t5",
        "SOME_PLAIN_SETTING": "t6",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    outcome = verify_criterion(command("command_success", code), repo, POLICY)
    env = json.loads(outcome.output)
    assert not set(secrets) & set(env)
    assert env["PATH"] == os.environ["PATH"]
    assert env["TERM"] == "dumb" and env["CI"] == "true"


def test_env_passthrough_adds_names_but_never_secret_ones(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=512")
    monkeypatch.setenv("DEPLOY_TOKEN", "t1")
    policy = replace(POLICY, env_passthrough=frozenset({"NODE_OPTIONS", "DEPLOY_TOKEN"}))
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    env = json.loads(verify_criterion(command("command_success", code), repo, policy).output)
    assert env["NODE_OPTIONS"] == "--max-old-space-size=512"
    assert "DEPLOY_TOKEN" not in env


# --- approval -----------------------------------------------------------------------------------


def test_an_unlisted_command_needs_approval_and_is_not_run(repo: Path) -> None:
    argv = py("open('marker', 'w').write('ran')")
    criterion = {"type": "command_success", "command": argv, "description": "marker"}
    outcome = verify_criterion(criterion, repo, DEFAULT_POLICY)
    assert (outcome.status, outcome.passed) == ("needs_approval", False)
    assert outcome.command_key == command_key(argv)
    assert "is not on the allowlist" in outcome.output
    assert not (repo / "marker").exists()

    approved = replace(DEFAULT_POLICY, approved=frozenset({command_key(argv)}))
    outcome = verify_criterion(criterion, repo, approved)
    assert outcome.status == "passed"
    assert (repo / "marker").read_text() == "ran"


def test_approval_is_for_the_exact_arguments(repo: Path) -> None:
    approved = replace(DEFAULT_POLICY, approved=frozenset({command_key(py("pass"))}))
    other = {"type": "command_success", "command": py("pass  "), "description": "other"}
    assert verify_criterion(other, repo, approved).status == "needs_approval"


def test_a_shell_command_needs_approval_even_when_its_words_are_allowlisted(repo: Path) -> None:
    script = "pytest --version > marker"
    criterion = {"type": "command_success", "command": script, "shell": True, "description": "s"}
    policy = replace(POLICY, allowlist=POLICY.allowlist | {"sh"})
    outcome = verify_criterion(criterion, repo, policy)
    assert outcome.status == "needs_approval"
    assert "runs through a shell" in outcome.output
    assert outcome.command_key == command_key(script, shell=True)
    assert not (repo / "marker").exists()


def test_an_approved_shell_command_runs_through_sh(repo: Path) -> None:
    script = "echo one && echo two > marker"
    criterion = {"type": "command_success", "command": script, "shell": True, "description": "s"}
    policy = replace(POLICY, approved=frozenset({command_key(script, shell=True)}))
    outcome = verify_criterion(criterion, repo, policy)
    assert (outcome.status, outcome.output) == ("passed", "one\n")
    assert (repo / "marker").read_text() == "two\n"


def test_a_string_command_is_split_not_given_to_a_shell(repo: Path) -> None:
    line = f"{shlex.quote(PYTHON_NAME)} -c 'import sys; print(sys.argv[1:])' ; touch x"
    criterion = {"type": "command_success", "command": line, "description": "split"}
    outcome = verify_criterion(criterion, repo, POLICY)
    # The `;` reaches python as an argument instead of starting a second command.
    assert (outcome.status, outcome.output) == ("passed", "[';', 'touch', 'x']\n")
    assert not (repo / "x").exists()


def test_the_approval_output_masks_secrets_in_the_command(repo: Path) -> None:
    argv = ["deploy", f"--token={TOKEN}"]
    criterion = {"type": "command_success", "command": argv, "description": "deploy"}
    outcome = verify_criterion(criterion, repo)
    assert outcome.status == "needs_approval"
    assert TOKEN not in outcome.output


# --- errors never raise -------------------------------------------------------------------------


def test_a_missing_executable_is_an_error(repo: Path) -> None:
    policy = replace(POLICY, allowlist=frozenset({"no-such-tool-anywhere"}))
    criterion = {"type": "test_pass", "command": "no-such-tool-anywhere --run", "description": "x"}
    outcome = verify_criterion(criterion, repo, policy)
    assert outcome.status == "error"
    assert outcome.output.startswith("command not found: 'no-such-tool-anywhere'")


def test_an_approved_file_that_is_not_executable_is_an_error(repo: Path) -> None:
    (repo / "pytest").write_text("#!/bin/sh\n")
    criterion = {"type": "test_pass", "command": ["./pytest"], "description": "x"}
    approved = replace(DEFAULT_POLICY, approved=frozenset({command_key(["./pytest"])}))
    outcome = verify_criterion(criterion, repo, approved)
    assert (outcome.status, outcome.output) == (
        "error",
        "command not found: './pytest' is not an executable file",
    )


def test_unbalanced_quotes_are_an_error(repo: Path) -> None:
    criterion = {"type": "test_pass", "command": "pytest -k 'open", "description": "x"}
    outcome = verify_criterion(criterion, repo)
    assert outcome.status == "error"
    assert outcome.output == "cannot split the command into arguments: No closing quotation"


def test_an_unexpected_os_error_becomes_an_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(verify, "run_command", broken)
    outcome = verify_criterion(command("command_success", "pass"), repo, POLICY)
    assert (outcome.status, outcome.output) == (
        "error",
        f"cannot start `{py('pass')[0]} -c pass`: Too many open files",
    )


def test_a_bug_in_a_verifier_does_not_escape(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(verify, "_dispatch", broken)
    outcome = verify_criterion(file_exists("src"), repo)
    assert (outcome.status, outcome.output) == ("error", "internal error: KeyError: 'surprise'")


@pytest.mark.parametrize(
    ("criterion", "message"),
    [
        ({"type": "tests_pass", "command": "pytest", "description": "x"}, "'type' must be one of"),
        ({"path": "x", "description": "x"}, "type is required"),
        ({"type": "file_exists", "description": "x"}, "path is required"),
        ({"type": "file_exists", "path": "x"}, "description is required"),
        ("file_exists", "expected an object"),
        (None, "expected an object"),
    ],
)
def test_invalid_criteria_are_errors(repo: Path, criterion: Any, message: str) -> None:
    outcome = verify_criterion(criterion, repo)
    assert outcome.status == "error"
    assert outcome.output.startswith("invalid criterion: ")
    assert message in outcome.output


def test_a_missing_repository_is_an_error(tmp_path: Path) -> None:
    outcome = verify_criterion(file_exists("x"), tmp_path / "gone")
    assert outcome.status == "error"
    assert outcome.output.startswith("repository not found:")


# --- verify_all and results ---------------------------------------------------------------------

NOW = datetime(2026, 2, 15, 11, 30, tzinfo=UTC)


def test_results_validate_and_pass_when_everything_passes(repo: Path) -> None:
    criteria: list[Any] = [
        file_exists("src/Header.tsx"),
        content("changelog_updated", "CHANGELOG.md", r"## \d{4}"),
        TestPass(type="test_pass", command=py("print('ok')"), description="tests"),
    ]
    verification = verify_all(criteria, repo, POLICY, now=lambda: NOW)
    assert verification.passed
    assert verification.pending_approval == []
    results = verification.results()
    VerificationResults.model_validate(results)
    assert results["verified_at"] == "2026-02-15T11:30:00.000Z"
    assert results["passed"] is True
    assert [r["passed"] for r in results["criteria_results"]] == [True, True, True]
    assert results["criteria_results"][0] == {
        "criterion": file_exists("src/Header.tsx"),
        "passed": True,
        "output": "file exists: src/Header.tsx",
        "duration_ms": results["criteria_results"][0]["duration_ms"],
    }
    assert json.loads(json.dumps(results)) == results


def test_results_fail_on_any_failure(repo: Path) -> None:
    verification = verify_all([file_exists("src"), file_exists("nope")], repo)
    assert not verification.passed
    assert verification.results(NOW)["passed"] is False


def test_pending_approvals_are_listed_once_and_block_passing(repo: Path) -> None:
    waiting = {"type": "command_success", "command": "deploy --now", "description": "d"}
    verification = verify_all([file_exists("src"), waiting, waiting], repo, now=lambda: NOW)
    assert verification.pending_approval == [command_key(["deploy", "--now"])]
    assert not verification.passed
    results = verification.results()
    VerificationResults.model_validate(results)
    assert results["passed"] is False
    assert results["criteria_results"][1]["output"].startswith("needs approval:")


def test_an_empty_list_passes(repo: Path) -> None:
    assert verify_all([], repo).results(NOW) == {
        "verified_at": "2026-02-15T11:30:00.000Z",
        "passed": True,
        "criteria_results": [],
    }
