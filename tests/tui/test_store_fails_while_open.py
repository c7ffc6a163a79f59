"""The store fails while the console is open: a lasting fault ends it, a passing one is said once.

A damaged store fails every read from then on; the console used to raise the same error toast
on every poll (twice a second) and never leave. Now it ends with the store's sentence and exit
code 2, as it would have at start. A fault that passes (a lock held too long, a full disk) is
said once, however many polls meet it, and said again only when it is a different fault.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.store.errors import StoreError
from core.store.faults import fault
from jarvis_tui.feed import StoreFeed
from tests.tui.conftest import build_store
from tests.tui.helpers import make_app, settle, wait_for, wait_for_polls


def _failing(code: int, text: str) -> StoreError:
    """What the store raises when SQLite fails with ``code``: its own error, from SQLite's."""
    error = sqlite3.OperationalError(text)
    error.sqlite_errorcode = code
    translated = fault(error, Path("jarvis.db"))
    translated.__cause__ = error
    return translated


async def test_a_store_damaged_while_open_ends_the_console_with_its_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = build_store(tmp_path / "jarvis.db")
    app = make_app(db, live=True, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.return_code is None

        def damaged(self: StoreFeed, *args: object, **kwargs: object) -> None:
            raise _failing(11, "database disk image is malformed")

        monkeypatch.setattr(StoreFeed, "read", damaged)
        await wait_for(pilot, lambda: app.return_code == 2)
    assert app.return_code == 2
    assert [n for n in app.notes if n[0] == "Store read failed"] == []


async def test_a_passing_fault_is_said_once_and_reading_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = build_store(tmp_path / "jarvis.db")
    app = make_app(db, live=True, poll_interval=0.05)
    real_read = StoreFeed.read
    failing = {"on": True}

    def locked(self: StoreFeed, *args: object, **kwargs: object) -> object:
        if failing["on"]:
            raise _failing(5, "database is locked")
        return real_read(self, *args, **kwargs)  # type: ignore[arg-type]

    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(StoreFeed, "read", locked)
        await wait_for_polls(pilot, 6)
        said = [n for n in app.notes if n[0] == "Store read failed"]
        assert len(said) == 1 and "locked" in said[0][1]
        assert app.return_code is None
        failing["on"] = False
        await wait_for_polls(pilot, 2)
        failing["on"] = True  # a new fault after a good read is said again
        await wait_for_polls(pilot, 3)
        said = [n for n in app.notes if n[0] == "Store read failed"]
        assert len(said) == 2


def test_an_open_that_finds_damage_counts_as_lasting(tmp_path: Path) -> None:
    from core.store.errors import LASTING

    assert StoreError("store_corrupt", "x", tmp_path).code in LASTING
    assert "disk_full" not in LASTING and "store_busy" not in LASTING
