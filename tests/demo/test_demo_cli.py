"""`jarvis demo` as a real process tree: live work at once, and nothing left behind after it.

The console is replaced by the hidden ``--no-console SECONDS`` mode (host and fleet without the
screen). Each test then ends the demo a different way — its own timer, SIGTERM, ``kill -9`` —
and checks /proc: no process whose environment or command line names the workspace survives.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.cli.conftest import jarvis
from tests.gitrepo import run_git
from tests.host.hostkit import wait_until
from tests.processes import HANG_GUARD_S, PipedProcess

pytestmark = pytest.mark.slow

#: Only stops a hung test; how soon live work shows is a benchmark figure, not a test's.
LIVE_TIMEOUT_S = HANG_GUARD_S


def referencing(path: Path) -> list[int]:
    """Live processes (not this one) whose environment or command line mentions ``path``."""
    needle = str(path).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            blobs = [Path(f"/proc/{entry}/{name}").read_bytes() for name in ("cmdline", "environ")]
        except OSError:
            continue
        if any(needle in blob for blob in blobs):
            found.append(int(entry))
    return found


def workers(path: Path) -> list[int]:
    needle = f"JARVIS_IPC_DIR={path}/".encode()
    found = []
    for pid in referencing(path):
        try:
            if needle in Path(f"/proc/{pid}/environ").read_bytes():
                found.append(pid)
        except OSError:
            pass
    return found


def assert_nothing_left(path: Path, *, at_once: bool = False) -> None:
    """No process of ``path`` is alive: at once, or once the kernel has ended what was killed."""
    try:
        if at_once:
            assert not referencing(path), f"left: {referencing(path)}"
        wait_until(lambda: not referencing(path), HANG_GUARD_S, f"every process of {path} to end",
                   lambda: f"left: {referencing(path)}")  # fmt: skip
    finally:
        for pid in referencing(path):  # never leak into the rest of the suite
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def start_demo(*args: str, env_extra: dict[str, str] | None = None) -> PipedProcess:
    """`jarvis demo` with its output read all along (see `tests.processes`)."""
    env = dict(os.environ)
    env["JARVIS_SIM_INTERVAL_MS"] = "20,60"  # quick runs; the demo's own pace is for watching
    env.pop("JARVIS_WORKSPACE", None)
    env.update(env_extra or {})
    return PipedProcess([sys.executable, "-m", "jarvis_cli", "demo", *args], env=env)


def refused_codes(errors: Path) -> set[str]:
    """Why each quarantined file was refused; a file without its reason counts as ``?``."""
    codes = set()
    for moved in errors.glob("*"):
        if moved.name.endswith(".reason.json"):
            continue
        reason = moved.with_name(moved.name + ".reason.json")
        codes.add(json.loads(reason.read_text())["code"] if reason.is_file() else "?")
    return codes


def live_states(ws: Path) -> dict[str, str]:
    """The fleet's runs: every seeded one was created at least a few minutes ago."""
    since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    try:
        conn = sqlite3.connect(f"file:{ws / 'jarvis.db'}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute(
                "SELECT run_id, state, created_at FROM runs WHERE source_lane != 'openclaw'"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}
    return {run_id: state for run_id, state, created in rows if created >= since[:23]}


def test_demo_shows_live_work_and_leaves_nothing_behind(tmp_path: Path) -> None:
    ws = tmp_path / "demo"
    with start_demo("--workspace", str(ws), "--no-console", "4", "--interval", "0.3") as demo:
        wait_until(lambda: "running" in live_states(ws).values() or None, LIVE_TIMEOUT_S,
                   "a live run to be running")  # fmt: skip
        ended = {"review_requested", "failed_contract", "failed"}
        wait_until(lambda: ended & set(live_states(ws).values()), LIVE_TIMEOUT_S,
                   "a live run to end its attempt", lambda: str(live_states(ws)))  # fmt: skip
        _, err = demo.communicate()
    assert demo.returncode == 0, err
    assert "past runs seeded" in err and "kept at" in err
    assert_nothing_left(ws)
    # The workspace was given, so it stays; the fleet's files were all accepted but for a steer
    # that lost the race with its run's end (the fleet looks at the state before it writes).
    assert (ws / "jarvis.db").is_file() and (ws / "host.log").is_file()
    assert refused_codes(ws / "data" / "ipc" / "errors") <= {"not_running"}
    assert "Traceback" not in (ws / "host.log").read_text()


