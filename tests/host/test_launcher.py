"""The background host: `ensure_host` starts exactly one, `jarvis host --stop` ends it.

Several processes racing `ensure_host` on one workspace start one host between them; the host a
console starts outlives the console; a host that cannot start is reported with its log.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.host.launcher import HostLaunchError, ensure_host, host_status, stop_host
from core.host.lock import HostLock
from jarvis_cli.defaults import host_command
from tests.host.hostkit import (
    START_TIMEOUT_S,
    HostProcess,
    assert_no_workers,
    cli,
    write_config,
)
from tests.processes import PipedProcess

pytestmark = pytest.mark.slow

_RACER = """
import json, sys, time
from pathlib import Path
from core.host.launcher import ensure_host
from jarvis_cli.defaults import host_command
ws, go = Path(sys.argv[1]), Path(sys.argv[2])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
started = ensure_host(ws, command=host_command(ws), timeout_s=float(sys.argv[3]))
print(json.dumps(started.pid if started else None), flush=True)
"""


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    write_config(root)
    yield root
    # A background host is detached: whatever a test left running is stopped here.
    pid = HostLock.holder(root)
    if pid:
        stop_host(root, timeout_s=15)
    assert_no_workers(root)


def test_concurrent_ensure_host_starts_exactly_one(ws: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    racers = [
        PipedProcess([sys.executable, "-c", _RACER, str(ws), str(go), str(START_TIMEOUT_S)])
        for _ in range(4)
    ]
    try:
        for racer in racers:
            assert racer.next_line("the racer to be ready") == "ready"
        go.touch()
        answers = []
        for racer in racers:
            assert racer.wait() == 0, racer.stderr
            answers.append(json.loads(racer.next_line("the racer's answer")))
    finally:
        for racer in racers:
            racer.close()
    started = [pid for pid in answers if pid is not None]
    assert len(started) == 1, answers
    assert host_status(ws) == started[0]
    log = (ws / "host.log").read_text()
    assert log.count("holds") == 1 and "already running" not in log, log


def test_ensure_host_returns_none_when_a_host_runs(ws: Path) -> None:
    host = HostProcess(ws)
    try:
        host.wait_started()
        assert ensure_host(ws, command=host_command(ws)) is None
        assert host_status(ws) == host.pid
    finally:
        host.stop()


def test_the_started_host_is_detached_and_stopped_by_the_cli(ws: Path) -> None:
    launched = ensure_host(ws, command=host_command(ws), timeout_s=START_TIMEOUT_S)
    assert launched is not None and launched.log_path == ws / "host.log"
    assert host_status(ws) == launched.pid
    stat = Path(f"/proc/{launched.pid}/stat").read_text().rsplit(")", 1)[1].split()
    assert int(stat[2]) == int(stat[3]) == launched.pid  # its own process group and session

    code, data = cli(ws, "host", "--stop")
    assert code == 0 and data == {
        "stopped": True,
        "pid": launched.pid,
        "message": f"Stopped the host on {ws} (pid {launched.pid}).",
    }
    assert host_status(ws) is None
    code, data = cli(ws, "host", "--stop")
    assert code == 1 and data["stopped"] is False and data["pid"] is None


def test_stop_on_a_missing_workspace_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    code, data = cli(missing, "host", "--stop")
    assert code == 1 and data["stopped"] is False
    assert not missing.exists()


def test_a_host_that_cannot_start_is_reported_with_its_log(ws: Path) -> None:
    (ws / "jarvis.toml").write_text("[workers]\nconcurrency = 0\n")
    with pytest.raises(HostLaunchError) as failed:
        ensure_host(ws, command=host_command(ws), timeout_s=START_TIMEOUT_S)
    assert "exited with code 2" in str(failed.value)
    assert "workers.concurrency" in str(failed.value)  # the tail of host.log
    assert host_status(ws) is None


def test_jarvis_tui_starts_a_host_that_outlives_the_console(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from jarvis_cli import run

    opened: list[tuple[Path, dict[str, Any], int | None]] = []

    class FakeApp:
        # What the launcher reads after run(): None unless the console chose an exit code.
        return_code: int | None = None

        def __init__(self, db: Path, **kwargs: Any) -> None:
            self.args = (db, kwargs)

        def run(self) -> None:
            opened.append((*self.args, host_status(ws)))

    # The console itself is not under test here: stand in for its module.
    fake = types.ModuleType("jarvis_tui.app")
    fake.JarvisApp = FakeApp  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jarvis_tui.app", fake)

    assert run(["tui", "--workspace", str(ws)]) == 0
    pid = host_status(ws)
    assert pid is not None, "the host must keep running after the console quits"
    # The host was up before the console opened.
    db = ws / "jarvis.db"
    ((seen_db, kwargs, seen_pid),) = opened
    # The operator's own file, read for the console (its theme, its keymap).
    assert kwargs.pop("personal").path.name == "config.toml"
    assert (seen_db, kwargs, seen_pid) == (db, {"store_at": db, "theme": None,
                                                "own_process": True}, pid)  # fmt: skip
    err = capsys.readouterr().err
    assert f"pid {pid}" in err and str(ws / "host.log") in err and "host --stop" in err

    # A second console attaches to the running host and starts none; --no-host starts none.
    assert run(["tui", "--workspace", str(ws)]) == 0
    assert host_status(ws) == pid and "keeps running" not in capsys.readouterr().err
    assert stop_host(ws) == pid
    assert run(["tui", "--workspace", str(ws), "--no-host"]) == 0
    assert host_status(ws) is None
    assert [console[2] for console in opened] == [pid, pid, None]


def test_jarvis_tui_on_a_shared_database_starts_no_host(
    ws: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from jarvis_cli import run

    opened: list[Any] = []

    class FakeApp:
        return_code: int | None = None

        def __init__(self, db: Path, **kwargs: Any) -> None:
            opened.append(kwargs["store_at"])

        def run(self) -> None:
            pass

    fake = types.ModuleType("jarvis_tui.app")
    fake.JarvisApp = FakeApp  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jarvis_tui.app", fake)
    assert run(["tui", "--workspace", str(ws), "--db", pg_url]) == 0
    assert host_status(ws) is None and opened == [pg_url]
    assert "this console starts no host" in capsys.readouterr().err
