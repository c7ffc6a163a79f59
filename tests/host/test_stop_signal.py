"""A host asked to stop stops, even when its Python-level signal handler does not run: the
signal's number also reaches the loop through the wakeup pipe it reads every tick."""

from __future__ import annotations

import faulthandler
import os
import signal
from pathlib import Path

from core.host.config import load_config
from core.host.host import Host
from core.workspace import Workspace


def test_sigterm_stops_the_loop_through_the_wakeup_pipe_alone(tmp_path: Path) -> None:
    workspace = Workspace.resolve(tmp_path / "ws")
    host = Host(workspace, load_config(workspace.root))
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        host.install_signal_handlers()
        assert not host._stop_asked()  # nothing arrived yet
        # As if the handler never ran: the signal is still written to the wakeup pipe.
        signal.signal(signal.SIGTERM, lambda *_: None)
        os.kill(os.getpid(), signal.SIGTERM)
        assert not host.stopping.is_set()
        assert host._stop_asked() and host.stopping.is_set()
    finally:
        faulthandler.unregister(signal.SIGUSR1)
        signal.set_wakeup_fd(-1)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if host._signal_pipe is not None:
            os.close(host._signal_pipe)
