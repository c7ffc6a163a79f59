"""Two real hosts on one real PostgreSQL store, each on its own "machine": its own workspace, its
own lane, and its own clone of the repository at a path only it knows. An operator approves both
runs from a real console (`jarvis tui --db URL` in tmux) that is neither host. Each run's branch
is merged by the host that holds it, into its own repository; a run whose host is stopped waits,
shown as merging, and the live host never takes it; started again, its host merges it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from core.intake import submit_dispatch
from core.store.api import RunStore
from core.store.location import open_store
from tests.core.store_helpers import dispatch_doc
from tests.e2e.test_demo_in_tmux import Terminal
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import HostProcess, wait_until, write_config
from tests.processes import HANG_GUARD_S

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

REPO = "acme-labs/fleet-engine"
LANES = {"host-a": "jarvis-worker-1", "host-b": "jarvis-worker-2"}


def machine(tmp_path: Path, name: str, url: str) -> tuple[Path, Path]:
    """A host's workspace and its repository, configured under the one repository name."""
    origin = make_repo(tmp_path / f"{name}-origin.git",
                       {"src/fleet_engine/retry.py": "RETRIES = 1\n"}, bare=True)  # fmt: skip
    ws = tmp_path / name
    ws.mkdir()
    write_config(ws, no_output_s=60)
    with (ws / "jarvis.toml").open("a") as toml:
        toml.write(f'[store]\nurl = "{url}"\n[host]\nname = "{name}"\n'
                   f'lanes = ["{LANES[name]}"]\n'
                   f'[repos."{REPO}"]\npath = "{origin}"\nbase_ref = "main"\n')  # fmt: skip
    return ws, origin


def enqueue(store: RunStore, run_id: str, lane: str) -> None:
    task = "Fix the retry counter in src/fleet_engine/retry.py. sim:ok"
    doc = dispatch_doc(run_id, branch=f"jarvis-{run_id}", input=task)
    result = submit_dispatch(store, doc, source_lane="main", target_lane=lane, actor="test")
    assert result.outcome == "enqueued", result.to_json()


def stage(store: RunStore, run_id: str) -> tuple[str, str | None]:
    run = store.get_run(run_id) or {}
    return str(run.get("state")), run.get("merge_state")


def row_of(screen: str, run_id: str) -> str:
    return next((line for line in screen.splitlines() if line.startswith(f"{run_id} ")), "")


def approve_by_keys(console: Terminal, run_id: str) -> None:
    """Find the run as an operator would (filter by its id, the last filter cleared), then
    `a`."""
    console.keys("Escape")
    console.wait_for(lambda s: "matching" not in s, "no filter")
    console.keys("/")
    console.wait_for(lambda s: "filter: run id" in s, "the filter box")
    console.keys("-l", run_id)
    console.keys("Enter")
    console.wait_for(lambda s: "· 1 of " in s and f"{run_id}▏" not in s,
                     f"{run_id} alone, the filter closed")  # fmt: skip
    console.keys("a")


def test_each_approved_run_is_merged_by_the_host_that_holds_it(tmp_path: Path, pg_url: str) -> None:
    (ws_a, origin_a), (ws_b, origin_b) = (machine(tmp_path, n, pg_url) for n in LANES)
    store = open_store(pg_url)
    enqueue(store, "ra", LANES["host-a"])
    enqueue(store, "rb", LANES["host-b"])
    host_a, host_b = HostProcess(ws_a), HostProcess(ws_b)
    console: Terminal | None = None
    try:
        host_a.wait_started()
        host_b.wait_started()
        for run_id in ("ra", "rb"):
            wait_until(lambda r=run_id: stage(store, r) == ("review_requested", None),
                       HANG_GUARD_S, f"{run_id} to reach review")  # fmt: skip
        host_b.stop()  # rb's host goes down: its merge must wait for it, not go elsewhere

        console = Terminal(
            f"cd {Path.cwd()} && JARVIS_OPERATOR=op TERM=xterm-256color {sys.executable} -m "
            f"jarvis_cli tui --workspace {tmp_path / 'console'} --db '{pg_url}'; "
            f"sleep {HANG_GUARD_S:.0f}",
            width=160,
            height=40,
        )
        console.wait_for(lambda s: "ra" in s and "rb" in s and "host-a" in s, "the fleet")
        approve_by_keys(console, "ra")
        console.wait_for(lambda s: "Run ra merged" in s, "host-a's merge, told to the console")
        assert stage(store, "ra") == ("done", None)

        approve_by_keys(console, "rb")
        console.wait_for(lambda s: "◈ merging" in row_of(s, "rb"), "rb shown merging")
        console.keys("Enter")  # its detail names the host that will merge it, and that it is down
        console.wait_for(lambda s: "merge pending" in s and "host-b" in s and "stopped" in s,
                         "the pending merge, naming its stopped host")  # fmt: skip
        console.keys("Escape")
        # host-a works on (a new run of its lane, taken and gated) and never takes rb's merge.
        enqueue(store, "ra2", LANES["host-a"])
        wait_until(lambda: stage(store, "ra2") == ("review_requested", None), HANG_GUARD_S,
                   "ra2 to reach review on host-a")  # fmt: skip
        assert stage(store, "rb") == ("review_requested", "merging")

        host_b = HostProcess(ws_b)  # back: it merges what it holds
        host_b.wait_started()
        console.wait_for(lambda s: "Run rb merged" in s, "host-b's merge, told to the console")
        assert stage(store, "rb") == ("done", None)
    finally:
        if console is not None:
            console.close()
        host_a.stop()
        host_b.stop()

    # Each branch went into its own host's repository, and only there.
    assert run_git(origin_a, "rev-parse", "main") == run_git(origin_a, "rev-parse", "jarvis-ra")
    assert run_git(origin_b, "rev-parse", "main") == run_git(origin_b, "rev-parse", "jarvis-rb")
    assert run_git(origin_a, "branch", "--list", "jarvis-rb") == ""
    assert run_git(origin_b, "branch", "--list", "jarvis-ra") == ""
    for run_id, host in (("ra", "host-a"), ("rb", "host-b")):
        merges = [e for e in store.journal_since(0, run_id=run_id) if e["kind"] == "merge"]
        assert len(merges) == 1 and f'"host": "{host}"' in merges[0]["payload"], merges
        (asked,) = [a for a in store.audit_of(run_id) if a["action"] == "request_merge"]
        assert asked["actor"] == "op"
    store.close()