def test_sigterm_stops_the_tree_and_removes_the_temporary_workspace(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    with start_demo("--no-console", "60", env_extra={"TMPDIR": str(tmp)}) as demo:
        ws = wait_until(lambda: next(tmp.glob("jarvis-demo-*"), None), LIVE_TIMEOUT_S,
                        "the temporary workspace")  # fmt: skip
        wait_until(lambda: workers(ws), LIVE_TIMEOUT_S, "a worker process")
        demo.send_signal(signal.SIGTERM)
        _, err = demo.communicate()
    # 128 + SIGTERM is the demo's own handler answering (the default action would leave -15),
    # and the demo would otherwise have run its full 60 s.
    assert demo.returncode == 128 + signal.SIGTERM, err
    assert_nothing_left(ws, at_once=True)  # the demo waits for its tree before it exits
    # It says what it stops before it waits (the screen stayed blank for half a minute), and
    # takes the workspace away at once, deleting it in the background.
    said = err.splitlines()
    stopping = said.index("jarvis demo: stopping the host, its workers and the fleet…")
    assert said[stopping + 1] == "jarvis demo: stopped."
    assert "jarvis demo: the temporary workspace is being removed in the background." in said
    assert not ws.exists(), "the workspace is still where it was when the demo exited"
    wait_until(lambda: not list(tmp.iterdir()), HANG_GUARD_S, "the background removal")


def test_kill_9_of_the_demo_orphans_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "demo"
    with start_demo("--workspace", str(ws), "--no-console", "60") as demo:
        wait_until(lambda: workers(ws), LIVE_TIMEOUT_S, "a worker process")
        demo.send_signal(signal.SIGKILL)  # the demo cleans up nothing; the parent-death signal must
        demo.wait()
        assert_nothing_left(ws)


def demo_workspaces(tmp: Path) -> list[Path]:
    """The demos' workspaces in ``tmp``; not one taken away and being deleted in the background
    (``jarvis-demo-removing-…``), which may still be there when its demo has exited."""
    return [p for p in tmp.glob("jarvis-demo-*") if not p.name.startswith("jarvis-demo-removing-")]


def test_the_next_demo_removes_a_killed_demos_workspace_but_not_a_running_ones(
    tmp_path: Path,
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp)}
    killed = start_demo("--no-console", "60", env_extra=env)
    running = None
    try:
        left = wait_until(lambda: next(tmp.glob("jarvis-demo-*"), None), LIVE_TIMEOUT_S,
                          "the first demo's workspace")  # fmt: skip
        wait_until(lambda: workers(left), LIVE_TIMEOUT_S, "a worker process")
        killed.send_signal(signal.SIGKILL)  # its workspace stays behind
        killed.wait()
        assert_nothing_left(left)
        assert left.is_dir()

        running = start_demo("--no-console", "60", env_extra=env)
        live = wait_until(lambda: next((p for p in demo_workspaces(tmp) if p != left), None),
                          LIVE_TIMEOUT_S, "the second demo's workspace")  # fmt: skip
        wait_until(lambda: workers(live), LIVE_TIMEOUT_S, "the second demo's worker")
        assert not left.exists(), "the killed demo's workspace is still there"

        with start_demo("--no-console", "0.5", env_extra=env) as third:
            _, err = third.communicate()
        assert third.returncode == 0, err
        assert live.is_dir(), "a running demo's workspace was removed"
        assert "left behind by a demo that was killed" not in err
        assert demo_workspaces(tmp) == [live]  # the third took its own away
    finally:
        said = ""
        for demo in (killed, running):
            if demo is not None:
                if demo.returncode is None:
                    demo.send_signal(signal.SIGTERM)
                    said = demo.communicate()[1]
                demo.close()
    assert running is not None and running.returncode == 128 + signal.SIGTERM, said
    assert f"removed {left}, left behind by a demo that was killed" in said
    # The running demo's own workspace is taken away at once and deleted in the background.
    wait_until(lambda: not list(tmp.glob("jarvis-demo-*")), HANG_GUARD_S,
               "the background removal", lambda: str(list(tmp.glob("*"))))  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--theme", "no-such-theme"], "is not a console theme"),
        (["--interval", "0"], "--interval must be a positive number"),
    ],
)
def test_bad_demo_arguments_are_usage_errors(args: list[str], says: str, tmp_path: Path) -> None:
    result = jarvis("demo", *args, "--workspace", tmp_path / "ws")
    assert result.code == 2 and says in result.stderr
    assert not (tmp_path / "ws").exists()  # refused before anything was made


