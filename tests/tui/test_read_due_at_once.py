"""A read due at once is armed all the same: Textual's timer divides by its delay, so a timer of
0 s died with ZeroDivisionError the moment it was late by any time at all, and the console
stopped reading the store for good (on a loaded machine the next read is often due at once: the
last one took longer than the gap before the next), then quit with a traceback."""

from __future__ import annotations

from pathlib import Path

from tests.tui.helpers import make_app, settle, wait_for_polls


async def test_a_console_whose_next_read_is_due_at_once_keeps_reading(store_db: Path) -> None:
    app = make_app(store_db, live=True, poll_interval=0.0)
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_for_polls(pilot, 5)
    assert app.return_code in (None, 0)
