"""The host posts notifications to the webhook from a room of its own: a real `jarvis host`
and a real HTTP server on 127.0.0.1. A hung receiver never stalls the host, and a flood of
failures is one summary, not 200 posts. On PostgreSQL, two hosts' notifiers tell each run once
between them."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from core.lifecycle import Action
from core.moves import apply_move
from core.notify.policy import MOST, NotifyPolicy
from core.notify.webhook import WebhookSettings
from core.store.api import RunStore
from core.store.location import open_store
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    LANE,
    connect,
    dispatch,
    rows,
    running_host,
    wait_for_states,
    wait_until,
    write_config,
)
from tests.notify.hook_server import hook_server
from tests.processes import HANG_GUARD_S

#: A lane the hosts below work (the default lane, `LANE`, is paused: its runs stay queued).
WORKED = "jarvis-worker-2"


def _workspace(tmp_path: Path, url: str, **notify: object) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config(ws, lane_concurrency={LANE: 0})
    settings = {"webhook": url, "timeout_s": 60, "retries": 0, **notify}
    lines = "".join(f"{key} = {value!r}\n".replace("'", '"') for key, value in settings.items())
    with (ws / "jarvis.toml").open("a") as config:
        config.write("[notify]\n" + lines)
    return ws


def _fail(store: RunStore, run_ids: list[str]) -> None:
    """Cancel queued runs in one transaction: they enter ``failed`` together."""
    with store.transaction() as tx:
        for run_id in run_ids:
            run = tx.get_run(run_id)
            assert run is not None
            apply_move(tx, run, Action.CANCEL, "test", reason="flooded",
                       changes={"state_reason": "cancelled: flooded"})  # fmt: skip


def _told(texts: list[str]) -> int:
    """How many runs these notices told of: a summary counts them, a single notice is one."""
    return sum(
        int(m.group(1)) if (m := re.search(r"(\d+) runs need you", text)) else 1 for text in texts
    )


def _notifier_started(ws: Path) -> None:
    # The mark is set at the journal's end by the notifier's first look: what moved before it
    # is not news, so the test moves runs only after.
    conn = connect(ws)
    try:
        wait_until(lambda: rows(conn, "SELECT seq FROM notify_marks"), HANG_GUARD_S,
                   "the notifier's first look")  # fmt: skip
    finally:
        conn.close()


def test_a_hung_webhook_never_stalls_the_host(tmp_path: Path) -> None:
    with hook_server(then="hold") as server:
        ws = _workspace(tmp_path, server.url, gap_s=0)
        store = SqliteStore(ws / "jarvis.db")
        conn = connect(ws)
        try:
            dispatch(store, "stuck-1")
            with running_host(ws) as host:
                _notifier_started(ws)
                _fail(store, ["stuck-1"])
                wait_until(lambda: server.posts == 1, HANG_GUARD_S, "the post the receiver holds",
                           host.log)  # fmt: skip
                # While the receiver holds that post, the host takes a new run, starts its
                # worker, reads its progress and completion and gates it.
                dispatch(store, "works-1", lane=WORKED)
                wait_for_states(conn, {"works-1": "review_requested"}, HANG_GUARD_S, host=host)
                assert server.posts == 1 and server.answered == 0
                server.release()
                wait_until(lambda: server.posts == 2, HANG_GUARD_S, "the next notice", host.log)
                first, second = server.texts()
                assert "Run stuck-1: failed: flooded" in first
                assert "Run works-1: review requested" in second
        finally:
            conn.close()
            store.close()
        assert host.proc.returncode == 0


def test_a_failing_webhook_is_tried_again_then_dropped_in_the_hosts_log(tmp_path: Path) -> None:
    with hook_server(then=500) as server:
        ws = _workspace(tmp_path, server.url, retries=2, retry_after_s=0.05)
        store = SqliteStore(ws / "jarvis.db")
        conn = connect(ws)
        try:
            dispatch(store, "refused-1")
            with running_host(ws) as host:
                _notifier_started(ws)
                _fail(store, ["refused-1"])
                wait_until(lambda: "notify: dropped a notice after 3 tries" in host.log(),
                           HANG_GUARD_S, "the notice dropped", host.log)  # fmt: skip
                assert server.posts == 3
                # The host goes on: a new run is taken and worked.
                dispatch(store, "after-1", lane=WORKED)
                wait_for_states(conn, {"after-1": "review_requested"}, HANG_GUARD_S, host=host)
            log = host.log()
        finally:
            conn.close()
            store.close()
    assert "HTTP 500" in log and "s3cr3t" not in log  # the URL's path is its secret
    assert host.proc.returncode == 0


def test_two_hundred_failures_within_a_second_give_one_summary(tmp_path: Path) -> None:
    with hook_server() as server:
        ws = _workspace(tmp_path, server.url, gap_s=1)
        store = SqliteStore(ws / "jarvis.db")
        flood = [f"flood-{n:03d}" for n in range(200)]
        try:
            for run_id in [*flood, "last-1"]:
                dispatch(store, run_id)
            with running_host(ws) as host:
                _notifier_started(ws)
                for part in range(4):  # four commits, as fast as the store takes them
                    _fail(store, flood[part * 50 : (part + 1) * 50])
                wait_until(lambda: server.posts, HANG_GUARD_S, "the summary", host.log)
                # One more failure afterwards: its notice comes once the flood's was told, so
                # every post the flood caused has arrived by then.
                _fail(store, ["last-1"])
                wait_until(lambda: any("last-1" in t for t in server.texts()), HANG_GUARD_S,
                           "the last run's notice", host.log)  # fmt: skip
        finally:
            store.close()
    texts = server.texts()
    assert len(texts) <= MOST
    assert texts[0].startswith("Jarvis: runs need you: 200 runs need you: 200 failed (flood-000")
    assert _told(texts) == 201  # every run told, once


@pytest.mark.usefixtures("pg_server")
def test_hosts_on_one_store_tell_each_run_once(pg_url: str) -> None:
    from core.host.notifier import Notifier

    with hook_server() as server:
        store = open_store(pg_url)
        stopping = threading.Event()
        settings = WebhookSettings(server.url, timeout_s=HANG_GUARD_S, retries=0)
        notifiers = [
            Notifier(pg_url, settings, NotifyPolicy(settle_s=0, gap_s=0, most=10_000), stopping)
            for _ in range(2)
        ]
        runs = [f"pg-{n:03d}" for n in range(120)]
        try:
            for run_id in runs:
                dispatch(store, run_id)
            for notifier in notifiers:
                notifier.start()
            wait_until(lambda: all(n.looks for n in notifiers), HANG_GUARD_S, "a look each")
            for n in range(0, len(runs), 3):
                _fail(store, runs[n : n + 3])  # forty commits, each run its own notice or not
            # A notice names up to three runs and counts the rest: the counts add up to every
            # run once, and no run is named twice.
            wait_until(lambda: _told(server.texts()) >= len(runs), HANG_GUARD_S,
                       "every run told", lambda: "\n".join(server.texts()))  # fmt: skip
        finally:
            stopping.set()
            for notifier in notifiers:
                notifier.join(HANG_GUARD_S)
            store.close()
    texts = server.texts()
    assert _told(texts) == len(runs)
    named = [name for text in texts for name in re.findall(r"pg-\d+", text)]
    assert len(named) == len(set(named)), "a run told twice"
