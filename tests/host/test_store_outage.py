"""A host whose store was away for longer than its lease keeps its runs when no other host acted.

The outages are real: the host paused with SIGSTOP, another process holding the store's write
lock (SQLite's ``BEGIN EXCLUSIVE``, PostgreSQL's writers' advisory lock), or a full disk, each
until the host's lease has run out in the store. Afterwards the host renews its lease late, says
so, and goes on: its running run reaches review, a new run starts, nothing fails
``host_lost``, and its name keeps its incarnation. Where another host did act (it recovered this
one, or took its name), the host stops those workers and takes its name back, or stops, saying
so.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from core.host.fleet import Lease
from core.store.api import RunStore
from core.store.location import open_store
from core.store.postgres_store import WRITE_LOCK
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    HostProcess,
    dispatch,
    fill,
    is_alive_worker,
    running_host,
    wait_until,
    workers_of,
    write_config,
)
from tests.processes import HANG_GUARD_S

#: A lease that runs out a second after the last heartbeat: an outage a test can afford.
LEASE = '[host]\nname = "h1"\nheartbeat_s = 0.2\nlease_s = 1\n'
#: `slow` runs of 30-40 events at this pace last 4.5-8 s: across an outage (the lease's second and
#: a little), as a rule.
LONG_INTERVAL = "150,200"


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, ws: Path) -> Iterator[tuple[str, RunStore]]:
    """The workspace's store on each backend, configured for a host with a short lease."""
    write_config(ws, no_output_s=60)
    url = str(ws / "jarvis.db")
    with (ws / "jarvis.toml").open("a") as config:
        config.write(LEASE)
        if request.param == "postgres":
            url = request.getfixturevalue("pg_url")
            config.write(f'[store]\nurl = "{url}"\n')
    store = open_store(url)
    yield url, store
    store.close()


def lapsed(store: RunStore) -> bool:
    row = store.host("h1")
    return row is not None and str(row["lease_until"]) < store.now()


def live(store: RunStore) -> bool:
    row = store.host("h1")
    return row is not None and str(row["lease_until"]) >= store.now()


