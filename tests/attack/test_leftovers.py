"""The attack harness leaves nothing behind: an attack that gives up, and a run that is
interrupted, end every host, worker and folder they made (`tests/attack/leftovers.py`).

Each test gives the harness its own token and temporary folder, then looks for what carries the
token or lives in the folder once the harness has gone.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tests.attack import leftovers
from tests.attack.kit import ROOT
from tests.processes import HANG_GUARD_S, PipedProcess, wait_until

pytestmark = pytest.mark.slow

#: An attack that starts a host and a worker, kills the host so the worker is an orphan of
#: nobody in the harness, then gives up waiting for something that never comes.
GIVES_UP = """
import json, os, sys
from pathlib import Path
from core.store.sqlite_store import SqliteStore
from tests.attack.kit import Figures, main, workspace
from tests.host.hostkit import HostProcess, dispatch, wait_until, workers_of, write_config

def attack(args):
    with workspace("gives-up") as ws:
        write_config(ws, no_output_s=600)
        store = SqliteStore(ws / "jarvis.db")
        dispatch(store, "slow-1", scenario="slow")
        store.close()
        host = HostProcess(ws, interval="60000,60000")
        host.wait_started()
        worker = wait_until(lambda: workers_of(ws), 120, "a worker")[0]
        host.kill()
        Path(os.environ["PIDS"]).write_text(json.dumps({"host": host.pid, "worker": worker,
                                                         "ws": str(ws)}))
        wait_until(lambda: False, 0, "something that never comes")
    return Figures("gives up")

if __name__ == "__main__":
    import argparse
    main(attack, argparse.ArgumentParser())
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _harness_env(tmp_path: Path) -> tuple[dict[str, str], leftovers.Scope]:
    temp = tmp_path / "tmp"
    temp.mkdir()
    token = uuid.uuid4().hex
    env = dict(os.environ, TMPDIR=str(temp), PIDS=str(tmp_path / "pids.json"))
    env[leftovers.TOKEN] = token
    env.pop("JARVIS_ATTACK_KEEP", None)
    return env, leftovers.Scope(token, temp)


def test_an_attack_that_gives_up_ends_its_host_and_the_orphaned_worker(tmp_path: Path) -> None:
    script = tmp_path / "gives_up.py"
    script.write_text(textwrap.dedent(GIVES_UP))
    env, scope = _harness_env(tmp_path)
    env["PYTHONPATH"] = str(ROOT)
    with PipedProcess([sys.executable, str(script)], env=env, cwd=ROOT) as attack:
        code = attack.wait()
        out = attack.stdout
    pids = json.loads((tmp_path / "pids.json").read_text())
    assert not _alive(pids["worker"]), "the orphaned worker outlived the attack"
    assert not _alive(pids["host"])
    assert leftovers.found(scope) == []
    assert list(scope.root.iterdir()) == [], "the attack's folders were left behind"
    # It broke, and said why, as figures: no traceback.
    assert code == 1, out + attack.stderr
    assert "the attack stopped" in out and "something that never comes" in out
    assert "Traceback" not in attack.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_an_interrupted_run_all_ends_every_attack_process(
    tmp_path: Path, signum: signal.Signals
) -> None:
    env, scope = _harness_env(tmp_path)

    def hosts() -> list[int]:
        return [p for p in leftovers.found(scope) if b"\0host\0" in _cmdline(p)]

    argv = [sys.executable, "-m", "tests.attack.run_all", "--only", "crash"]
    with PipedProcess(argv, env=env, cwd=ROOT) as run_all:
        host = wait_until(hosts, "a host of the crash attack", describe=lambda: run_all.stderr)[0]
        run_all.send_signal(signum)
        code = run_all.wait(HANG_GUARD_S)
    assert not _alive(host)
    assert leftovers.found(scope) == []
    assert list(scope.root.iterdir()) == [], "the attacks' folders were left behind"
    assert code == (130 if signum == signal.SIGINT else 128 + signum), run_all.stderr
    assert "Traceback" not in run_all.stderr


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
