"""An approved run's merge holds no store lock while git works: with the host's git stopped in
the middle of moving the base branch, another operator's writes and the host's own work go on,
on SQLite and on PostgreSQL (whose writers share one fleet-wide lock). Released, the merge
finishes and the run is done. A host killed with -9 just after git moved the base merges
again when it restarts, finds the merge done, and records it once."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from core import operator_actions
from core.intake import submit_dispatch
from core.store.api import RunStore
from core.store.location import open_store
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import HostProcess, running_host, wait_until, write_config
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

REPO = "acme-labs/fleet-engine"


def slow_git(gate: Path, *, after: bool = False) -> Path:
    """A ``git`` that stops before moving ``main`` (an ``update-ref`` of it; ``after``: once it
    moved it) until the test says: it marks ``gate/blocked``, then waits for ``gate/release``.
    Anything else is git."""
    real = shutil.which("git")
    assert real is not None
    folder = gate / "bin"
    folder.mkdir(parents=True)
    script = folder / "git"
    script.write_text(
        "#!/bin/sh\n"
        'ref=""; main=""\n'
        'for a in "$@"; do\n'
        '  [ "$a" = update-ref ] && ref=1\n'
        '  [ "$a" = refs/heads/main ] && main=1\n'
        "done\n"
        'if [ -n "$ref" ] && [ -n "$main" ]; then\n'
        + (f'  "{real}" "$@" || exit $?\n' if after else "")
        + f'  touch "{gate}/blocked"\n'
        f'  while [ ! -e "{gate}/release" ]; do sleep 0.05; done\n'
        + ("  exit 0\n" if after else "")
        + "fi\n"
        f'exec "{real}" "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def enqueue(store: RunStore, run_id: str) -> None:
    task = "Fix the retry counter in src/fleet_engine/retry.py. sim:ok"
    doc = dispatch_doc(run_id, branch=f"jarvis-{run_id}", input=task)
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def merge_workspace(tmp_path: Path, store_url: str | None = None) -> tuple[Path, Path, str | Path]:
    """A workspace whose runs work on a bare ``origin``: the workspace, the repository, and
    where its store is (``store_url``, else its SQLite file)."""
    origin = make_repo(tmp_path / "origin.git", {"src/fleet_engine/retry.py": "RETRIES = 1\n"},
                       bare=True)  # fmt: skip
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config(ws, no_output_s=60)
    with (ws / "jarvis.toml").open("a") as toml:
        toml.write(f'[repos."{REPO}"]\npath = "{origin}"\nbase_ref = "main"\n')
        if store_url is not None:
            toml.write(f'[store]\nurl = "{store_url}"\n')
    return ws, origin, store_url if store_url is not None else ws / "jarvis.db"


def stage(store: RunStore, run_id: str) -> tuple[str, str | None]:
    run = store.get_run(run_id) or {}
    return str(run.get("state")), run.get("merge_state")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_slow_merge_holds_up_no_other_writer(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    url = str(request.getfixturevalue("pg_url")) if backend == "postgres" else None
    ws, origin, location = merge_workspace(tmp_path, url)
    gate = tmp_path / "gate"
    path = f"{slow_git(gate)}{os.pathsep}{os.environ.get('PATH', '')}"
    store = open_store(location)
    try:
        enqueue(store, "r1")
        with running_host(ws, env={"PATH": path}):
            wait_until(lambda: stage(store, "r1") == ("review_requested", None), HANG_GUARD_S,
                       "r1 to reach review")  # fmt: skip
            assert operator_actions.approve(store, "r1", "ana").ok
            wait_until(lambda: (gate / "blocked").exists(), HANG_GUARD_S,
                       "the host's git to stop before moving main")  # fmt: skip
            try:
                # git is stopped mid-merge. Another operator writes (a dispatch and a cancel,
                # each a write transaction): on its own thread, so a held lock shows as a wait
                # that never ends rather than a test that hangs.
                wrote = threading.Event()

                def write() -> None:
                    other = open_store(location)  # another operator's connection
                    try:
                        doc = dispatch_doc("r2", branch="jarvis-r2")
                        submit_dispatch(other, doc, source_lane="main",
                                        target_lane="nobody-serves", actor="ben")  # fmt: skip
                        assert operator_actions.cancel(other, "r2", "ben", "not needed").ok
                        wrote.set()
                    finally:
                        other.close()

                writer = threading.Thread(target=write, daemon=True)
                writer.start()
                assert wrote.wait(HANG_GUARD_S), "another operator's write waited on the merge"
                # The host's own loop goes on too: a new run is taken, worked and gated.
                enqueue(store, "r3")
                wait_until(lambda: stage(store, "r3") == ("review_requested", None),
                           HANG_GUARD_S, "r3 to reach review while r1 merges")  # fmt: skip
                # All of that while the merge was still stopped in git.
                assert stage(store, "r1") == ("review_requested", "merging")
                assert not (gate / "release").exists()
                assert stage(store, "r2") == ("failed", None)
            finally:
                (gate / "release").touch()
            wait_until(lambda: stage(store, "r1") == ("done", None), HANG_GUARD_S,
                       "r1's merge to finish once git goes on")  # fmt: skip
        assert run_git(origin, "rev-parse", "main") == run_git(origin, "rev-parse", "jarvis-r1")
    finally:
        store.close()


def test_a_host_killed_just_after_git_moved_the_base_records_the_merge_once(
    tmp_path: Path,
) -> None:
    ws, origin, location = merge_workspace(tmp_path)
    gate = tmp_path / "gate"
    path = f"{slow_git(gate, after=True)}{os.pathsep}{os.environ.get('PATH', '')}"
    store = open_store(location)
    try:
        enqueue(store, "r1")
        host = HostProcess(ws, env={"PATH": path})
        try:
            host.wait_started()
            wait_until(lambda: stage(store, "r1") == ("review_requested", None), HANG_GUARD_S,
                       "r1 to reach review")  # fmt: skip
            head = run_git(origin, "rev-parse", "jarvis-r1")
            assert operator_actions.approve(store, "r1", "ana").ok
            wait_until(lambda: (gate / "blocked").exists(), HANG_GUARD_S,
                       "git to have moved main")  # fmt: skip
            assert run_git(origin, "rev-parse", "main") == head  # moved; nothing recorded yet
            host.kill()
        finally:
            (gate / "release").touch()
            host.kill()
        assert stage(store, "r1") == ("review_requested", "merging")
        with running_host(ws):
            wait_until(lambda: stage(store, "r1") == ("done", None), HANG_GUARD_S,
                       "r1's merge to be found done")  # fmt: skip
        assert run_git(origin, "rev-parse", "main") == head  # no second merge on top
        merges = [e for e in store.journal_since(0, run_id="r1") if e["kind"] == "merge"]
        assert len(merges) == 1 and '"already_merged"' in merges[0]["payload"], merges
        assert [a["action"] for a in store.audit_of("r1")][-2:] == ["request_merge", "merge"]
    finally:
        store.close()
