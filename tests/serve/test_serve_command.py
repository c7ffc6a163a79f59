"""`jarvis serve` as a process: what it refuses (exit 2, a sentence), the host it starts once
for the workspace and leaves running, and how it stops."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_cli.serve_access import TOKEN_ENV_VAR
from tests.processes import HANG_GUARD_S, PipedProcess

JARVIS = [sys.executable, "-m", "jarvis_cli"]
TOKEN = "chosen-token-0123456789"


def _serve(workspace: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "jarvis_cli", "serve", "--workspace", str(workspace), *args],
        capture_output=True, text=True, timeout=HANG_GUARD_S, stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    return done.returncode, done.stderr


def test_a_bad_bind_exits_2_before_any_workspace_is_made(tmp_path: Path) -> None:
    code, err = _serve(tmp_path / "ws", "--no-host", "--bind", "0.0.0.0")
    assert code == 2
    assert err.startswith("jarvis: --bind takes HOST:PORT"), err
    assert "Traceback" not in err
    assert not (tmp_path / "ws").exists()


def test_a_port_in_use_is_said_and_exits_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = _serve(tmp_path / "ws", "--no-host", "--bind", f"127.0.0.1:{port}")
    assert code == 2
    assert f"jarvis: 127.0.0.1:{port} is already in use" in err, err
    assert "Traceback" not in err


def test_a_weak_configured_token_is_refused(tmp_path: Path) -> None:
    code, err = _serve(
        tmp_path / "ws", "--no-host", "--bind", "127.0.0.1:0", env={TOKEN_ENV_VAR: "short"}
    )
    assert code == 2
    assert f"${TOKEN_ENV_VAR} must be at least 16 characters" in err, err


@pytest.mark.slow
def test_the_host_is_started_once_and_keeps_running_when_serving_stops(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    serve = [*JARVIS, "serve", "--workspace", str(workspace)]
    try:
        # A chosen token stays the server's: neither the host nor its workers inherit it.
        env = {**os.environ, TOKEN_ENV_VAR: TOKEN}
        with PipedProcess([*serve, "--bind", "127.0.0.1:0"], env=env) as first:
            out = first.wait_for_stdout(b"Ctrl-C", "the server's start")
            assert "Ctrl-C stops serving; the host it started keeps running." in out
            assert f"needs the token of ${TOKEN_ENV_VAR}" in out and TOKEN not in out
            # A second server on the same workspace finds the host and starts none.
            with PipedProcess([*serve, "--bind", "127.0.0.1:0"]) as second:
                again = second.wait_for_stdout(b"Ctrl-C", "the second server's start")
                assert "Ctrl-C stops serving." in again
                second.send_signal(signal.SIGTERM)
                assert second.wait() == 0
            first.send_signal(signal.SIGINT)
            assert first.wait() == 0
            said = re.search(r"the host started for this server \(pid (\d+)\) keeps running",
                             first.stderr)  # fmt: skip
            assert said is not None, first.stderr
            assert "Traceback" not in first.stderr + second.stderr
        host_env = Path(f"/proc/{said.group(1)}/environ").read_bytes()  # still running
        assert TOKEN_ENV_VAR.encode() not in host_env and TOKEN.encode() not in host_env
    finally:
        stop = [*JARVIS, "host", "--stop", "--workspace", str(workspace), "--json"]
        stopped = subprocess.run(stop, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def test_what_it_prints_is_inert_text(tmp_path: Path) -> None:
    workspace = tmp_path / "ws\x1b[2J"
    argv = [*JARVIS, "serve", "--workspace", str(workspace), "--no-host", "--bind", "0.0.0.0:0"]
    with PipedProcess(argv) as server:
        out = server.wait_for_stdout(b"Ctrl-C", "the server's start")
        server.send_signal(signal.SIGTERM)
        assert server.wait() == 0
    assert "\x1b" not in out and "ws\\x1b[2J" in out
    # The token made for this run is printed whole, though output masks what looks secret.
    token = re.search(r"\?token=(\S+)", out)
    assert token is not None and len(token.group(1)) == 32 and "*" not in token.group(1), out


def test_a_page_console_gets_the_theme_given_and_none_when_none_is(tmp_path: Path) -> None:
    from core.workspace import Workspace
    from jarvis_cli.serve import console_command

    workspace = Workspace(tmp_path)
    # Without --theme the console chooses (the operator's remembered theme); an empty --theme
    # '' would have ended every page's console at once with unknown_theme.
    assert "--theme" not in shlex.split(console_command(workspace, None))
    assert shlex.split(console_command(workspace, "nord"))[-2:] == ["--theme", "nord"]
