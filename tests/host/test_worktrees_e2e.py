"""Runs on real repositories, end to end: the real host makes each run a repository of its own,
the simulated worker really edits and commits in it, every claim of its completion is checked
against git, and the run's branch reaches the configured repository through the host. Each kind
of lie ends ``failed_contract`` on its gate, with the evidence."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.intake import submit_dispatch
from core.repos.claims import GIT_GATES
from core.repos.ref_moves import REF_GATE
from core.run_views import table_rows
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc
from tests.gitrepo import make_repo, run_git
from tests.host.hostkit import (
    cli,
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

#: Only a hang guard: every wait ends as soon as its condition holds.
WAIT = HANG_GUARD_S

REPO = "acme-labs/fleet-engine"  # the sample dispatch's repository
COMPLETION_GATES = 9


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "origin",
        {"README.md": "# fleet engine\n", "src/fleet_engine/retry.py": "RETRIES = 1\n"},
    )


def configure(ws: Path, origin: Path | None, extra: str = "", **config: object) -> None:
    write_config(ws, **config)  # type: ignore[arg-type]
    with (ws / "jarvis.toml").open("a") as toml:
        if origin is not None:
            toml.write(f'[repos."{REPO}"]\npath = "{origin}"\nbase_ref = "main"\n')
        toml.write(extra)


def enqueue(store: SqliteStore, run_id: str, scenario: str = "ok", **changes: object) -> None:
    changes.setdefault("branch", f"jarvis-{run_id}")
    doc = dispatch_doc(
        run_id,
        input=f"Fix the retry counter in src/fleet_engine/retry.py. sim:{scenario}",
        **changes,
    )
    result = submit_dispatch(store, doc, source_lane="main", target_lane="jarvis-worker-1",
                             actor="test")  # fmt: skip
    assert result.outcome == "enqueued", result.to_json()


def journal_rows(conn: sqlite3.Connection, run_id: str, kind: str) -> list[dict[str, object]]:
    found = rows(conn, "SELECT payload FROM journal WHERE run_id = ? AND kind = ? ORDER BY seq",
                 [run_id, kind])  # fmt: skip
    return [json.loads(str(r["payload"])) for r in found]


def gates(conn: sqlite3.Connection, run_id: str) -> dict[str, tuple[str, int, str]]:
    return {
        g["name"]: (
            g["status"] or ("passed" if g["passed"] else "failed"),
            g["passed"],
            g["detail"],
        )
        for g in rows(
            conn,
            "SELECT name, status, passed, detail FROM gate_results WHERE run_id = ? ORDER BY id",
            [run_id],
        )  # fmt: skip
    }


def test_an_honest_worker_reaches_review_on_its_own_worktree(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    main_before = run_git(origin, "rev-parse", "main")
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, WAIT, host=host)
    found = gates(conn, "r1")
    assert len(found) == COMPLETION_GATES + len(GIT_GATES) + 1
    git_gates = {k: v for k, v in found.items() if k in (*GIT_GATES, REF_GATE)}
    assert [v[0] for v in git_gates.values()] == ["passed"] * (len(GIT_GATES) + 1), found
    checkout = ws / "checkouts" / "r1"
    assert (checkout / ".git").is_dir()
    # The branch reached the repository through the host, once its gates passed.
    tip = run_git(origin, "rev-parse", "jarvis-r1")
    assert run_git(origin, "rev-parse", "refs/jarvis/r1/attempt-1") == tip
    assert run_git(checkout, "rev-parse", "HEAD") == tip
    assert run_git(checkout, "status", "--porcelain") == ""
    (made,) = rows(conn, "SELECT * FROM run_git WHERE run_id = 'r1'")
    assert (made["attempt"], made["repo"], made["branch"]) == (1, REPO, "jarvis-r1")
    assert made["base_commit"] == made["start_commit"] == made["merge_base"] == main_before
    assert made["head_commit"] == tip
    assert made["diff_files"] >= 1 and made["diff_additions"] >= 1
    run = run_row(conn, "r1")
    assert run["commit_sha"] == tip and run["unverified"] is None
    # The operator's own working tree and its main branch did not move.
    assert run_git(origin, "rev-parse", "main") == main_before
    assert run_git(origin, "rev-parse", "--abbrev-ref", "HEAD") == "main"


LIES = {
    "lie_files": ("files_match_diff", "claimed but unchanged: docs/"),
    "lie_unclaimed": ("files_match_diff", "changed but unclaimed: scripts/"),
    "lie_commit": ("commit_exists", "names no commit in the repository"),
    "stale_commit": ("commit_on_branch", "the head of jarvis-"),
    "uncommitted": ("commit_on_branch", "path(s) are uncommitted:"),
    "leak_secret": ("secrets_in_diff", "AWS access key id in config/settings.py line 1"),
}


def test_each_lie_fails_on_its_gate_with_evidence_two_runs_at_once(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin, concurrency=2)
    for scenario in LIES:
        enqueue(store, scenario.replace("_", "-"), scenario)
    with running_host(ws) as host:
        wait_for_states(
            conn, {s.replace("_", "-"): "failed_contract" for s in LIES}, WAIT, host=host
        )
    for scenario, (gate, evidence) in LIES.items():
        run_id = scenario.replace("_", "-")
        found = gates(conn, run_id)
        status, passed, detail = found[gate]
        assert (status, passed) == ("failed", 0), (scenario, found)
        assert evidence in detail, (scenario, detail)
        assert gate in run_row(conn, run_id)["state_reason"]
        # Each lie is caught by git alone: the completion's own gates all pass.
        assert all(v[1] for k, v in found.items() if k not in LIES_GATES), (scenario, found)
    # The key the worker committed is in no gate, no reason and no journal row.
    assert not rows(conn, "SELECT 1 FROM gate_results WHERE detail LIKE '%AKIAIOSFODNN7%'")
    assert not rows(conn, "SELECT 1 FROM journal WHERE payload LIKE '%AKIAIOSFODNN7%'")


LIES_GATES = {*GIT_GATES, REF_GATE}


def test_a_run_without_a_configured_repository_is_unverified_not_passed(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    configure(ws, None)
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, WAIT, host=host)
    found = gates(conn, "r1")
    for name in GIT_GATES:
        assert found[name] == ("not_checked", 1, "not checked: no repository in the run's checkout")
    assert run_row(conn, "r1")["unverified"] == "no repository in the run's checkout"
    code, shown = cli(ws, "show", "r1")
    assert code == 0 and shown["run"]["unverified"] == "no repository in the run's checkout"
    git_gates = [g for g in shown["run"]["gates"] if g["name"] in GIT_GATES]
    assert [(g["status"], g["passed"]) for g in git_gates] == [("not_checked", False)] * len(
        GIT_GATES
    )
    code, listed = cli(ws, "runs")
    (run,) = listed["runs"]
    assert run["unverified"] == "no repository in the run's checkout"
    # The console's run table counts them apart: nothing failed, three not checked.
    (row,) = table_rows(store, ["r1"])
    assert row["gates"] == {"passed": 9, "total": 13, "not_checked": 4}


def test_the_workspace_may_refuse_review_without_a_repository(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    configure(ws, None, "[git]\nunverified_may_review = false\n")
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed_contract"}, WAIT, host=host)
    assert gates(conn, "r1")["commit_exists"][:2] == ("not_checked", 0)
    assert "commit_exists" in run_row(conn, "r1")["state_reason"]


def test_a_branch_a_live_run_holds_is_refused_with_a_sentence(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin, concurrency=2)
    enqueue(store, "r1", "hang", branch="jarvis-shared")
    with running_host(ws, interval="10,30") as host:
        wait_until(lambda: (ws / "checkouts" / "r1" / ".git").exists(), WAIT, "r1's worktree",
                   host.log)  # fmt: skip
        enqueue(store, "r2", branch="jarvis-shared")
        wait_for_states(conn, {"r2": "failed"}, WAIT, host=host)
        reason = run_row(conn, "r2")["state_reason"]
        assert "Branch 'jarvis-shared' of acme-labs/fleet-engine is worked on by run r1" in reason
        assert run_row(conn, "r1")["state"] == "running"
        cli(ws, "cancel", "r1", "--reason", "test over")
        wait_for_states(conn, {"r1": "failed"}, WAIT, host=host)


def test_a_retry_that_continues_starts_from_where_the_branch_was_left(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    fields = ["run_id", "branch", "commit_sha", "files_changed", "test_result", "risk",
              "pr_url", "session_id"]  # fmt: skip
    enqueue(store, "r1", "lie_files", context_intent="continue", session_id="sess-1",
            output_contract={"required_fields": fields})  # fmt: skip
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed_contract"}, WAIT, host=host)
        # Its gates failed: the branch is kept by the host, not given to the repository.
        assert run_git(origin, "branch", "--list", "jarvis-r1") == ""
        first_tip = run_git(origin, "rev-parse", "refs/jarvis/r1/attempt-1")
        code, _ = cli(ws, "retry", "r1")
        assert code == 0
        wait_until(
            lambda: len(rows(conn, "SELECT 1 FROM run_git WHERE checked_at IS NOT NULL")) == 2,
            WAIT,
            "the second attempt to be checked",
            host.log,
        )
    attempts = rows(conn, "SELECT attempt, start_commit FROM run_git ORDER BY attempt")
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert attempts[1]["start_commit"] == first_tip
    (second,) = [j for j in journal_rows(conn, "r1", "worktree") if j.get("attempt") == 2]
    assert second["continued"] is True


def test_a_fresh_retry_starts_from_the_base_and_keeps_the_old_head(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin)
    base = run_git(origin, "rev-parse", "main")
    enqueue(store, "r1", "lie_files")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "failed_contract"}, WAIT, host=host)
        first_tip = run_git(origin, "rev-parse", "refs/jarvis/r1/attempt-1")
        code, _ = cli(ws, "retry", "r1", "--fresh")
        assert code == 0
        wait_until(
            lambda: len(rows(conn, "SELECT 1 FROM run_git WHERE checked_at IS NOT NULL")) == 2,
            WAIT,
            "the second attempt to be checked",
            host.log,
        )
    attempts = rows(conn, "SELECT attempt, start_commit FROM run_git ORDER BY attempt")
    assert attempts[1]["start_commit"] == base
    assert run_git(origin, "rev-parse", "refs/jarvis/r1/before-attempt-2") == first_tip


def held_clone(tmp_path: Path, *, hold_once: bool) -> tuple[dict[str, str], Path, Path]:
    """A home whose git configuration has every ``ssh://`` fetch go through a script that waits
    for ``release`` (after writing ``inside``), or, with ``hold_once``, that sleeps in place the
    first time, leaving the pids of git and itself in ``inside``: how a test holds the host
    inside the making of a run's checkout (a clone, then a fetch, of a repository by URL).
    Hooks would not do: the host runs git with none."""
    home, inside, release = tmp_path / "home", tmp_path / "inside", tmp_path / "release"
    home.mkdir()
    ssh = tmp_path / "ssh"
    if hold_once:
        wait = (f'if [ ! -e "{inside}" ]; then echo "$PPID $$" > "{inside}.tmp"; '
                f'mv "{inside}.tmp" "{inside}"; exec sleep 600; fi\n')  # fmt: skip
    else:
        wait = f'touch "{inside}"\nwhile [ ! -e "{release}" ]; do sleep 0.05; done\n'
    ssh.write_text(f'#!/bin/sh\n{wait}exec sh -c "$2"\n')
    ssh.chmod(0o755)
    (home / ".gitconfig").write_text(f"[core]\n\tsshCommand = {ssh}\n[ssh]\n\tvariant = simple\n")
    return {"HOME": str(home)}, inside, release


def by_url(origin: Path) -> str:
    return f'[repos."{REPO}"]\nurl = "ssh://localhost{origin}"\nbase_ref = "main"\n'


def test_a_host_killed_while_it_makes_a_checkout_leaves_nothing_the_retry_cannot_clear(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path, tmp_path: Path
) -> None:
    env, marker, _ = held_clone(tmp_path, hold_once=True)
    configure(ws, None, by_url(origin))
    enqueue(store, "r1")
    with running_host(ws, env=env) as host:
        wait_until(marker.exists, WAIT, "git to be inside the clone", host.log)
        git_pid, held_pid = (int(p) for p in marker.read_text().split())
        # The host and everything it started die at once, as in a machine's OOM kill.
        for pid in (host.pid, git_pid, held_pid):
            os.kill(pid, signal.SIGKILL)
        host.kill()
    assert list((ws / "repos" / "acme-labs").glob(".fleet-engine.partial-*"))  # half made
    with running_host(ws, env=env) as host:
        wait_for_states(conn, {"r1": "failed"}, WAIT, host=host)
        assert "host restarted" in run_row(conn, "r1")["state_reason"]
        code, _ = cli(ws, "retry", "r1")
        assert code == 0
        wait_for_states(conn, {"r1": "review_requested"}, WAIT, host=host)
    assert not list((ws / "repos" / "acme-labs").glob(".fleet-engine.partial-*"))
    assert run_git(ws / "checkouts" / "r1", "rev-parse", "--abbrev-ref", "HEAD") == "jarvis-r1"
    clone = ws / "repos" / "acme-labs" / "fleet-engine"
    assert run_git(clone, "rev-parse", "jarvis-r1") == run_row(conn, "r1")["commit_sha"]


def test_a_worktree_is_removed_after_the_grace_and_its_branch_stays(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path
) -> None:
    configure(ws, origin, "[git]\nworktree_grace_s = 0\n")
    enqueue(store, "r1")
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "review_requested"}, WAIT, host=host)
        tip = run_git(origin, "rev-parse", "jarvis-r1")
        code, _ = cli(ws, "approve", "r1")
        assert code == 0
        wait_until(lambda: not (ws / "checkouts" / "r1").exists(), WAIT, "the worktree to go",
                   host.log)  # fmt: skip
    assert run_git(origin, "rev-parse", "jarvis-r1") == tip
    assert rows(conn, "SELECT removed_at FROM run_git")[0]["removed_at"] is not None
    assert not (ws / "sandbox" / "r1").exists() and not (ws / "git" / "r1.git").exists()
    assert "jarvis-r1" not in run_git(origin, "worktree", "list")


# -- merge on approve -----------------------------------------------------------------------------


@pytest.fixture
def bare_origin(tmp_path: Path) -> Path:
    """A bare repository: no one's working tree holds main, so approval may move it."""
    return make_repo(
        tmp_path / "origin.git",
        {"README.md": "# fleet engine\n", "src/fleet_engine/retry.py": "RETRIES = 1\n"},
        bare=True,
    )