def test_the_demo_refuses_a_workspace_with_something_in_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = jarvis("demo", "--workspace", tmp_path, "--no-console", "0")
    assert result.code == 2 and "empty or absent" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_jarvis_alone_opens_the_console(monkeypatch: pytest.MonkeyPatch) -> None:
    import jarvis_cli
    from jarvis_cli import run, tui

    seen: list[tuple[str | None, str | None, bool]] = []

    def fake(args: object) -> int:
        seen.append((args.workspace, args.theme, args.no_host))  # type: ignore[attr-defined]
        return 0

    monkeypatch.setattr(tui, "run", fake)
    # As in a terminal: without one, bare `jarvis` refuses (tests/cli/test_no_terminal.py).
    monkeypatch.setattr(jarvis_cli, "has_terminal", lambda: True)
    assert run([]) == 0
    # No theme given: the console takes the one last chosen in the palette, else jarvis-dark.
    assert seen == [(None, None, False)]


def _verified_run(ws: Path) -> str | None:
    """A live run whose git gates all passed: real commits in a real repository, its branch
    brought into the demo's repository by the host (which it does only after every git gate)."""
    try:
        conn = sqlite3.connect(f"file:{ws / 'jarvis.db'}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute(
                "SELECT run_id FROM gate_results WHERE name IN "
                "('commit_exists', 'commit_on_branch', 'files_match_diff', 'secrets_in_diff', "
                "'refs_unmoved') AND status = 'passed' GROUP BY run_id, attempt HAVING COUNT(*) = 5"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return rows[0][0] if rows else None


def test_the_demo_works_on_real_repositories(tmp_path: Path) -> None:
    ws = tmp_path / "demo"
    with start_demo("--workspace", str(ws), "--no-console", "120", "--interval", "0.3") as demo:
        run_id = wait_until(lambda: _verified_run(ws), LIVE_TIMEOUT_S,
                            "a live run whose claims git confirmed")  # fmt: skip
        demo.send_signal(signal.SIGTERM)
        _, err = demo.communicate()
    assert demo.returncode == 128 + signal.SIGTERM, err
    assert_nothing_left(ws)
    repos = sorted(p.name for p in (ws / "demo-repos").iterdir())
    assert repos == ["billing-api.git", "fleet-dashboard.git", "fleet-engine.git",
                     "infra-tools.git"]  # fmt: skip
    conn = sqlite3.connect(ws / "jarvis.db")
    try:
        repo_dir, branch, head = conn.execute(
            "SELECT repo_dir, branch, head_commit FROM run_git WHERE run_id = ?", [run_id]
        ).fetchone()
    finally:
        conn.close()
    # The worker's commit is on its branch in the demo's bare repository.
    assert run_git(Path(repo_dir), "rev-parse", f"refs/heads/{branch}") == head
