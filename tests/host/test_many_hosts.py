"""Three real hosts on one real PostgreSQL, each serving its own lanes from its own workspace:
60 runs, each run once; a host killed with -9 mid-run is recovered by another once its lease
runs out, each of its running runs failed once; back under its name it runs what it had left.
Two consoles' readers see the same changes throughout."""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.store.location import open_store
from core.store.postgres_store import PostgresStore
from jarvis_tui.feed import StoreFeed
from jarvis_tui.run_model import RunModel
from tests.host.hostkit import (
    HostProcess,
    assert_no_workers,
    cli,
    dispatch,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

HOSTS = {"host-a": ["a1", "a2"], "host-b": ["b1", "b2"], "host-c": ["c1", "c2"]}
RUNS_PER_LANE = 10
RUNS = RUNS_PER_LANE * sum(len(lanes) for lanes in HOSTS.values())
#: Leases short enough that recovery comes quickly, and still twice the heartbeat.
LEASE = "heartbeat_s = 0.5\nlease_s = 6\n"
#: The whole fleet's wait: 60 runs on two cores, a kill and a recovery; only a hang guard.
FLEET_GUARD_S = 8 * HANG_GUARD_S


def workspace(tmp_path: Path, name: str, url: str) -> Path:
    ws = tmp_path / name
    ws.mkdir()
    write_config(ws, concurrency=2, no_output_s=60)  # a loaded machine may starve a worker
    lanes = ", ".join(f'"{lane}"' for lane in HOSTS[name])
    with (ws / "jarvis.toml").open("a") as config:
        config.write(f'[store]\nurl = "{url}"\n[host]\nname = "{name}"\nlanes = [{lanes}]\n')
        config.write(LEASE)
    return ws


#: A window wider than the fleet: each read of it is every run.
WHOLE = replace(RunModel().ask(), size=10 * RUNS)


class Console:
    """What one console's reader sees, read as the console reads: every run's row, and each
    journal entry after its first read."""

    def __init__(self, root: Path, url: str) -> None:
        self.feed = StoreFeed(root / "jarvis.db", url)
        self.rows: dict[str, dict[str, Any]] = {}
        self.seqs: list[int] = []
        self.first_seq = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _take(self, since: int | None) -> int | None:
        read = self.feed.read(since, WHOLE)
        if read is None:
            return since
        if read.page is not None:
            # The window, wide enough for the whole fleet: every run's row.
            self.rows = {row["run_id"]: row for row in read.page.rows}
        self.rows.update({row["run_id"]: row for row in read.rows})
        if read.page is not None and not read.journal:  # the first read (or a catch-up)
            self.first_seq = read.last_seq
            self.seqs = []
        else:
            self.seqs.extend(entry["seq"] for entry in read.journal)
        return read.last_seq

    def _follow(self) -> None:
        seq: int | None = None
        while not self.stop.is_set():
            seq = self._take(seq)
            self.stop.wait(0.05)
        self.last = self._take(seq)  # what came after its last poll

    def finish(self) -> dict[str, str]:
        self.stop.set()
        self.thread.join()
        self.feed.close()
        return {run_id: row["state"] for run_id, row in self.rows.items()}


def states(store: PostgresStore) -> dict[str, str]:
    return {r["run_id"]: r["state"] for r in store.runs_by_id(None)}


def transitions(store: PostgresStore) -> list[dict[str, Any]]:
    found = []
    seq = 0
    while batch := store.journal_since(seq, limit=5000):
        found.extend(
            {"run_id": e["run_id"], "seq": e["seq"], **json.loads(e["payload"])}
            for e in batch
            if e["kind"] == "transition"
        )
        seq = batch[-1]["seq"]
    return found


def test_three_hosts_run_60_runs_once_and_recover_a_killed_host_once(
    tmp_path: Path, pg_url: str
) -> None:
    roots = {name: workspace(tmp_path, name, pg_url) for name in HOSTS}
    store = open_store(pg_url)
    assert isinstance(store, PostgresStore)
    lanes = [lane for served in HOSTS.values() for lane in served]
    for n in range(RUNS_PER_LANE):
        for lane in lanes:
            dispatch(store, f"{lane}-{n:02}", lane=lane)
    consoles = [Console(tmp_path / f"console-{n}", pg_url) for n in (1, 2)]
    hosts = {name: HostProcess(root) for name, root in roots.items()}
    try:
        for host in hosts.values():
            host.wait_started()

        def b_is_running() -> bool:
            return any(r["state"] == "running" and r["host"] == "host-b"
                       for r in store.runs_by_id(None))  # fmt: skip

        wait_until(b_is_running, HANG_GUARD_S, "host-b to run something", hosts["host-b"].log)
        hosts["host-b"].kill()  # kill -9, mid-run
        held = [r["run_id"] for r in store.runs_by_id(None)
                if r["state"] == "running" and r["host"] == "host-b"]  # fmt: skip
        assert held

        def recovered() -> bool:
            lost = store.host("host-b") or {}
            return lost.get("recovered_by") in ("host-a", "host-c")

        wait_until(recovered, HANG_GUARD_S, "another host to recover host-b")
        code, listed = cli(roots["host-a"], "hosts")
        assert code == 0
        by_name = {h["name"]: h for h in listed["hosts"]}
        assert by_name["host-b"]["state"] == "recovered"
        assert by_name["host-a"]["state"] == by_name["host-c"]["state"] == "live"
        assert by_name["host-a"]["lanes"] == ["a1", "a2"]
        for run_id in held:
            run = store.get_run(run_id) or {}
            assert run["state"] == "failed" and run["state_reason"].startswith("host_lost:")

        # Back under its name (the workspace's lock died with it), it runs what it had left.
        hosts["host-b"] = HostProcess(roots["host-b"], log_name="host-again.log")
        hosts["host-b"].wait_started()

        def all_settled() -> bool:
            return all(state != "queued" and state != "running"
                       for state in states(store).values())  # fmt: skip

        wait_until(all_settled, FLEET_GUARD_S, f"all {RUNS} runs to settle",
                   lambda: str(Counter(states(store).values())))  # fmt: skip
    finally:
        for host in hosts.values():
            host.stop()
        seen = [console.finish() for console in consoles]
    for root in roots.values():
        assert_no_workers(root)

    final = states(store)
    assert len(final) == RUNS
    lost = {run_id for run_id, state in final.items() if state == "failed"}
    assert lost == set(held)  # only the killed host's running runs failed; the rest reviewed
    assert Counter(final.values())["review_requested"] == RUNS - len(held)
    moves = transitions(store)
    starts = Counter(m["run_id"] for m in moves if m["action"] == "start")
    assert set(starts) == set(final) and set(starts.values()) == {1}  # each run started once
    failures = Counter(m["run_id"] for m in moves if m["to"] == "failed")
    assert failures == Counter(set(held))  # each lost run failed once
    for run in store.runs_by_id(None):
        assert run["lane"] in HOSTS[run["host"]]  # claimed only by a host serving its lane
    # Both consoles saw every change, the same ones, in order: the same final rows, and every
    # journal entry after their first read.
    assert seen[0] == seen[1] == final
    for console in consoles:
        journal = [e["seq"] for e in store.journal_since(console.first_seq, limit=100_000)]
        assert console.seqs == journal
    store.close()
