"""Hosts sharing one store: names held by leases, claims that never give one run to two hosts,
and a lost host recovered once — on both backends, with real connections racing."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from core.host.fleet import HostNameHeld, Lease
from core.lifecycle import Action, RunState
from core.moves import NotHeld, host_move
from core.store.api import RunStore
from core.store.hosts import lease_state
from tests.backends import StepClock, another_connection
from tests.core.store_helpers import make_run

QUEUED = RunState.QUEUED.value


def lease(store: RunStore, name: str, **kwargs: object) -> Lease:
    made = Lease(store, name, Path("/ws") / name, None, 1.0, 10.0)
    for key, value in kwargs.items():
        setattr(made, key, value)
    return made


def test_a_live_name_is_refused_and_a_dead_holders_taken_back(any_store: RunStore) -> None:
    first = lease(any_store, "h1")
    first.register()
    with pytest.raises(HostNameHeld) as held:
        lease(any_store, "h1").register()  # another start while h1 lives (this pid)
    assert "holds the name 'h1'" in str(held.value)
    with pytest.raises(HostNameHeld):
        lease(any_store, "h1", machine="elsewhere").register()
    # The holder is a dead process of this machine (a host killed with -9): taken at once.
    with any_store.transaction() as tx:
        tx.execute("UPDATE hosts SET pid = ? WHERE name = 'h1'", [dead_pid()])
    again = lease(any_store, "h1")
    again.register()
    assert any_store.host("h1")["incarnation"] == again.incarnation  # type: ignore[index]
    renewal = first.renew()  # the old incarnation's lease is gone: taken by the new one
    assert renewal.outcome == "taken" and renewal.found is not None
    assert renewal.found["incarnation"] == again.incarnation


def dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_a_late_renewal_keeps_the_lease_unless_another_host_recovered_it(
    any_store: RunStore, clock: StepClock
) -> None:
    held = lease(any_store, "h1")
    held.register()
    clock.advance(1)
    assert held.renew().outcome == "kept" and held.renew().late_s == 0
    clock.advance(10.5)  # past the lease, and nobody acted on it: kept, and says how late
    renewal = held.renew()
    assert (renewal.outcome, renewal.late_s) == ("kept", 0.5)
    assert lease_state(any_store.host("h1") or {}, any_store.now()) == "live"
    clock.advance(11)
    recoverer = lease(any_store, "h2")
    recoverer.register()
    assert recoverer.recover_lost() == {"h1": []}
    renewal = held.renew()  # recovered meanwhile: not renewed, and it says by whom
    assert renewal.outcome == "recovered" and renewal.found is not None
    assert renewal.found["recovered_by"] == "h2"
    assert lease_state(any_store.host("h1") or {}, any_store.now()) == "recovered"
    first = held.incarnation
    held.take_back()
    row = any_store.host("h1") or {}
    assert lease_state(row, any_store.now()) == "live" and row["incarnation"] != first
    assert held.renew().outcome == "kept"
    held.end()
    assert lease_state(any_store.host("h1") or {}, any_store.now()) == "stopped"
    assert held.renew().outcome == "taken"  # ended: nothing to renew


def test_claims_racing_from_three_hosts_give_every_run_to_one_host(
    any_store: RunStore, clock: StepClock
) -> None:
    for n in range(60):
        make_run(any_store, f"r{n:02}", RunState.QUEUED, lane=f"lane-{n % 2}")
    start = threading.Barrier(3)
    claimed: dict[str, list[str]] = {}

    def claim(name: str) -> None:
        store = another_connection(any_store, clock)  # each host its own connection
        lease(store, name).register()
        start.wait()
        got: list[str] = []
        while True:
            batch = store.claim_runs(name, {"lane-0": 3, "lane-1": 3}, QUEUED)
            if not batch:
                break
            got.extend(batch)
            for run_id in batch:
                host_move(store, run_id, Action.START, holder=name)
        claimed[name] = got
        store.close()

    threads = [threading.Thread(target=claim, args=(f"h{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [run_id for got in claimed.values() for run_id in got]
    assert sorted(every) == [f"r{n:02}" for n in range(60)]  # each once, none missed
    for run in any_store.runs_by_id(None):
        assert run["state"] == "running" and run["run_id"] in claimed[run["host"]]
    starts = [e for e in any_store.journal_since(0, limit=1000) if e["kind"] == "transition"]
    assert len(starts) == 60


def test_a_run_claimed_by_a_live_host_is_not_another_hosts_until_its_lease_runs_out(
    any_store: RunStore, clock: StepClock
) -> None:
    lease(any_store, "h1").register()
    make_run(any_store, "r1", RunState.QUEUED)
    assert any_store.claim_runs("h1", {"jarvis-worker-1": 5}, QUEUED) == ["r1"]
    assert any_store.claim_runs("h2", {"jarvis-worker-1": 5}, QUEUED) == []
    with pytest.raises(NotHeld):
        host_move(any_store, "r1", Action.START, holder="h2")
    clock.advance(11)  # h1's lease (10 s) has run out
    assert any_store.claim_runs("h2", {"jarvis-worker-1": 5}, QUEUED) == ["r1"]
    assert host_move(any_store, "r1", Action.START, holder="h2")["host"] == "h2"


def test_two_hosts_recovering_one_lost_host_fail_each_of_its_runs_once(
    any_store: RunStore, clock: StepClock
) -> None:
    lease(any_store, "lost").register()
    for n in range(8):
        make_run(any_store, f"r{n}", RunState.QUEUED)
        any_store.claim_runs("lost", {"jarvis-worker-1": 1}, QUEUED)
        host_move(any_store, f"r{n}", Action.START, holder="lost")
    make_run(any_store, "other", RunState.QUEUED)
    host_move(any_store, "other", Action.START, holder="alive-1")
    clock.advance(11)
    start = threading.Barrier(2)
    results: list[dict[str, list[str]]] = []

    def recover(name: str) -> None:
        store = another_connection(any_store, clock)  # each host its own connection
        recoverer = lease(store, name)
        recoverer.register()
        start.wait()
        results.append(recoverer.recover_lost())
        store.close()

    threads = [threading.Thread(target=recover, args=(f"alive-{n}",)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = sorted(run_id for result in results for got in result.values() for run_id in got)
    assert failed == [f"r{n}" for n in range(8)]  # every run once, between the two
    for n in range(8):
        run = any_store.get_run(f"r{n}")
        assert run is not None and run["state"] == "failed"
        assert run["state_reason"].startswith("host_lost: host lost stopped renewing")
        journal = any_store.journal_since(0, limit=1000)
        payloads = [json.loads(e["payload"]) for e in journal if e["run_id"] == f"r{n}"]
        assert [p.get("to") for p in payloads].count("failed") == 1
    assert (any_store.get_run("other") or {})["state"] == "running"  # a live host's run
    lost = any_store.host("lost") or {}
    assert lease_state(lost, any_store.now()) == "recovered"
    assert lost["recovered_by"] in ("alive-1", "alive-2")


def test_a_lost_host_back_under_its_name_before_recovery_keeps_its_new_runs(
    any_store: RunStore, clock: StepClock
) -> None:
    old = lease(any_store, "h1")
    old.register()
    clock.advance(11)
    recoverer = lease(any_store, "h2")
    recoverer.register()
    assert any_store.lost_hosts(any_store.now(), "h2") == ["h1"]
    # h1 restarts (a new incarnation) and starts a run before h2 gets to it.
    with any_store.transaction() as tx:
        tx.execute("UPDATE hosts SET pid = ? WHERE name = 'h1'", [dead_pid()])
    lease(any_store, "h1").register()
    make_run(any_store, "new", RunState.QUEUED)
    host_move(any_store, "new", Action.START, holder="h1")
    assert recoverer.recover_lost() == {}
    assert (any_store.get_run("new") or {})["state"] == "running"
    assert lease_state(any_store.host("h1") or {}, any_store.now()) == "live"


def test_a_host_tidies_only_the_worktrees_of_runs_it_holds(
    any_store: RunStore, clock: StepClock
) -> None:
    from core.operator_actions import cancel
    from core.repos.records import removable

    for run_id, host in (("mine", "h1"), ("theirs", "h2"), ("old", None)):
        make_run(any_store, run_id, RunState.QUEUED)
        if host is not None:
            host_move(any_store, run_id, Action.START, holder=host)
        else:
            host_move(any_store, run_id, Action.START)
        with any_store.transaction() as tx:
            tx.put_worktree(run_id, 1, {
                "repo": "acme/api", "repo_dir": "/srv/repo", "checkout": f"/ws/{run_id}",
                "branch": f"jarvis/{run_id}", "base_ref": "main", "base_commit": "a" * 40,
                "start_commit": "a" * 40, "merge_mode": "recommend-only", "push_remote": None,
            })  # fmt: skip
        assert cancel(any_store, run_id, "op", "done with it").ok
    clock.advance(600)
    assert {r.run_id for r in removable(any_store, 300, "h1")} == {"mine", "old"}
    assert {r.run_id for r in removable(any_store, 300)} == {"mine", "theirs", "old"}


def test_a_host_that_cannot_take_its_name_back_finds_it_taken_at_its_next_beat(
    any_store: RunStore, clock: StepClock
) -> None:
    held = lease(any_store, "h1")
    held.register()
    clock.advance(11)
    recoverer = lease(any_store, "h2")
    recoverer.register()
    recoverer.recover_lost()
    # Another machine starts under the name before h1 is back: h1's name is not its to take.
    newcomer = lease(any_store, "h1", machine="build-02")
    newcomer.register()
    first = held.incarnation
    with pytest.raises(HostNameHeld):
        held.take_back()
    assert held.incarnation == first
    renewal = held.renew()
    assert renewal.outcome == "taken" and renewal.found is not None
    assert renewal.found["machine"] == "build-02"
