"""The header draws again only the line that reads differently: its read time goes on each
second, and a quiet console's header was a third of its work."""

from __future__ import annotations

from pathlib import Path

from jarvis_tui.widgets.status_header import StatusHeader
from tests.tui.helpers import console_on, settle, wait_for


async def test_the_header_draws_again_only_the_line_that_changed(store_db: Path) -> None:
    async with console_on(store_db, "run-failed", size=(120, 30)) as (app, pilot):
        header = app.main.query_one(StatusHeader)
        drawn: list[int] = []
        render_line = header.render_line
        header.render_line = lambda y: drawn.append(y) or render_line(y)  # type: ignore[method-assign]

        def show(**changes: object) -> None:
            values: dict[str, object] = {
                "host": header.host, "attention": header.attention, "read_at": header.read_at,
                "burn": header.burn, "hosts": header.hosts,
            }  # fmt: skip
            values.update(changes)
            header.show_status(dict(header.counts), **values)  # type: ignore[arg-type]

        show(read_at="23:59:58")
        await wait_for(pilot, lambda: bool(drawn))
        await settle(pilot)
        assert set(drawn) == {0} and header.lines[0].plain.endswith("read 23:59:58")
        drawn.clear()
        show(read_at="23:59:58")  # nothing new: nothing drawn
        await settle(pilot)
        assert drawn == []
        show(attention=header.attention + 1)  # the counts' line alone
        await wait_for(pilot, lambda: bool(drawn))
        await settle(pilot)
        assert set(drawn) == {1} and header.lines[1].plain.startswith("! 5 need a human")
