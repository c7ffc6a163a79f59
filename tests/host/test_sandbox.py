"""The bubblewrap sandbox itself, with the real bwrap: what is writable, what a worker's
environment says, which signals reach the worker, and that nothing started in it outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from core.host.sandbox import (
    Probe,
    SandboxUnavailable,
    choose,
    confine,
    confined_env,
    probe,
    signal_confined,
    wrap,
)
from tests.host.hostkit import wait_until
from tests.processes import HANG_GUARD_S

FOUND = probe()
needs_bwrap = pytest.mark.skipif(
    FOUND.program is None, reason=f"bubblewrap cannot run here: {FOUND.problem}"
)


def test_the_sandbox_chosen_from_the_profile_and_the_machine() -> None:
    here, missing = Probe("/usr/bin/bwrap"), Probe(None, "bubblewrap is not installed")
    assert choose(None, here) == ("bwrap", None)
    assert choose(None, missing) == ("none", "bubblewrap is not installed")
    assert choose("none", here) == ("none", 'the profile says sandbox = "none"')
    with pytest.raises(SandboxUnavailable, match='asks for sandbox = "bwrap", but bubblewrap'):
        choose("bwrap", missing)


def test_a_confined_environment_has_its_own_home_and_no_host_xdg_folders(tmp_path: Path) -> None:
    env = {"HOME": "/root", "XDG_CONFIG_HOME": "/root/.config", "XDG_CACHE_HOME": "/c",
           "PATH": "/bin"}  # fmt: skip
    out = confined_env(env, home=tmp_path / "h", tmp=tmp_path / "t", keep={"XDG_CACHE_HOME"})
    assert out["HOME"] == str(tmp_path / "h") and out["TMPDIR"] == str(tmp_path / "t")
    assert "XDG_CONFIG_HOME" not in out and out["XDG_CACHE_HOME"] == "/c"
    assert (out["JARVIS_SANDBOX"], out["PATH"]) == ("bwrap", "/bin")


def test_unconfined_says_so_in_the_environment(tmp_path: Path) -> None:
    got = confine(["true"], {"HOME": "/root"}, configured="none", found=FOUND,
                  workspace_root=tmp_path, run_id="r1", writable=[], cwd=tmp_path)  # fmt: skip
    assert (got.argv, got.env, got.mode) == (["true"], {"HOME": "/root", "JARVIS_SANDBOX": "none"},
                                             "none")  # fmt: skip


@needs_bwrap
def test_only_the_writable_folders_can_be_written(tmp_path: Path) -> None:
    rw, ro = tmp_path / "rw", tmp_path / "ro"
    rw.mkdir()
    ro.mkdir()
    script = 'echo ok > rw/a; echo no > ro/b; echo home > "$HOME/c"; echo "$JARVIS_SANDBOX"'
    got = confine(
        ["sh", "-c", script],
        dict(os.environ), configured=None, found=FOUND, workspace_root=tmp_path, run_id="r1",
        writable=[rw], cwd=tmp_path,
    )  # fmt: skip
    done = subprocess.run(got.argv, env=got.env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=HANG_GUARD_S)  # fmt: skip
    assert done.stdout.strip() == "bwrap"
    assert "Read-only file system" in done.stderr
    assert (rw / "a").read_text() == "ok\n" and not (ro / "b").exists()
    assert (tmp_path / "sandbox" / "r1" / "home" / "c").read_text() == "home\n"


def test_a_folder_to_write_that_is_missing_stops_the_start(tmp_path: Path) -> None:
    if FOUND.program is None:
        pytest.skip("bubblewrap cannot run here")
    with pytest.raises(SandboxUnavailable, match="which its workers may write, is not a folder"):
        confine(["true"], {}, configured=None, found=FOUND, workspace_root=tmp_path,
                run_id="r1", writable=[tmp_path / "gone"], cwd=tmp_path)  # fmt: skip


@needs_bwrap
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_gentle_signal_reaches_the_worker_which_wraps_up(tmp_path: Path, sig: int) -> None:
    # bwrap's outer process leads the group: signalled, it would die and take the sandbox
    # with it at once. The worker gets the signal instead, and leaves in its own time.
    ready = tmp_path / "ready"
    script = (f"trap 'echo wrapped up; exit 7' {signal.Signals(sig).name[3:]}; "
              f"touch {ready}; while :; do sleep 0.05; done")  # fmt: skip
    argv = wrap(str(FOUND.program), ["sh", "-c", script], writable=[tmp_path], cwd=tmp_path)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_until(ready.exists, HANG_GUARD_S, "the worker to be ready")
        signal_confined(proc.pid, sig)
        out, _ = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert (proc.returncode, out.strip()) == (7, "wrapped up")


@needs_bwrap
def test_nothing_started_in_the_sandbox_outlives_the_worker(tmp_path: Path) -> None:
    # A daemon in its own session, which a process group's kill would miss.
    mark = f"JARVIS_SANDBOX_TEST={uuid.uuid4().hex}"
    ready = tmp_path / "daemon-ready"
    daemon = f"import os, time\nos.setsid()\nopen('{ready}', 'w').close()\ntime.sleep(600)\n"
    script = (f'env {mark} {sys.executable} -c "{daemon}" & '
              f"while [ ! -e {ready} ]; do sleep 0.05; done; exit 0")  # fmt: skip
    argv = wrap(str(FOUND.program), ["sh", "-c", script], writable=[tmp_path], cwd=tmp_path)
    done = subprocess.run(argv, start_new_session=True, timeout=HANG_GUARD_S, check=False)
    assert done.returncode == 0 and ready.exists()  # the daemon ran, and the worker left

    def left() -> list[str]:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if mark.encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                    found.append(pid)
            except OSError:
                continue
        return found

    wait_until(lambda: not left(), HANG_GUARD_S, "the daemon to go with its sandbox")
