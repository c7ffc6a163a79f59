"""A live console follows the host's change feed: what workers report reaches its table with
no read of the store's journal or rows, and its poll (an hour here) never has to run."""

from __future__ import annotations

from pathlib import Path

from tests.host.hostkit import dispatch, put_progress, queued_workspace, running_host
from tests.tui.helpers import make_app, wait_for

RUN = "run-fed-1"


async def test_a_console_follows_the_hosts_feed_without_polling(tmp_path: Path) -> None:
    ws, store = queued_workspace(tmp_path, RUN)
    with running_host(ws):
        app = make_app(ws / "jarvis.db", live=True, poll_interval=3600)
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: RUN in app.main.model.rows)
            sync = app.main.store_sync
            await wait_for(pilot, lambda: sync.feed.fed is not None and sync.feed.fed.connected)

            def shown(step: int) -> bool:
                return app.main.model.rows[RUN].get("last_progress_summary") == f"step {step}"

            # The first may come by a read of the store: when the host journaled anything
            # between the console's first read and its joining the feed, the feed cannot say
            # what changed before it joined. From there on the feed says it all.
            put_progress(ws, RUN, 1, "step 1")
            await wait_for(pilot, lambda: shown(1))
            fed_reads = sync.feed.fed_reads
            for seq in range(2, 6):
                put_progress(ws, RUN, seq, f"step {seq}")
            await wait_for(pilot, lambda: shown(5))
            assert sync.feed.fed_reads > fed_reads
            # Another writer's dispatch reaches the table through the feed as well.
            dispatch(store, "run-fed-2")
            await wait_for(pilot, lambda: "run-fed-2" in app.main.model.rows)
            assert app.main.store_sync.counts == {"queued": 2}
            assert sync.feed.opened == 1  # one connection, for the window's pages
    store.close()


async def test_an_idle_console_on_the_feed_reads_it_not_the_store(tmp_path: Path) -> None:
    """Nothing changes: the console still reads each second (its header's read time goes on),
    each read answered by the feed's last tick on the console's own loop: no worker, no
    thread, no read of the store."""
    ws, store = queued_workspace(tmp_path, RUN)
    store.close()
    with running_host(ws):
        app = make_app(ws / "jarvis.db", live=True)  # the console's own poll interval
        async with app.run_test(size=(120, 30)) as pilot:
            sync = app.main.store_sync
            await wait_for(pilot, lambda: sync.feed.fed is not None and sync.feed.fed.fresh)
            await wait_for(pilot, lambda: sync.feed.quiet_answers >= 1)
            answers, reads, opened = sync.feed.quiet_answers, sync.feed.fed_reads, sync.feed.opened
            started: list[object] = []
            read_store = sync.read_store
            sync.read_store = lambda: started.append(1) or read_store()  # type: ignore[method-assign]
            await wait_for(pilot, lambda: sync.feed.quiet_answers >= answers + 2)
            assert (sync.feed.fed_reads, sync.feed.opened) == (reads, opened)
            assert not started  # no read's worker started meanwhile
            assert RUN in app.main.model.rows