def write_lock_free(url: str) -> bool:
    """Whether no writer holds the store's write lock now (taken and let go at once)."""
    if url.startswith("postgresql://"):
        with psycopg.connect(url, autocommit=True) as other:
            taken = bool(
                other.execute("SELECT pg_try_advisory_lock(%s)", [WRITE_LOCK]).fetchone()[0]
            )  # type: ignore[index]
            if taken:
                other.execute("SELECT pg_advisory_unlock(%s)", [WRITE_LOCK])
            return taken
    other = sqlite3.connect(url, isolation_level=None, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


@contextmanager
def paused(host: HostProcess, url: str) -> Iterator[None]:
    """The host stopped (SIGSTOP) between two of its writes: a host frozen inside a write
    transaction would hold the store's lock, and nothing else could write until it came back,
    which is not what these tests are about. Stopped while it holds the lock, it is let go on a
    moment and stopped again."""

    def stopped_between_writes() -> bool:
        os.kill(host.pid, signal.SIGSTOP)
        if write_lock_free(url):
            return True
        os.kill(host.pid, signal.SIGCONT)
        return False

    wait_until(stopped_between_writes, HANG_GUARD_S, "the host stopped between writes", host.log)
    try:
        yield
    finally:
        os.kill(host.pid, signal.SIGCONT)


@contextmanager
def write_lock_held(url: str) -> Iterator[None]:
    """Another process's writer holding the store's write lock until the block ends."""
    if url.startswith("postgresql://"):
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(%s)", [WRITE_LOCK])
            try:
                yield
            finally:
                other.execute("SELECT pg_advisory_unlock(%s)", [WRITE_LOCK])
        return
    other = sqlite3.connect(url, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


def states(store: RunStore) -> dict[str, str]:
    return {r["run_id"]: r["state"] for r in store.runs_by_id(None)}


def reasons(store: RunStore) -> str:
    return "\n".join(f"{r['run_id']}: {r['state_reason']}" for r in store.runs_by_id(None))


def wait_for(
    store: RunStore, wanted: dict[str, str], host: HostProcess, what: str = "the runs"
) -> None:
    wait_until(
        lambda: {k: v for k, v in states(store).items() if k in wanted} == wanted,
        HANG_GUARD_S,
        f"{what}: {wanted}",
        lambda: f"{states(store)}\n{reasons(store)}\n{host.log()}",
    )


@pytest.mark.parametrize("outage", ["paused", "write_lock"])
def test_a_host_whose_store_was_away_past_its_lease_keeps_its_runs(
    backend: tuple[str, RunStore], ws: Path, outage: str
) -> None:
    url, store = backend
    dispatch(store, "long", scenario="slow")
    with running_host(ws, interval=LONG_INTERVAL) as host:
        wait_for(store, {"long": "running"}, host)
        before = store.host("h1")
        assert before is not None
        with paused(host, url) if outage == "paused" else write_lock_held(url):
            # Until the store itself says the lease ran out: what another host would see.
            wait_until(lambda: lapsed(store), HANG_GUARD_S, "h1's lease to run out", host.log)
        wait_until(
            lambda: "after it had run out" in host.log() and live(store),
            HANG_GUARD_S,
            "h1 to renew its lease late",
            host.log,
        )
        dispatch(store, "after", scenario="ok")
        wait_for(store, {"long": "review_requested", "after": "review_requested"}, host)
        log = host.log()
        after = store.host("h1")
        assert after is not None and after["incarnation"] == before["incarnation"]
        assert after["recovered_by"] is None and after["stopped_at"] is None
        assert host.proc.poll() is None
    assert host.proc.returncode == 0, log
    assert "host_lost" not in reasons(store)
    assert "lost its lease" not in log and "holds the name" not in log
    assert [h["name"] for h in store.hosts()] == ["h1"]


def test_a_host_recovered_while_paused_stops_those_workers_and_takes_its_name_back(
    backend: tuple[str, RunStore], ws: Path
) -> None:
    url, store = backend
    dispatch(store, "long", scenario="slow")
    with running_host(ws, interval=LONG_INTERVAL) as host:
        wait_for(store, {"long": "running"}, host)
        worker = wait_until(
            lambda: [p for p in workers_of(ws) if is_alive_worker(p, "long")],
            HANG_GUARD_S,
            "long's worker",
        )
        before = store.host("h1")
        assert before is not None
        with paused(host, url):
            wait_until(lambda: lapsed(store), HANG_GUARD_S, "h1's lease to run out", host.log)
            # Another host finds h1 lost and recovers it: the run fails there, once.
            recoverer = Lease(store, "h2", ws.parent / "other", None, 1.0, 30.0)
            recoverer.register()
            assert recoverer.recover_lost() == {"h1": ["long"]}
        wait_until(
            lambda: not is_alive_worker(worker[0], "long"),
            HANG_GUARD_S,
            "h1 to stop the recovered run's worker",
            host.log,
        )
        again = wait_until(
            lambda: (h := store.host("h1")) and h["incarnation"] != before["incarnation"] and h,
            HANG_GUARD_S,
            "h1 to take its name back",
            host.log,
        )
        assert again["recovered_by"] is None and again["stopped_at"] is None
        assert "was recovered by h2" in host.log()
        dispatch(store, "after", scenario="ok")
        wait_for(store, {"after": "review_requested"}, host)
    run = store.get_run("long")
    assert run is not None and run["state"] == "failed"
    assert run["state_reason"].startswith("host_lost: host h1 stopped renewing")
    assert [f["error_code"] for f in store.failures_of("long")] == ["HOST_LOST"]


def test_a_host_whose_name_was_taken_while_paused_stops_and_says_so(
    backend: tuple[str, RunStore], ws: Path
) -> None:
    url, store = backend
    # A worker that never ends by itself: whatever the run's state at the end, the host that
    # lost its name must have left it so, not the worker's own end.
    dispatch(store, "long", scenario="hang")
    host = HostProcess(ws, interval=LONG_INTERVAL, extra_args=["--json"])
    try:
        host.wait_started()
        wait_for(store, {"long": "running"}, host)
        worker = wait_until(
            lambda: [p for p in workers_of(ws) if is_alive_worker(p, "long")],
            HANG_GUARD_S,
            "long's worker",
        )
        with paused(host, url):
            wait_until(lambda: lapsed(store), HANG_GUARD_S, "h1's lease to run out", host.log)
            # Another host starts under the name once the lease is out.
            newcomer = Lease(store, "h1", ws.parent / "elsewhere", None, 0.2, 3600.0,
                             machine="build-02")  # fmt: skip
            newcomer.register()
        code = host.proc.wait(HANG_GUARD_S)
    finally:
        host.stop()
    log = host.log()
    assert code == 1, log
    assert '"code": "host_name_taken"' in log and "another host (pid" in log
    assert not is_alive_worker(worker[0], "long")
    # Nothing recorded for the run by the host that lost the name: it is the newcomer's.
    assert states(store)["long"] == "running"
    row = store.host("h1")
    assert row is not None and row["incarnation"] == newcomer.incarnation
    assert row["stopped_at"] is None and row["machine"] == "build-02"


@pytest.mark.slow
def test_a_host_whose_disk_was_full_past_its_lease_keeps_its_name_and_fails_nothing_for_it(
    small_disk: Path,
) -> None:
    ws = small_disk / "ws"
    ws.mkdir()
    write_config(ws, no_output_s=60)
    with (ws / "jarvis.toml").open("a") as config:
        config.write(LEASE)
    store = SqliteStore(ws / "jarvis.db")
    try:
        dispatch(store, "long", scenario="slow")
        # The host's log lives off the small disk, so that it can say the disk is full.
        with running_host(ws, interval=LONG_INTERVAL, log_dir=small_disk.parent) as host:
            wait_for(store, {"long": "running"}, host)
            before = store.host("h1")
            assert before is not None
            filler = fill(small_disk)
            try:
                wait_until(lambda: lapsed(store), HANG_GUARD_S, "h1's lease to run out",
                           host.log)  # fmt: skip
                wait_until(lambda: "full" in host.log(), HANG_GUARD_S, "the host to meet it",
                           host.log)  # fmt: skip
            finally:
                filler.unlink()
            wait_until(
                lambda: "after it had run out" in host.log() and live(store),
                HANG_GUARD_S,
                "h1 to renew its lease late",
                host.log,
            )
            dispatch(store, "after", scenario="ok")
            wait_for(store, {"after": "review_requested"}, host)
            after = store.host("h1")
            assert after is not None and after["incarnation"] == before["incarnation"]
        # Its worker met the full disk too, and may have ended for it; never for the lease.
        assert "host_lost" not in reasons(store)
        assert "lost its lease" not in host.log()
    finally:
        store.close()
