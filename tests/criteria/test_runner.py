"""The subprocess part of verification: environment, process groups, bounded output."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.criteria.runner import (
    ENV_FIXED,
    RunResult,
    child_env,
    looks_secret,
    render_tail,
    run_command,
)
from tests.criteria.helpers import PYTHON, Marked, wait_for_file

ENV = {"PATH": "/usr/bin:/bin"}


def py(code: str) -> list[str]:
    """This interpreter by its absolute path: the runner runs what it is given."""
    return [PYTHON, "-c", code]


def run(code: str, cwd: Path, *, timeout_s: float = 20, keep_bytes: int = 4096) -> RunResult:
    return run_command(py(code), cwd=cwd, env=ENV, timeout_s=timeout_s, keep_bytes=keep_bytes)


# --- environment --------------------------------------------------------------------------------


def test_child_env_keeps_only_the_allowlist_and_sets_fixed_values() -> None:
    parent = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "VIRTUAL_ENV": "/venv",
        "EDITOR": "vim",
        "PYTHONPATH": "/orchestrator",
        "TERM": "xterm-256color",
    }
    env = child_env(parent)
    assert env == {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "VIRTUAL_ENV": "/venv",
        **ENV_FIXED,
    }


def test_child_env_refuses_secret_names_even_when_asked_for() -> None:
    parent = {"PATH": "/bin", "NODE_OPTIONS": "x", "NPM_TOKEN": "t", "LC_SECRET": "s"}
    env = child_env(parent, extra_names={"NODE_OPTIONS", "NPM_TOKEN"})
    assert env["NODE_OPTIONS"] == "x"
    assert "NPM_TOKEN" not in env and "LC_SECRET" not in env


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "DB_PASSWORD",
        "CLIENT_SECRET",
        "SSH_AUTH_SOCK",
        "SENTRY_DSN",
        "DATABASE_URL",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "my_private_thing",
        "gpg_passphrase",
    ],
)
def test_secret_looking_names(name: str) -> None:
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV"])
def test_ordinary_names_do_not_look_secret(name: str) -> None:
    assert not looks_secret(name)


def test_the_command_sees_only_the_given_environment(tmp_path: Path) -> None:
    result = run("import os; print(' '.join(sorted(os.environ)))", tmp_path)
    names = set(result.tail.decode().split())
    # Python may set LC_CTYPE itself when it coerces the C locale (PEP 538).
    assert names - {"LC_CTYPE"} == {"PATH"}


# --- process groups -----------------------------------------------------------------------------


def test_children_left_running_after_the_command_exits_are_killed(tmp_path: Path) -> None:
    # The background child inherits stdout; without the kill the read would wait for it.
    marked = Marked()
    code = (
        "import subprocess, sys\n"
        "sleeper = [sys.executable, '-c', 'import time; time.sleep(600)']\n"
        f"child = subprocess.Popen([*sleeper, {marked.mark!r}])\n"
        "open('child.started', 'w').write('yes')\n"
        "print('done')\n"
    )
    try:
        result = run(code, tmp_path)
        wait_for_file(tmp_path / "child.started")
        # Not timed out: the child (600 s) would have held the output past the 20 s limit.
        assert (result.returncode, result.timed_out, result.tail) == (0, False, b"done\n")
        assert marked.gone()
    finally:
        marked.kill()


def test_a_child_in_its_own_session_does_not_hold_the_result_hostage(tmp_path: Path) -> None:
    marked = Marked()
    code = (
        "import subprocess, sys\n"
        "sleeper = [sys.executable, '-c', 'import time; time.sleep(60)']\n"
        f"child = subprocess.Popen([*sleeper, {marked.mark!r}], start_new_session=True)\n"
        "open('child.started', 'w').write('yes')\n"
    )
    try:
        result = run(code, tmp_path, timeout_s=30)
        wait_for_file(tmp_path / "child.started")
        # The child holds the output for 60 s, past the 30 s limit: reading until the output
        # closed would have timed out. It ends with the command (its namespace, or the tree).
        assert (result.returncode, result.timed_out) == (0, False)
        assert marked.gone()
    finally:
        marked.kill()


def test_closing_output_does_not_escape_the_time_limit(tmp_path: Path) -> None:
    code = "import os, time; print('bye', flush=True); os.close(1); time.sleep(30)"
    result = run(code, tmp_path, timeout_s=0.5)
    assert (result.returncode, result.timed_out, result.tail) == (None, True, b"bye\n")


def test_exit_status_and_signals_are_reported(tmp_path: Path) -> None:
    assert run("raise SystemExit(7)", tmp_path).returncode == 7
    killed = run("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", tmp_path)
    assert killed.returncode == -9


def test_stdin_is_empty(tmp_path: Path) -> None:
    assert run("import sys; print(repr(sys.stdin.read()))", tmp_path).tail == b"''\n"


def test_a_missing_program_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_command(["no-such-tool-anywhere"], cwd=tmp_path, env=ENV, timeout_s=5, keep_bytes=10)


# --- bounded output -----------------------------------------------------------------------------


def test_only_the_last_bytes_are_kept_however_much_is_printed(tmp_path: Path) -> None:
    code = "import sys\nfor _ in range(160): sys.stdout.write('a' * 65535 + '\\n')\nprint('END')"
    result = run(code, tmp_path, keep_bytes=100)
    assert result.total_bytes == 160 * 65536 + 4
    assert len(result.tail) == 100
    assert result.tail.endswith(b"a\nEND\n")


def test_stdout_and_stderr_are_interleaved_in_one_tail(tmp_path: Path) -> None:
    code = "import sys; print('out', flush=True); print('err', file=sys.stderr)"
    assert run(code, tmp_path).tail == b"out\nerr\n"


def test_render_tail_cuts_on_a_character_boundary() -> None:
    tail = ("é" * 10).encode()  # two bytes each
    text = render_tail(RunResult(0, False, tail, len(tail)), 5)
    assert text == "[output cut: the last 4 of 20 bytes]\néé"


def test_render_tail_leaves_short_output_alone() -> None:
    assert render_tail(RunResult(0, False, b"ok\n", 3), 4096) == "ok\n"
    assert render_tail(RunResult(0, False, b"", 0), 4096) == ""
