"""The walk a completion takes, from a worker's exit to the run's verdict: which files of the
engine it goes through, and how often it climbs back into a file it had already left.

A real host runs in this process on a workspace with a real repository; the simulated worker
commits and prints its completion; the host's loop is traced from the function that takes an
ended worker (``--entry``, ``FILE:FUNCTION``) until it returns, the run moved. Every call into
a function of the engine (``core/``) is a step of the walk; a step from one file into another
that the walk has already been in is a climb back. The storage layer (``core/store/``) is
named apart: behind its interface, it is one room to a reader of the host.

    .venv/bin/python -m tests.bench.completion_walk
    .venv/bin/python -m tests.bench.completion_walk --entry core/host/host.py:_finish  # 618f690

Run by hand, like the benchmarks: it counts files, it times nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from core.host.config import load_config
from core.host.host import Host
from core.intake import submit_dispatch
from core.lifecycle import stage_of
from core.store.sqlite_store import SqliteStore
from core.workspace import Workspace
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "core"
REPO = "acme-labs/fleet-engine"
RUN = "task-20260222-901"
ENTRY = "core/host/outcomes.py:finish"
GUARD_S = 120.0


class Walk:
    """The calls into the engine made on one thread while the entry function runs."""

    def __init__(self, entry: str) -> None:
        path, _, self.function = entry.partition(":")
        self.entry_file = str(ROOT / path)
        self.steps: list[tuple[str, str, str]] = []
        """(caller's file, callee's file, function), in the order they were called."""
        self.done = threading.Event()
        self._frame: FrameType | None = None

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if self.done.is_set() or event not in ("call", "return"):
            return
        code = frame.f_code
        if self._frame is None:
            if (
                event == "call"
                and code.co_name == self.function
                and code.co_filename == self.entry_file
            ):
                self._frame = frame
                self.steps.append(("", code.co_filename, code.co_name))
            return
        if event == "return":
            if frame is self._frame:
                self.done.set()
            return
        if not code.co_filename.startswith(str(ENGINE)):
            return
        caller = frame.f_back
        while caller is not None and not caller.f_code.co_filename.startswith(str(ENGINE)):
            caller = caller.f_back
        source = caller.f_code.co_filename if caller is not None else ""
        self.steps.append((source, code.co_filename, code.co_name))

    def report(self, *, host_only: bool = False) -> dict[str, Any]:
        """Each function read once, in the order first called: the files it takes, and the
        functions reached by climbing back into a file the walk had left.

        ``host_only``: only the calls the host's own modules (``core/host/``) make: the walk
        as a reader of the host follows it, each call out of the host one step into the
        module that answers it, not further; the store's modules count as one, its interface.
        """
        files: list[str] = []
        climbs: list[str] = []
        read: set[tuple[str, str]] = set()
        host = str(ENGINE / "host")
        for source, target, function in self.steps:
            if host_only and source and not source.startswith(host):
                continue
            if (target, function) in read:
                continue
            read.add((target, function))
            name = str(Path(target).relative_to(ROOT))
            if host_only and name.startswith("core/store/"):
                name = "core/store/"
            was = str(Path(source).relative_to(ROOT)) if source else ""
            if name != was and name in files:
                climbs.append(f"{was} -> {name}:{function}")
            if name not in files:
                files.append(name)
        return {"files": files, "climbs_back": climbs}


def seed(root: Path) -> Workspace:
    origin = make_repo(
        root / "origin",
        {"README.md": "# fleet engine\n", "src/fleet_engine/retry.py": "RETRIES = 1\n"},
    )
    ws = root / "ws"
    ws.mkdir()
    (ws / "jarvis.toml").write_text(
        "[workers]\n"
        f'command = ["{sys.executable}", "-m", "jarvis_sim.simworker"]\n'
        'sandbox = "none"\n'
        f'[repos."{REPO}"]\npath = "{origin}"\nbase_ref = "main"\n'
    )
    workspace = Workspace.resolve(ws)
    store = SqliteStore(workspace.db_path)
    try:
        doc = dispatch_doc(
            RUN,
            input="Fix the retry counter in src/fleet_engine/retry.py. sim:ok",
            branch=f"jarvis-{RUN}",
        )
        result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                                 actor="walk")  # fmt: skip
        assert result.outcome == "enqueued", result.to_json()
    finally:
        store.close()
    return workspace


def measure(entry: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="jarvis-walk-") as tmp:
        workspace = seed(Path(tmp))
        host = Host(workspace, load_config(workspace.root))
        walk = Walk(entry)
        threading.setprofile(walk.profile)
        try:
            thread = threading.Thread(target=host.run, name="host-walked", daemon=True)
            thread.start()
        finally:
            threading.setprofile(None)  # type: ignore[arg-type]
        ended = walk.done.wait(GUARD_S)
        host.stop()
        thread.join(GUARD_S)
        if not ended:
            raise SystemExit(f"the walk never reached {entry}: is it the function that ends?")
        store = SqliteStore(workspace.db_path)
        try:
            run = store.get_run(RUN)
        finally:
            store.close()
        return {
            "verdict": stage_of(run).value if run else None,
            "whole": walk.report(),
            "host": walk.report(host_only=True),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entry", default=ENTRY, help=f"FILE:FUNCTION (default {ENTRY})")
    args = parser.parse_args(argv)
    report = measure(args.entry)
    print(f"verdict: {report['verdict']}")
    for key, title in (("host", "the host's walk"), ("whole", "every call of the engine")):
        walk = report[key]
        print(f"{title}: {len(walk['files'])} files, {len(walk['climbs_back'])} climbs back")
        for name in walk["files"]:
            print(f"  {name}")
        print("  climbs back:")
        for climb in walk["climbs_back"]:
            print(f"    {climb}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
