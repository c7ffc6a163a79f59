"""Confinement, tried as an attacker would, with real git, real bubblewrap and the real host.

A plain ``command`` worker (tests/host/attacker.sh) tries to write the operator's checkout,
another run's checkout, the main repository's hooks, configuration and refs, ``~/.ssh`` and
``/tmp`` outside its run, and to move ``main`` to its commit:

- in the sandbox every write is refused, its log says so, and its own commit still lands
  (review, then approve fast-forwards the bare main repository to it);
- running unconfined, it can plant hooks (a bare repository's ``reference-transaction`` among
  them) and an fsmonitor: none ever runs, through gating and approval;
- running unconfined, moving ``main`` to its commit is caught at gating and reported.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from core.host.sandbox import probe
from core.intake import submit_dispatch
from core.repos.ref_moves import REF_GATE
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import (
    cli,
    dispatch,
    journal,
    rows,
    run_row,
    running_host,
    wait_for_states,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

REPO = "acme-labs/fleet-engine"
ATTACKER = Path(__file__).with_name("attacker.sh")
WRITES = ("operator checkout", "other run's checkout", "main repository hook reference-transaction",
          "main repository hook post-checkout", "main repository fsmonitor",
          "main repository config", "main repository ref", "ssh keys", "/tmp outside the run",
          "main moved to the run's commit")  # fmt: skip

needs_bwrap = pytest.mark.skipif(
    probe().program is None, reason=f"bubblewrap cannot run here: {probe().problem}"
)


class Scene:
    """The main (bare) repository, the operator's own checkout of it and home, a folder in
    /tmp outside any run, and where a planted program would leave its marker."""

    def __init__(self, tmp_path: Path) -> None:
        self.main = make_repo(
            tmp_path / "origin.git",
            {"README.md": "# fleet engine\n", "src/fleet_engine/retry.py": "RETRIES = 1\n"},
            bare=True,
        )
        self.operator = tmp_path / "operator-checkout"
        run_git(tmp_path, "clone", "--quiet", str(self.main), str(self.operator))
        self.home = tmp_path / "operator-home"
        (self.home / ".ssh").mkdir(parents=True)
        self.outside = tmp_path / "outside"
        self.outside.mkdir()
        self.markers = tmp_path / "markers"
        self.markers.mkdir()
        self.config_before = (self.main / "config").read_bytes()
        self.hooks_before = sorted(p.name for p in (self.main / "hooks").iterdir())

    def configure(self, ws: Path, sandbox: str, **env: str) -> None:
        attack = {
            "ATTACK_OPERATOR": str(self.operator),
            "ATTACK_OTHER": str(ws / "checkouts" / "r0"),
            "ATTACK_MAIN": str(self.main),
            "ATTACK_HOME": str(self.home),
            "ATTACK_OUTSIDE": str(self.outside),
            "ATTACK_MARKERS": str(self.markers),
            **env,
        }
        (ws / "jarvis.toml").write_text(
            f'[workers]\ndefault = "attacker"\nsandbox = "{sandbox}"\n'
            f'[workers.attacker]\nagent = "command"\ncommand = ["/bin/sh", "{ATTACKER}"]\n'
            f"env = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in attack.items())} }}\n"
            f'[repos."{REPO}"]\npath = "{self.main}"\nbase_ref = "main"\n'
            "[timeouts]\nno_output_s = 60\n"
        )

    def markers_left(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())


def enqueue(store: SqliteStore, run_id: str) -> None:
    doc = dispatch_doc(run_id, input="Count retries once in src/fleet_engine/retry.py.",
                       branch=f"jarvis-{run_id}")  # fmt: skip
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def said(ws: Path, run_id: str) -> list[str]:
    return (ws / "logs" / run_id / "attempt-1" / "stderr.log").read_text().splitlines()


def reviewed_after_r0(ws: Path, store: SqliteStore, conn: sqlite3.Connection, end: str) -> None:
    """r0 works and reaches review (its checkout stays), then the attacker r1 runs."""
    with running_host(ws) as host:
        enqueue(store, "r0")
        wait_for_states(conn, {"r0": "review_requested"}, HANG_GUARD_S, host=host)
        enqueue(store, "r1")
        wait_for_states(conn, {"r1": end}, HANG_GUARD_S, host=host)


@needs_bwrap
def test_in_the_sandbox_every_write_outside_is_refused_and_the_work_still_lands(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    scene = Scene(tmp_path)
    scene.configure(ws, "bwrap", ATTACK_MOVE_MAIN="1")
    main_before = run_git(scene.main, "rev-parse", "main")
    reviewed_after_r0(ws, store, conn, "review_requested")
    lines = said(ws, "r1")
    assert "sandbox: bwrap" in lines
    for what in WRITES:
        assert f"REFUSED {what}" in lines, (what, lines)
    assert not [line for line in lines if line.startswith("WROTE")], lines
    assert sum("Read-only file system" in line for line in lines) >= 6, lines  # the refusals
    # Nothing outside the run changed.
    assert (scene.operator / "README.md").read_text() == "# fleet engine\n"
    assert (ws / "checkouts" / "r0" / "README.md").read_text() == "# fleet engine\n"
    assert (scene.main / "config").read_bytes() == scene.config_before
    assert sorted(p.name for p in (scene.main / "hooks").iterdir()) == scene.hooks_before
    assert not (scene.home / ".ssh" / "authorized_keys").exists()
    assert list(scene.outside.iterdir()) == []
    assert run_git(scene.main, "rev-parse", "main") == main_before
    assert run_git(scene.main, "branch", "--list", "pwned") == ""
    # The run says how it ran, and its own commit lands on approval.
    run = run_row(conn, "r1")
    assert run["sandbox"] == "bwrap"
    assert journal(conn, "r1", "worker")[0]["sandbox"] == "bwrap"
    with running_host(ws):  # the host holding the repository merges
        code, approved = cli(ws, "approve", "r1", "--wait")
    assert code == 0 and approved["merge"]["done"] == "fast_forward", approved
    assert run_git(scene.main, "rev-parse", "main") == run["commit_sha"]
    assert scene.markers_left() == []


def test_unconfined_planted_hooks_and_fsmonitor_never_run_through_gating_and_approval(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    scene = Scene(tmp_path)
    scene.configure(ws, "none")
    reviewed_after_r0(ws, store, conn, "review_requested")
    lines = said(ws, "r1")
    assert "sandbox: none" in lines
    # Unconfined, it could plant them all (the bare repository's reference-transaction hook
    # and an fsmonitor named by its configuration among them).
    for what in ("main repository hook reference-transaction", "main repository config"):
        assert f"WROTE {what}" in lines, lines
    assert (scene.main / "hooks" / "reference-transaction").exists()
    assert "fsmonitor" in (scene.main / "config").read_text()
    # Gating moved the run's branch into the main repository; approval fast-forwards main:
    # each a ref update that would run the reference-transaction hook.
    with running_host(ws):  # the host holding the repository merges
        code, approved = cli(ws, "approve", "r1", "--wait")
    assert code == 0 and approved["merge"]["done"] == "fast_forward", approved
    assert run_git(scene.main, "rev-parse", "main") == run_row(conn, "r1")["commit_sha"]
    assert scene.markers_left() == []
    # The run says it ran unconfined, where the operator looks.
    assert run_row(conn, "r1")["sandbox"] == "none"
    assert journal(conn, "r1", "worker")[0]["unconfined"] == 'the profile says sandbox = "none"'
    code, shown = cli(ws, "show", "r1")
    assert shown["run"]["sandbox"] == "none"


def test_unconfined_moving_main_to_its_commit_is_caught_and_reported(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    scene = Scene(tmp_path)
    scene.configure(ws, "none", ATTACK_MOVE_MAIN="1")
    reviewed_after_r0(ws, store, conn, "failed_contract")
    assert "WROTE main moved to the run's commit" in said(ws, "r1")
    run = run_row(conn, "r1")
    assert run_git(scene.main, "rev-parse", "main") == run["commit_sha"]  # it did move it
    (gate,) = rows(conn, "SELECT * FROM gate_results WHERE run_id = 'r1' AND name = ?",
                   [REF_GATE])  # fmt: skip
    assert (gate["status"], gate["passed"]) == ("failed", 0)
    assert gate["detail"].startswith("main holds this run's commits, put there outside Jarvis")
    assert REF_GATE in run["state_reason"]
    code, shown = cli(ws, "show", "r1")
    (shown_gate,) = [g for g in shown["run"]["gates"] if g["name"] == REF_GATE]
    assert shown_gate["status"] == "failed"
    # Never a merge already done: the run cannot be approved at all.
    code, refused = cli(ws, "approve", "r1")
    assert code == 1 and refused["refusal"]["code"] == "illegal_transition"


def test_where_bubblewrap_is_missing_the_host_says_so_and_each_run_records_it(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    # A machine without bwrap: the host's PATH holds git and nothing else (its interpreter's
    # folder is added by the test kit, and holds no bwrap either).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(str(shutil.which("git")))
    simworker = f'["{sys.executable}", "-m", "jarvis_sim.simworker"]'
    (ws / "jarvis.toml").write_text(
        f"[workers]\ncommand = {simworker}\n"
        f'[workers.strict]\nagent = "command"\ncommand = {simworker}\nsandbox = "bwrap"\n'
        '[lanes."jarvis-worker-2"]\nworker = "strict"\n'
    )
    dispatch(store, "loose")
    dispatch(store, "strict", lane="jarvis-worker-2")
    with running_host(ws, env={"PATH": str(bin_dir)}) as host:
        wait_for_states(conn, {"loose": "review_requested", "strict": "failed"}, HANG_GUARD_S,
                        host=host)  # fmt: skip
        log = host.log()
    missing = "bubblewrap is not installed (no bwrap on PATH)"
    assert f"no sandbox: {missing}; workers run unconfined" in log
    # The run that ran says it ran unconfined, and why.
    assert run_row(conn, "loose")["sandbox"] == "none"
    (worker,) = journal(conn, "loose", "worker")
    assert worker["unconfined"] == missing
    # A profile that asks for the sandbox never starts without it.
    strict = run_row(conn, "strict")
    assert strict["sandbox"] is None and journal(conn, "strict", "worker") == []
    assert strict["state_reason"] == (
        f'the worker did not start: the profile asks for sandbox = "bwrap", but {missing}'
    )
