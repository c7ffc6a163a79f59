"""One operator action more, registered before anything is built: run as a program by
tests/tui/test_one_more_action.py, it reports as JSON where the action turned up.

Registering must come before the console's and the command line's modules are imported, as an
entry of `core.service.actions` would; so this runs in a fresh interpreter of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from core.lifecycle import RunState
from core.service.action_types import ActionRequest, OperatorAction, Option, Outcome
from core.service.actions import register

CALLS: list[dict[str, Any]] = []


def hold(store: Any, root: Path, request: ActionRequest) -> Outcome:
    """The new action's engine call: it records that it was called, and with what."""
    CALLS.append(
        {
            "run_id": request.run_id,
            "operator": request.operator,
            "version": request.expected_version,
            "options": dict(request.options),
        }
    )
    return Outcome(request, True, store.get_run(request.run_id))


register(OperatorAction(
    "hold", "H", "Hold", "Hold a queued run", "Hold a {stages} run (asks nothing)", hold,
    stages=(RunState.QUEUED,), done="Held", verb="hold", verb_help="hold a queued run",
    options=(Option("why", "--why", metavar="TEXT", help="why it is held"),),
))  # fmt: skip


async def console(db: Path) -> dict[str, Any]:
    from jarvis_tui.commands import JarvisCommands
    from jarvis_tui.modals.help_screen import help_sections
    from jarvis_tui.screens.main_screen import MainScreen
    from jarvis_tui.widgets.key_bar import KeyBar
    from tests.tui.helpers import make_app, select, settle, wait_for

    app = make_app(db)
    found: dict[str, Any] = {}
    async with app.run_test(size=(200, 48)) as pilot:
        await settle(pilot)
        await select(pilot, "run-queued")
        main = app.main
        found["binding"] = [b.id for b in MainScreen.BINDINGS
                            if not isinstance(b, tuple) and b.key == "H"]  # fmt: skip
        found["key_bar"] = app.screen.query_one(KeyBar).keys.get("H")
        provider = JarvisCommands(app.screen)
        found["palette"] = [title for title, help_text, _ in provider._commands(main)
                            if title.startswith("Run: Hold")]  # fmt: skip
        found["help"] = [what for _, keys in help_sections() for key, what in keys if key == "H"]
        await pilot.press("H")
        await wait_for(pilot, lambda: any(note[0] == "Done" for note in app.notes))
        found["note"] = [note[1] for note in app.notes if note[0] == "Done"]
        await select(pilot, "run-done")
        await pilot.pause()
        found["key_bar_on_done"] = app.screen.query_one(KeyBar).keys.get("H")
        found["calls_from_console"] = list(CALLS)
    return found


def command_line(root: Path) -> dict[str, Any]:
    from jarvis_cli import build_parser, run

    CALLS.clear()
    help_text = build_parser().format_help()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run(["hold", "run-queued", "--why", "waiting on a review", "--workspace",
                    str(root), "--operator", "cli-operator", "--json"])  # fmt: skip
    return {"listed": "hold a queued run" in help_text, "code": code,
            "output": json.loads(out.getvalue()), "calls": list(CALLS)}  # fmt: skip


def main() -> None:
    from tests.tui.conftest import build_store

    root = Path(sys.argv[1])
    db = build_store(root / "jarvis.db")
    found = asyncio.run(console(db))
    found["cli"] = command_line(root)
    print(json.dumps(found))


if __name__ == "__main__":
    main()