def reviewed(ws: Path, store: SqliteStore, conn: sqlite3.Connection, run_ids: list[str]) -> None:
    for run_id in run_ids:
        enqueue(store, run_id)
    with running_host(ws) as host:
        wait_for_states(conn, dict.fromkeys(run_ids, "review_requested"), WAIT, host=host)


def approved(ws: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """``jarvis approve ARGS --wait`` while the host runs: the host makes the merge."""
    with running_host(ws):
        return cli(ws, "approve", *args, "--wait")


def test_approve_asks_the_host_which_merges_the_branch_and_records_it(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, bare_origin: Path
) -> None:
    configure(ws, bare_origin)
    reviewed(ws, store, conn, ["r1"])
    head = run_git(bare_origin, "rev-parse", "jarvis-r1")
    main = run_git(bare_origin, "rev-parse", "main")
    # No host runs: the approval is recorded and the merge waits for one, saying so.
    code, asked = cli(ws, "approve", "r1")
    assert code == 0 and asked["ok"] and asked["merge"]["pending"] is True, asked
    assert "carries it out when it runs again" in asked["merge"]["note"]
    assert asked["run"]["merge_state"] == "merging"
    assert run_git(bare_origin, "rev-parse", "main") == main  # nothing merged in the approval
    assert (run_row(conn, "r1")["state"], run_row(conn, "r1")["merge_state"]) == (
        "review_requested", "merging")  # fmt: skip
    with running_host(ws) as host:
        wait_for_states(conn, {"r1": "done"}, WAIT, host=host)
    assert run_git(bare_origin, "rev-parse", "main") == head
    assert run_row(conn, "r1")["merge_state"] is None
    (merged,) = journal_rows(conn, "r1", "merge")
    assert (merged["mode"], merged["merged_commit"], merged["done"]) == (
        "auto-merge", head, "fast_forward")  # fmt: skip
    audit = rows(conn, "SELECT actor, action FROM audit WHERE run_id = 'r1' ORDER BY id")
    assert [a["action"] for a in audit][-2:] == ["request_merge", "merge"]
    assert audit[-1]["actor"] == "host" and audit[-2]["actor"] != "host"
    assert rows(conn, "SELECT merged_commit FROM run_git")[0]["merged_commit"] == head
    code, shown = cli(ws, "show", "r1")
    merge = shown["run"]["merge"]
    assert (merge["done"], merge["pending"]) == ("fast_forward", False)
    assert merge["merged_commit"] == head
    assert merge["requested_by"] == audit[-2]["actor"]


def test_approve_wait_says_what_the_merge_came_to(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, bare_origin: Path
) -> None:
    configure(ws, bare_origin)
    reviewed(ws, store, conn, ["r1"])
    head = run_git(bare_origin, "rev-parse", "jarvis-r1")
    code, result = approved(ws, "r1")
    assert code == 0 and result["ok"], result
    assert result["merge"]["done"] == "fast_forward" and result["merge"]["merged_commit"] == head
    assert result["run"]["state"] == "done"
    assert run_git(bare_origin, "rev-parse", "main") == head


def test_approve_no_merge_and_recommend_only_leave_the_base(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, bare_origin: Path
) -> None:
    configure(ws, bare_origin)
    main = run_git(bare_origin, "rev-parse", "main")
    reviewed(ws, store, conn, ["r1"])
    # Nothing for a host to do: decided in the approval, no host needed.
    code, result = cli(ws, "approve", "r1", "--no-merge")
    assert code == 0 and result["merge"]["done"] == "not_merged"
    assert run_row(conn, "r1")["state"] == "done"
    assert run_git(bare_origin, "rev-parse", "main") == main

    recommend = 'base_ref = "main"\nmerge = "recommend-only"\n'
    toml = (ws / "jarvis.toml").read_text().replace('base_ref = "main"\n', recommend)
    (ws / "jarvis.toml").write_text(toml)
    reviewed(ws, store, conn, ["r2"])
    code, result = cli(ws, "approve", "r2")
    assert code == 0 and result["merge"]["done"] == "recommended"
    assert "merging jarvis-r2 into main is recommended" in result["merge"]["note"]
    assert run_git(bare_origin, "rev-parse", "main") == main


def test_a_conflicting_merge_is_refused_and_changes_nothing_but_the_run(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, bare_origin: Path, tmp_path: Path
) -> None:
    configure(ws, bare_origin, concurrency=2)
    reviewed(ws, store, conn, ["r1", "r2"])  # both change src/fleet_engine/retry.py
    assert approved(ws, "r1")[1]["merge"]["done"] == "fast_forward"
    main = run_git(bare_origin, "rev-parse", "main")
    version = run_row(conn, "r2")["version"]
    code, result = approved(ws, "r2")
    assert code == 1 and result["refusal"]["code"] == "merge_conflict", result
    assert "src/fleet_engine/retry.py" in result["refusal"]["message"]
    assert run_git(bare_origin, "rev-parse", "main") == main
    after = run_row(conn, "r2")
    # Asked, then refused: two moves, back where it was, ready to be approved again.
    assert (after["state"], after["merge_state"], after["version"]) == (
        "review_requested", None, version + 2)  # fmt: skip
    (refused,) = journal_rows(conn, "r2", "merge")
    assert refused["refused"] == "merge_conflict" and refused["merged_commit"] is None
    code, shown = cli(ws, "show", "r2")
    assert shown["run"]["merge"]["refused"] == "merge_conflict"


def test_two_operators_approving_at_once_get_one_merge_and_one_refusal(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, bare_origin: Path
) -> None:
    configure(ws, bare_origin)
    reviewed(ws, store, conn, ["r1"])
    command = [sys.executable, "-m", "jarvis_cli", "approve", "r1", "--json",
               "--workspace", str(ws)]  # fmt: skip
    with running_host(ws) as host:
        racers = [
            subprocess.Popen([*command, "--operator", name], stdout=subprocess.PIPE, text=True)
            for name in ("ana", "ben")
        ]
        results = [json.loads(p.communicate(timeout=WAIT)[0]) for p in racers]
        wait_for_states(conn, {"r1": "done"}, WAIT, host=host)
    assert sorted(r["ok"] for r in results) == [False, True], results
    (refused,) = [r for r in results if not r["ok"]]
    assert refused["refusal"]["code"] == "illegal_transition"
    assert len(journal_rows(conn, "r1", "merge")) == 1
    assert len(rows(conn, "SELECT 1 FROM audit WHERE run_id = 'r1' AND action = 'merge'")) == 1
    asked = "SELECT 1 FROM audit WHERE run_id = 'r1' AND action = 'request_merge'"
    assert len(rows(conn, asked)) == 1


def test_the_host_works_on_while_a_checkout_is_being_made(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection, origin: Path, tmp_path: Path
) -> None:
    # The clone of r1's repository is held until the test lets it go: meanwhile another run
    # (its repository not configured) is started, supervised and gated to its end.
    env, inside, release = held_clone(tmp_path, hold_once=False)
    configure(ws, None, by_url(origin), concurrency=2)
    enqueue(store, "r1")
    with running_host(ws, env=env) as host:
        wait_until(inside.exists, WAIT, "git to be inside r1's clone", host.log)
        enqueue(store, "r2", repo="acme-labs/elsewhere")
        wait_for_states(conn, {"r2": "review_requested", "r1": "running"}, WAIT, host=host)
        assert run_row(conn, "r1")["worker_pid"] is None  # its worker waits for its checkout
        release.touch()
        wait_for_states(conn, {"r1": "review_requested"}, WAIT, host=host)
