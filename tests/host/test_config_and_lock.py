from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from core.host.config import ConfigError, load_config
from core.host.lock import HostLock, HostLockHeld
from jarvis_cli.defaults import load_host_config
from tests.processes import PipedProcess


def test_an_empty_workspace_gets_working_defaults(tmp_path: Path) -> None:
    config = load_host_config(tmp_path)  # as `jarvis host` reads it
    assert config.workers.command[1:] == ["-m", "jarvis_sim.simworker"]
    assert config.workers.limit_for("jarvis-worker-1") == 1
    assert config.timeouts.steer_ack_s > 0 and not config.watch.poll


def test_a_worker_command_naming_the_simulators_old_module_runs_it_where_it_is_now(
    tmp_path: Path,
) -> None:
    # The simulated worker was `core.simworker` before it left the engine for `jarvis_sim`.
    (tmp_path / "jarvis.toml").write_text(
        '[workers]\ncommand = ["python3", "-m", "core.simworker", "-m", "x"]\n'
        '[workers.sim]\nagent = "command"\ncommand = ["python3", "-m", "core.simworker"]\n'
        '[workers.other]\nagent = "command"\ncommand = ["core.simworker", "-m", "core.x"]\n'
    )
    workers = load_host_config(tmp_path).workers
    assert workers.command == ["python3", "-m", "jarvis_sim.simworker", "-m", "x"]
    assert workers.profiles["sim"].command == ["python3", "-m", "jarvis_sim.simworker"]
    # Only a module after `-m` is renamed, and only one that moved.
    assert workers.profiles["other"].command == ["core.simworker", "-m", "core.x"]


def test_a_config_file_is_read_and_validated(tmp_path: Path) -> None:
    (tmp_path / "jarvis.toml").write_text(
        '[workers]\nconcurrency = 2\nlane_concurrency = { "jarvis-worker-9" = 0 }\n'
        "[timeouts]\nno_output_s = 5\n"
    )
    config = load_config(tmp_path)
    assert config.workers.limit_for("jarvis-worker-1") == 2
    assert config.workers.limit_for("jarvis-worker-9") == 0
    assert config.timeouts.no_output_s == 5


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[workers\n", "not valid TOML"),
        ("[workers]\nconcurrency = 0\n", "workers.concurrency"),
        ("[timeouts]\nno_output_s = -1\n", "timeouts.no_output_s"),
        ("[surprise]\nx = 1\n", "surprise"),
        ("[workers]\ncommand = []\n", "workers.command"),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path: Path, text: str, fragment: str) -> None:
    (tmp_path / "jarvis.toml").write_text(text)
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        load_config(tmp_path)


def test_poll_can_be_forced_by_flag_or_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_config(tmp_path, force_poll=True).watch.poll
    monkeypatch.setenv("JARVIS_POLL", "1")
    assert load_config(tmp_path).watch.poll


def test_a_second_host_is_refused_naming_the_holder(tmp_path: Path) -> None:
    with PipedProcess(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from core.host.lock import HostLock; "
         "HostLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(600)",
         str(tmp_path)],
    ) as holder:  # fmt: skip
        assert holder.next_line("the holder to take the lock") == "held"
        with pytest.raises(HostLockHeld) as refused:
            HostLock(tmp_path).acquire()
        assert refused.value.pid == holder.pid
        assert f"pid {holder.pid}" in str(refused.value)
        assert HostLock.holder(tmp_path) == holder.pid
    # The kernel drops a dead holder's lock: the next host starts.
    lock = HostLock(tmp_path)
    lock.acquire()
    assert HostLock.holder(tmp_path) == os.getpid()
    lock.release()
    assert HostLock.holder(tmp_path) is None
