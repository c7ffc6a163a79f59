"""A host asked to stop stops, even when its Python-level signal handler does not run (the
signal's number also reaches the loop through the wakeup pipe it reads every tick), and at once
when its loop is waiting for paths (the stop puts a wake-up on the queue)."""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
from pathlib import Path

from core.host.config import load_config
from core.host.host import Host
from core.workspace import Workspace
from tests.processes import HANG_GUARD_S


def test_sigterm_stops_the_loop_through_the_wakeup_pipe_alone(tmp_path: Path) -> None:
    workspace = Workspace.resolve(tmp_path / "ws")
    host = Host(workspace, load_config(workspace.root))
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        host.install_signal_handlers()
        assert not host.signals.asked()  # nothing arrived yet
        # As if the handler never ran: the signal is still written to the wakeup pipe.
        signal.signal(signal.SIGTERM, lambda *_: None)
        os.kill(os.getpid(), signal.SIGTERM)
        assert not host.stopping.is_set()
        assert host.signals.asked() and host.stopping.is_set()
    finally:
        faulthandler.unregister(signal.SIGUSR1)
        signal.set_wakeup_fd(-1)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if host.signals.pipe is not None:
            os.close(host.signals.pipe)


def test_a_stop_wakes_a_loop_waiting_for_paths_at_once(tmp_path: Path) -> None:
    workspace = Workspace.resolve(tmp_path / "ws")
    host = Host(workspace, load_config(workspace.root))
    done = threading.Event()

    def drain() -> None:
        host.inbox.drain(timeout=3600)  # an hour: only the stop's wake-up can end it in time
        done.set()

    waiting = threading.Thread(target=drain, daemon=True)
    waiting.start()
    host.stop()
    assert done.wait(HANG_GUARD_S), "the loop stayed in its wait after the stop"
    assert host.inbox.paths.empty()  # the wake-up is no path: nothing was ingested
